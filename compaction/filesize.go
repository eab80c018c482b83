package compaction

import (
	"math"

	"github.com/monbandb/monban/internal/manifest"
)

// FileSize returns the size at which a compaction into level splits its
// outputs: TargetFileSize into the base level (and into L0 or a level
// left above the base), times FileSizeMultiplier for each level below
// the base. The levels below hold most of the data, so tables of one size
// everywhere make the table count, and the table cache a DB needs, grow
// with the data (docs/compaction.md has the figures); growing per level
// is Pebble's default and RocksDB's target_file_size_multiplier.
// Measured relative to the base rather than to L1, tables grow only as
// the tree deepens: a small DB, whose base is L6, keeps TargetFileSize.
func (o Options) FileSize(v *manifest.Version, level int) int64 {
	_, base := o.Targets(v)
	size := o.TargetFileSize
	mult := int64(max(o.FileSizeMultiplier, 1))
	for l := base; l < level && size <= math.MaxInt64/mult; l++ {
		size *= mult
	}
	return size
}
