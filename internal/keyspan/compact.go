package keyspan

import (
	"slices"

	"github.com/monbandb/monban/internal/base"
)

// Compact drops the sequence numbers no reader needs, by the rules of
// compaction's invariant 1 and 2 applied to tombstones. snapshots are the
// open snapshots, ascending; they cut sequence numbers into stripes (seq
// lies in the stripe of the first snapshot >= seq, or in the top stripe
// above them all, which current reads see). In each span:
//
//  1. Within a stripe only the newest seq is kept. Every reader sees either
//     all of a stripe or none of it, and Covering answers the newest
//     visible seq, so an older seq of the same stripe never decides a
//     read.
//  2. If bottom (no table below the output holds any key of the span), the
//     seq of the lowest stripe (at or below snapshots[0]; every seq when
//     there are no snapshots) goes too. It hides only point versions older
//     than itself, hence in its own stripe, so no reader sees any of them:
//     the compaction must drop them (they are shadowed, compaction's
//     invariant 1; this package never sees point keys), and then nothing
//     is left for the tombstone to hide.
//
// A span with no seq left disappears. The contract the tests check: for
// every key, at every snapshot and for current reads, Covering is
// unchanged, except that under rule 2 it may report nothing where the old
// answer lay in the lowest stripe. Readers at other sequence numbers are
// not served, as in compaction.Iter.
func Compact(spans Spans, snapshots []base.SeqNum, bottom bool) Spans {
	var out []Span
	for _, sp := range spans.spans {
		var kept []base.SeqNum
		prev := -1
		for _, seq := range sp.Seqs { // newest first: the first seen of a stripe is its newest
			stripe, _ := slices.BinarySearch(snapshots, seq)
			if stripe == prev {
				continue // rule 1
			}
			if bottom && stripe == 0 {
				break // rule 2; the lowest stripe comes last
			}
			prev = stripe
			kept = append(kept, seq)
		}
		if len(kept) > 0 {
			out = appendSpan(out, Span{Start: sp.Start, End: sp.End, Seqs: kept})
		}
	}
	return newSpans(out)
}
