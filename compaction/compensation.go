package compaction

import (
	"bytes"
	"iter"

	"github.com/monbandb/monban/internal/keyspan"
	"github.com/monbandb/monban/internal/manifest"
)

// Compensation for range tombstones. A table holding a DeleteRange over
// most of the DB is a few hundred bytes, and by its size alone its level
// would never be due: the data it deletes would stay on disk until a
// manual compaction. So each table with range tombstones is weighed, as
// in RocksDB and Pebble (RangeDeletionsBytesEstimate), by the bytes of
// the levels below it that its spans cover (FileMetadata.RangeDelBytes),
// and the picker adds them to its size: in its level's score, and in the
// choice of the table to compact (pickMinOverlap).

// PartialBytes estimates the bytes of table f holding user keys in
// [lo, hi), a range that cuts f's own; the DB answers from the table's
// index (sstable.Reader.EstimateBytes).
type PartialBytes func(f *manifest.FileMetadata, lo, hi []byte) uint64

// RangeDelBytes estimates the bytes of v's tables in the levels below
// level that spans cover: a table inside one run of abutting spans counts
// its whole size, one that a run cuts what partial says of the cut. For
// L0 that is L1 and deeper; the older L0 tables are left out, as an L0
// compaction takes them with the table anyway.
func RangeDelBytes(v *manifest.Version, level int, spans keyspan.Spans, partial PartialBytes) uint64 {
	var n uint64
	for start, end := range runs(spans) {
		for below := level + 1; below < manifest.NumLevels; below++ {
			for _, f := range v.Overlaps(below, start, end) {
				switch {
				case bytes.Compare(f.Smallest.UserKey, end) >= 0:
					// Overlaps counts end in; the run does not.
				case bytes.Compare(start, f.Smallest.UserKey) <= 0 && bytes.Compare(f.Largest.UserKey, end) < 0:
					n += f.Size
				default:
					n += partial(f, start, end)
				}
			}
		}
	}
	return n
}

// runs yields spans' extents with abutting spans joined, so that a table
// covered by two fragments of different seqs counts whole, and is asked
// of once.
func runs(spans keyspan.Spans) iter.Seq2[[]byte, []byte] {
	return func(yield func(start, end []byte) bool) {
		var start, end []byte
		for i := range spans.Len() {
			sp := spans.At(i)
			if i > 0 && bytes.Equal(end, sp.Start) {
				end = sp.End
				continue
			}
			if i > 0 && !yield(start, end) {
				return
			}
			start, end = sp.Start, sp.End
		}
		if spans.Len() > 0 {
			yield(start, end)
		}
	}
}

// EstimateRangeDels estimates RangeDelBytes for each table of v whose
// range tombstones are known and that has not been estimated: those a
// flush or compaction just wrote, and those a read has opened since Open.
// It reports whether any estimate is above 0: the picker may then find
// a level due. The DB calls it after every flush and compaction installs
// a Version, off the commit path, and Open reads no table for it: a table
// never opened since Open weighs its size alone until then.
func EstimateRangeDels(v *manifest.Version, partial PartialBytes) (weighed bool) {
	for level, files := range v.Levels {
		for _, f := range files {
			if f.RangeDelsEstimated() {
				continue
			}
			if spans, known := f.RangeDels(); known {
				n := RangeDelBytes(v, level, spans, partial)
				f.SetRangeDelBytes(n)
				weighed = weighed || n > 0
			}
		}
	}
	return weighed
}
