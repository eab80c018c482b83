package compaction

import (
	"bytes"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/keyspan"
	"github.com/monbandb/monban/internal/manifest"
)

// Delete-only compactions. A DeleteRange over a run of tables — a raft
// log truncated from the front, a dropped prefix — would otherwise reach
// them the ordinary way: a merge that reads every block of every table
// under the tombstone, drops each entry as shadowed and writes nothing.
// When nothing in a table can be read by anyone, the manifest can drop it
// alone, as Pebble's delete-only compactions do. A table f may go by a
// version edit, unread, when
//
//  1. every user key of [f.Smallest, f.Largest], both bounds included, is
//     covered by a range tombstone above f's LargestSeq — which counts
//     f's own range tombstones too (sstable properties), so f's spans, and
//     the keys below them they hide, are covered by newer ones;
//  2. that tombstone is in the same snapshot stripe as f's SmallestSeq:
//     no open snapshot s has f.SmallestSeq <= s < the tombstone's seq, so
//     no snapshot sees any entry of f without seeing the tombstone (a
//     snapshot taken later is at or above the tombstone, which is in a
//     table, published before its flush);
//  3. the tombstone sits where every read meets it before f: in a table
//     of a higher level, or of L0 when f is in L0 (L0 is read newest
//     first, by LargestSeq, and the tombstone's table's LargestSeq is at
//     least its seq, above f's). A read at or above the tombstone's seq
//     then finds every key of f deleted, and one below f's SmallestSeq
//     sees nothing of f;
//  4. the tombstone is in a table, not a memtable: it is in the manifest
//     before the edit that drops f, so no crash can keep the edit and lose
//     the tombstone.
//
// Tombstones cut at table boundaries still cover f when they abut: the
// spans of every table above f are merged (keyspan.Merge) before f's
// range is checked, so a tombstone split over two tables of a level
// covers a table below that spans their boundary. A table whose range
// tombstones are unknown (no reader opened since Open) lends none; a
// table only partly covered stays, for an ordinary merge to cut.
//
// The file goes as any compaction's inputs do: once no live Version
// holds it (lsm/deleter.go), so an iterator or Get still reading it keeps
// it on disk. The tombstones stay: what they cover lower down, and their
// own drop at the bottom, are the ordinary merges' work.

// verdict is what PickDeleteOnly finds of one table.
type verdict uint8

const (
	kept     verdict = iota // a key of the table is not covered by a newer tombstone
	covered                 // deletable now (conditions 1 and 2)
	snapshot                // covered, but a snapshot between the table and the tombstone sees it
)

// Waiting is where the open snapshots that alone keep tables from a
// delete-only compaction lie: every such snapshot s has Lo <= s < Hi. The
// zero value holds none.
type Waiting struct{ Lo, Hi base.SeqNum }

// Holds reports whether closing the snapshot at seq may let a table go.
func (w Waiting) Holds(seq base.SeqNum) bool { return w.Lo <= seq && seq < w.Hi }

// add widens w to take in [lo, hi).
func (w *Waiting) add(lo, hi base.SeqNum) {
	if w.Hi == 0 {
		*w = Waiting{lo, hi}
		return
	}
	w.Lo, w.Hi = min(w.Lo, lo), max(w.Hi, hi)
}

// PickDeleteOnly returns a delete-only compaction of the free tables of
// one level that the range tombstones of the tables above it delete
// wholly (the conditions above), or nil. waiting bounds the snapshots
// that alone keep some table from going (of the levels it looked at): the
// caller asks again when one of those closes, as no flush or compaction
// may come to.
// snapshots returns the open snapshots' seqs, ascending; it is called only
// when some table holds range tombstones, so a DB that has none pays a
// load per table. Levels are tried top down; the compaction's Level and
// OutputLevel are both the tables' level, and it writes nothing.
func PickDeleteOnly(v *manifest.Version, snapshots func() []base.SeqNum, inProgress []*Compaction) (c *Compaction, waiting Waiting) {
	var above []keyspan.Spans
	add := func(files []*manifest.FileMetadata) {
		for _, f := range files {
			if s, known := f.RangeDels(); known && s.Len() > 0 {
				above = append(above, s)
			}
		}
	}
	// An L0 table may be deleted by a newer L0 table's tombstones (3): its
	// own spans, merged in too, are not above its LargestSeq, so they
	// never count as covering it.
	add(v.Levels[0])
	var spans keyspan.Spans
	var seqs []base.SeqNum
	merged := 0
	for level := range manifest.NumLevels {
		if level > 1 {
			add(v.Levels[level-1])
		}
		if len(above) == 0 {
			continue
		}
		if merged == 0 {
			seqs = snapshots()
		}
		if merged != len(above) {
			spans, merged = keyspan.Merge(above...), len(above)
		}
		var dropped []*manifest.FileMetadata
		for _, f := range v.Levels[level] {
			if held(f, inProgress) {
				continue
			}
			switch got, newest := deletable(spans, f, seqs); got {
			case covered:
				dropped = append(dropped, f)
			case snapshot:
				waiting.add(f.SmallestSeq, newest)
			}
		}
		if len(dropped) == 0 {
			continue
		}
		c = &Compaction{Level: level, OutputLevel: level, DeleteOnly: true}
		c.Inputs[0] = dropped
		if Conflicts(c, inProgress) {
			continue
		}
		return c, waiting
	}
	return nil, waiting
}

// deletable checks conditions 1 and 2 for f against spans, the merged
// tombstones of every table a read meets before f. newest is the newest
// of the tombstones it relied on: a snapshot below it and at or above
// f.SmallestSeq is one that keeps f.
func deletable(spans keyspan.Spans, f *manifest.FileMetadata, snapshots []base.SeqNum) (v verdict, newest base.SeqNum) {
	lo, hi := f.Smallest.UserKey, f.Largest.UserKey
	i := spans.Seek(lo)
	if i == spans.Len() || bytes.Compare(spans.At(i).Start, lo) > 0 {
		return kept, 0
	}
	stripe := stripeOf(snapshots, f.SmallestSeq)
	v = covered
	for ; i < spans.Len(); i++ {
		sp := spans.At(i)
		// The oldest seq above f's newest entry: if a snapshot separates
		// it from f, every newer one is separated too.
		var t base.SeqNum
		for _, seq := range sp.Seqs {
			if seq <= f.LargestSeq {
				break
			}
			t = seq
		}
		if t == 0 {
			return kept, 0
		}
		if stripeOf(snapshots, t) != stripe {
			v = snapshot
		}
		newest = max(newest, t)
		if bytes.Compare(hi, sp.End) < 0 {
			return v, newest
		}
		if i+1 < spans.Len() && !bytes.Equal(spans.At(i+1).Start, sp.End) {
			return kept, 0 // a gap: the keys between two spans are not covered
		}
	}
	return kept, 0
}

// stripeOf returns the stripe of seq among snapshots (ascending): the
// index of the first snapshot at or above it, len(snapshots) for current
// reads only. Two seqs are seen apart by some snapshot exactly when their
// stripes differ.
func stripeOf(snapshots []base.SeqNum, seq base.SeqNum) int {
	lo, hi := 0, len(snapshots)
	for lo < hi {
		mid := (lo + hi) / 2
		if snapshots[mid] < seq {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}
