package compaction

import (
	"math"

	"github.com/monbandb/monban/internal/manifest"
)

// FileSize returns the size at which a compaction into level splits its
// outputs: TargetFileSize into the base level (and into L0 or a level
// left above the base), times FileSizeMultiplier for each level below
// the base. The levels below hold most of the data — the last about as
// much as all the others together — so tables of one size everywhere make
// the table count grow with the data: a 50M-key tree of 100-byte values
// in 4 MiB tables had 1,543 of them, 1,360 in L6, past a table cache of
// 1,000, and every random Get reopened one. Doubling per level (Pebble's
// default, RocksDB's target_file_size_multiplier) makes the L6 tables of
// a tree whose base is L4 four times the base's, and the count a quarter.
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
