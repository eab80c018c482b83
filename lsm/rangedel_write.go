package lsm

import (
	"bytes"

	"github.com/monbandb/monban/compaction"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/keyspan"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/sstable"
)

// Range tombstones on the write side. A flush writes its memtable's into
// its table; a compaction merges its inputs' (keyspan.Merge), keeps per
// snapshot stripe only the newest seq of each span (keyspan.Compact), and
// gives each output table the part of them over its own key range
// (keyspan.Truncate), so that no span is lost between two outputs and
// every table's bounds cover its spans:
//
//   - table i of n takes the spans in [succ(last key of table i-1),
//     succ(last key of table i)), the first from the empty key, the last
//     to no bound at all. succ(k) = k+"\x00" is the smallest key above k,
//     so table i's spans end exactly where its keys do, and table i+1's
//     begin above them: the tables' bounds do not overlap, as a level's
//     must (manifest, invariant 2). A span in the gap between two tables'
//     point keys goes to the later one.
//   - a table's Smallest is the lower of its first point key and its first
//     span's Start; its Largest the higher of its last point key and the
//     last key its last span covers: End's predecessor when End = succ(k),
//     as the cuts above make it, and otherwise End itself, which only
//     makes the range one key wider than it is (keyspan's caveat), so
//     that every overlap check errs on the side of yes.
//   - spans and no point entry still make a table (a DeleteRange alone).

// succ returns the smallest user key above k.
func succ(k []byte) []byte { return append(append(make([]byte, 0, len(k)+1), k...), 0) }

// lastCovered returns the largest user key a span ending at end may
// cover, or end itself where that key has no finite name (see above).
func lastCovered(end []byte) []byte {
	if n := len(end); n > 0 && end[n-1] == 0 {
		return end[:n-1]
	}
	return end
}

// Bound trailers of a table's extent taken from its spans: the highest
// sorts before every version of Start, the lowest (seq 0, which no write
// has) after every version of the last covered key. Both are of point
// kinds, as a manifest bound must be.
var (
	spanSmallestTrailer = base.MakeTrailer(base.MaxSeqNum, base.KindSet)
	spanLargestTrailer  = base.MakeTrailer(0, base.KindDelete)
)

// tableMeta is the manifest's record of a table with properties p and
// range tombstones spans.
func tableMeta(num uint64, p sstable.Properties, spans keyspan.Spans) *manifest.FileMetadata {
	m := &manifest.FileMetadata{
		FileNum: num, Size: p.FileSize,
		Smallest: p.Smallest, Largest: p.Largest,
		SmallestSeq: p.SmallestSeq, LargestSeq: p.LargestSeq,
		NumEntries: p.NumEntries, NumDeletions: p.NumDeletions,
		TableID: p.TableID,
	}
	if start, end, ok := spans.Bounds(); ok {
		lo := base.InternalKey{UserKey: start, Trailer: spanSmallestTrailer}
		hi := base.InternalKey{UserKey: bytes.Clone(lastCovered(end)), Trailer: spanLargestTrailer}
		if p.NumEntries == 0 || base.Compare(lo, m.Smallest) < 0 {
			m.Smallest = base.InternalKey{UserKey: bytes.Clone(start), Trailer: lo.Trailer}
		}
		if p.NumEntries == 0 || base.Compare(hi, m.Largest) > 0 {
			m.Largest = hi
		}
	}
	m.SetRangeDels(spans)
	return m
}

// outputSpans hands out the spans of a flush's or compaction's output
// table by table, cut as described above.
type outputSpans struct {
	spans keyspan.Spans
	lo    []byte // where the next table's spans begin
}

// next returns the spans of a table whose last point key is last; final
// for the last table, which takes every span left.
func (o *outputSpans) next(last []byte, final bool) keyspan.Spans {
	if o.spans.Len() == 0 {
		return keyspan.Spans{}
	}
	var hi []byte
	if !final {
		hi = succ(last)
	}
	out := keyspan.Truncate(o.spans, o.lo, hi)
	o.lo = hi
	return out
}

// compactionRangeDels returns the range tombstones of every input table
// of c, merged.
func (d *DB) compactionRangeDels(inputs [2][]*manifest.FileMetadata) (keyspan.Spans, error) {
	var all []keyspan.Spans
	for _, files := range inputs {
		for _, f := range files {
			s, err := d.tableRangeDels(f)
			if err != nil {
				return keyspan.Spans{}, err
			}
			all = append(all, s)
		}
	}
	return keyspan.Merge(all...), nil
}

// spansAtBottom reports whether no table below level holds a key that
// spans cover, so that a compaction into level may drop the tombstones
// that hide nothing but what it drops itself (keyspan.Compact, rule 2):
// the key-range proof of point tombstones (tombstoneElider), extended to
// the spans' whole extent.
func spansAtBottom(v *manifest.Version, level int, spans keyspan.Spans) bool {
	start, end, ok := spans.Bounds()
	if !ok {
		return false
	}
	for below := level + 1; below < NumLevels; below++ {
		if len(v.Overlaps(below, start, lastCovered(end))) > 0 {
			return false
		}
	}
	return true
}

// estimateRangeDels weighs the range tombstones of the current version's
// tables that have not been weighed (compaction.EstimateRangeDels), so
// that the picker sees the bytes they would reclaim, and reports whether
// any weighed something. It runs after a flush or compaction has
// installed its read state, and at Open, never on a write's path and
// without d.mu (a partly covered table's index may be read); a DB that
// never had a range tombstone only loads an atomic per table.
func (d *DB) estimateRangeDels() bool {
	v := d.vs.Current()
	defer v.Unref()
	return compaction.EstimateRangeDels(v, d.partialBytes)
}

// partialBytes is compaction.PartialBytes from f's index. A table that
// cannot be read counts nothing: the read or compaction that meets it
// reports the error.
func (d *DB) partialBytes(f *manifest.FileMetadata, lo, hi []byte) uint64 {
	r, release, err := d.table(f)
	if err != nil {
		return 0
	}
	defer release()
	n, _ := r.EstimateBytes(lo, hi)
	return n
}
