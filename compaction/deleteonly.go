package compaction

import (
	"github.com/monbandb/monban/internal/base"
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
// Tombstones cut at table boundaries still cover f when they abut: f's
// range is walked over the spans of every table above it at once, from
// one span boundary to the next (cover.go), so a tombstone split over two
// tables of a level covers a table below that spans their boundary. A
// table whose range tombstones are unknown (no reader opened since Open)
// lends none; a table only partly covered stays, for an ordinary merge to
// cut.
//
// The file goes as any compaction's inputs do: once no live Version
// holds it (lsm/deleter.go), so an iterator or Get still reading it keeps
// it on disk. The tombstones stay: what they cover lower down, and their
// own drop at the bottom, are the ordinary merges' work.

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
// snapshots returns the open snapshots' seqs, ascending; it is called at
// most once, when some table's whole range is covered. Levels are tried
// top down; the compaction's Level and OutputLevel are both the tables'
// level, and it writes nothing.
//
// It runs after every flush and compaction, so it never merges the
// tombstones above a level: each table is looked up among the tables
// above whose spans reach its range (cover.go), a few binary searches
// however many tombstones those hold, and only a table covered at both
// ends has its range walked. A DB without range tombstones pays a load
// per table.
func PickDeleteOnly(v *manifest.Version, snapshots func() []base.SeqNum, inProgress []*Compaction) (c *Compaction, waiting Waiting) {
	// An L0 table may be deleted by a newer L0 table's tombstones (3): its
	// own spans, among them, are not above its LargestSeq, so they never
	// count as covering it.
	a := above{tiers: []tier{newTier(v.Levels[0])}}
	var seqs []base.SeqNum
	asked := false
	for level := range manifest.NumLevels {
		if level > 1 {
			a.tiers = append(a.tiers, newTier(v.Levels[level-1]))
		}
		if a.empty() {
			continue
		}
		var dropped []*manifest.FileMetadata
		for _, f := range v.Levels[level] {
			newest, ok := a.cover(f)
			if !ok || held(f, inProgress) {
				continue
			}
			if !asked {
				seqs, asked = snapshots(), true
			}
			// Condition 2. Every tombstone f relies on lies above
			// f.SmallestSeq, and stripes rise with seqs: all of them share
			// f's stripe exactly when the newest does.
			if stripeOf(seqs, newest) == stripeOf(seqs, f.SmallestSeq) {
				dropped = append(dropped, f)
			} else {
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
