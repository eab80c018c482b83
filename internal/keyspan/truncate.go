package keyspan

import (
	"bytes"
	"slices"
)

// Truncate returns the part of spans inside the user-key range [lo, hi):
// spans outside it are dropped and spans crossing a bound are clipped to
// it. hi == nil means no upper bound; an empty range (lo >= hi) gives no
// spans. A compaction cuts its output tombstones this way at each output
// table's boundaries, so that every table carries exactly the tombstones
// over its own key range.
//
// The result shares keys and Seqs with spans, and lo and hi themselves
// where a span is clipped to them.
func Truncate(spans Spans, lo, hi []byte) Spans {
	i, j := spans.Seek(lo), len(spans.spans)
	if hi != nil {
		if bytes.Compare(lo, hi) >= 0 {
			return Spans{}
		}
		// The first span starting at or after hi is the first outside.
		j, _ = slices.BinarySearchFunc(spans.spans, hi, func(sp Span, k []byte) int { return bytes.Compare(sp.Start, k) })
	}
	if i >= j {
		return Spans{}
	}
	out := slices.Clone(spans.spans[i:j])
	if bytes.Compare(out[0].Start, lo) < 0 {
		out[0].Start = lo
	}
	if last := &out[len(out)-1]; hi != nil && bytes.Compare(last.End, hi) > 0 {
		last.End = hi
	}
	return newSpans(out)
}
