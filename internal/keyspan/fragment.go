package keyspan

import (
	"bytes"
	"cmp"
	"slices"

	"github.com/monbandb/monban/internal/base"
)

// Fragment turns raw tombstones, in any order and overlapping in any way,
// into Spans: at every user key, the span containing it lists the sequence
// numbers of exactly the tombstones covering that key. Tombstones with
// Start >= End cover nothing and leave no trace. The result shares the
// tombstones' keys; ts itself is not modified.
//
// The output can be quadratic in len(ts): n tombstones nested inside each
// other give 2n-1 spans holding up to n sequence numbers each.
func Fragment(ts []Tombstone) Spans {
	// 1. Boundaries: every Start and End, sorted and unique. Between two
	// consecutive boundaries no tombstone begins or ends, so the set of
	// tombstones covering a key is the same throughout.
	var bounds [][]byte
	var live []Tombstone
	for _, t := range ts {
		if bytes.Compare(t.Start, t.End) < 0 {
			live = append(live, t)
			bounds = append(bounds, t.Start, t.End)
		}
	}
	slices.SortFunc(bounds, bytes.Compare)
	bounds = slices.CompactFunc(bounds, bytes.Equal)
	slices.SortFunc(live, func(a, b Tombstone) int { return bytes.Compare(a.Start, b.Start) })

	// 2. Sweep the boundaries left to right. At each one, the tombstones
	// starting there join active and those ending there leave it; what
	// remains covers the whole gap up to the next boundary.
	var out []Span
	var active []Tombstone
	for i := 0; i+1 < len(bounds); i++ {
		lo, hi := bounds[i], bounds[i+1]
		for len(live) > 0 && bytes.Equal(live[0].Start, lo) {
			active = append(active, live[0])
			live = live[1:]
		}
		active = slices.DeleteFunc(active, func(t Tombstone) bool { return bytes.Compare(t.End, lo) <= 0 })
		if len(active) == 0 {
			continue // a gap between tombstones: no span (invariant 2)
		}
		seqs := make([]base.SeqNum, len(active))
		for j, t := range active {
			seqs[j] = t.Seq
		}
		slices.SortFunc(seqs, func(a, b base.SeqNum) int { return cmp.Compare(b, a) })
		out = appendSpan(out, Span{Start: lo, End: hi, Seqs: slices.Compact(seqs)})
	}
	return newSpans(out)
}
