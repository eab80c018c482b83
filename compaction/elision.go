package compaction

import (
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/keyspan"
	"github.com/monbandb/monban/internal/manifest"
)

// Elision-only compactions. A merge into the last level drops every
// tombstone, range tombstone and shadowed version no open snapshot can
// see; one that a snapshot could see stays, in the last-level table the
// merge wrote, with the data it hides. When the snapshot closes, nothing
// is due: the level's size did not change, so no score names it, and the
// space stays taken until a manual Compact. So once every open snapshot is
// at or above all of f's sequence numbers — f lies in the lowest snapshot
// stripe, the one a merge at the bottom drops every tombstone of (point
// ones by compaction.Iter, range ones by keyspan.Compact) — a last-level
// table f that holds tombstones is rewritten alone (Rewrite), as Pebble's
// elision-only compactions do. Its output holds no tombstone, so it is
// never picked again; were a rewrite to keep one, the table would be
// picked again at once, forever, so the rule is exactly the merge's, and
// f's sequence numbers here are its range tombstones' too (seqRange). A
// table whose range tombstones are unknown (no reader opened since Open)
// is picked for its point tombstones only; older versions without a
// tombstone over them are left to a manual Compact (lsm.DB.CompactRange),
// for the manifest does not count them.

// PickElisionOnly returns a rewrite of a last-level table holding
// tombstones that every open snapshot is at or above, the table with most
// tombstones first, or nil; waiting bounds the snapshots that alone keep
// such tables from one.
func PickElisionOnly(v *manifest.Version, snapshots func() []base.SeqNum, inProgress []*Compaction) (c *Compaction, waiting Waiting) {
	last := manifest.NumLevels - 1
	var seqs []base.SeqNum
	asked := false
	var best *manifest.FileMetadata
	for _, f := range v.Levels[last] {
		spans, _ := f.RangeDels()
		if (f.NumDeletions == 0 && spans.Len() == 0) || held(f, inProgress) {
			continue
		}
		if !asked {
			seqs, asked = snapshots(), true
		}
		if KeptBySnapshot(f, seqs) {
			_, hi := seqRange(f, spans)
			waiting.add(0, hi) // every snapshot below hi keeps f
			continue
		}
		if best == nil || tombstones(f) > tombstones(best) {
			best = f
		}
	}
	if best == nil {
		return nil, waiting
	}
	if c = Rewrite(last, best); Conflicts(c, inProgress) {
		return nil, waiting
	}
	return c, waiting
}

// KeptBySnapshot reports whether an open snapshot, of the ascending
// snapshots, is below the newest of f's entries and range tombstones: a
// rewrite of f alone may then have to keep what it holds, and it waits
// until no such snapshot is open.
func KeptBySnapshot(f *manifest.FileMetadata, snapshots []base.SeqNum) bool {
	spans, _ := f.RangeDels()
	_, hi := seqRange(f, spans)
	return stripeOf(snapshots, hi) != 0
}

// seqRange bounds the sequence numbers of f's entries and range
// tombstones: the manifest's SmallestSeq and LargestSeq count its point
// entries only, and a snapshot between a range tombstone and them would
// keep the tombstone through every rewrite.
func seqRange(f *manifest.FileMetadata, spans keyspan.Spans) (lo, hi base.SeqNum) {
	lo, hi = f.SmallestSeq, f.LargestSeq
	if f.NumEntries == 0 {
		lo, hi = base.MaxSeqNum, 0
	}
	oldest, newest := spans.SeqBounds()
	return min(lo, oldest), max(hi, newest)
}

// tombstones counts f's point tombstones and, when known, its range
// tombstones' spans.
func tombstones(f *manifest.FileMetadata) uint64 {
	spans, _ := f.RangeDels()
	return f.NumDeletions + uint64(spans.Len())
}

// Union returns the smallest Waiting that holds every snapshot w or o
// holds.
func (w Waiting) Union(o Waiting) Waiting {
	if o.Hi != 0 {
		w.add(o.Lo, o.Hi)
	}
	return w
}
