package keyspan

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/monbandb/monban/internal/base"
)

// formatVersion is the first byte of an encoding (package doc, "Format");
// it changes whenever the encoding does.
const formatVersion = 1

// minSpanLen is the fewest bytes a span can take: an abutting start (1),
// an end length (1) and at least one byte of end (no End is empty, since
// it is above its Start), a seq count (1) and one seq (1). Decode bounds
// the span count by it before allocating.
const minSpanLen = 5

// Encode appends the encoding of spans to dst and returns the extended
// slice.
func Encode(dst []byte, spans Spans) []byte {
	dst = append(dst, formatVersion)
	dst = binary.AppendUvarint(dst, uint64(len(spans.spans)))
	var prevEnd []byte
	for _, sp := range spans.spans {
		if bytes.Equal(sp.Start, prevEnd) {
			dst = append(dst, 0) // abuts the previous span; for span 0, the empty key
		} else {
			dst = appendBytes(dst, sp.Start)
		}
		dst = appendBytes(dst, sp.End)
		dst = binary.AppendUvarint(dst, uint64(len(sp.Seqs)))
		dst = binary.AppendUvarint(dst, uint64(sp.Seqs[0]))
		for j := 1; j < len(sp.Seqs); j++ {
			dst = binary.AppendUvarint(dst, uint64(sp.Seqs[j-1]-sp.Seqs[j]))
		}
		prevEnd = sp.End
	}
	return dst
}

func appendBytes(dst, b []byte) []byte {
	return append(binary.AppendUvarint(dst, uint64(len(b))), b...)
}

// Decode parses an encoding made by Encode. It accepts only bytes that
// describe valid Spans (invariants 1–3, and every seq a write's:
// 1 <= seq <= base.MaxSeqNum); anything else is an error wrapping
// base.ErrCorruption. It never panics, and allocates O(len(b)) whatever
// the bytes claim: one copy of b, which the result's keys alias, plus the
// span and seq slices, each bounded by the bytes left to fill it before it
// is made.
func Decode(b []byte) (Spans, error) {
	d := decoder{rest: bytes.Clone(b), span: -1}
	if v := d.byte(); d.err == nil && v != formatVersion {
		d.fail("unknown format version %d", v)
	}
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.rest)/minSpanLen) {
		d.fail("%d spans cannot fit in %d bytes", n, len(d.rest))
	}
	if d.err != nil {
		return Spans{}, d.err
	}
	spans := make([]Span, n)
	var prevEnd []byte
	for i := range spans {
		d.span = i
		if spans[i] = d.decodeSpan(prevEnd); d.err != nil {
			return Spans{}, d.err
		}
		prevEnd = spans[i].End
	}
	if len(d.rest) > 0 {
		d.fail("%d bytes after the last span", len(d.rest))
		return Spans{}, d.err
	}
	return newSpans(spans), nil
}

// decoder consumes rest from the front. The first failure sticks in err;
// every read after it returns zero.
type decoder struct {
	rest []byte
	span int // the span being decoded, -1 in the header
	err  error
}

func (d *decoder) fail(format string, args ...any) {
	if d.err != nil {
		return
	}
	if d.span >= 0 {
		format, args = "span %d: "+format, append([]any{d.span}, args...)
	}
	d.err = fmt.Errorf("keyspan: "+format+": %w", append(args, base.ErrCorruption)...)
}

func (d *decoder) byte() byte {
	if len(d.rest) == 0 {
		d.fail("truncated")
	}
	if d.err != nil {
		return 0
	}
	c := d.rest[0]
	d.rest = d.rest[1:]
	return c
}

func (d *decoder) uvarint() uint64 {
	v, k := binary.Uvarint(d.rest)
	if k <= 0 {
		d.fail("bad or truncated varint")
	}
	if d.err != nil {
		return 0
	}
	d.rest = d.rest[k:]
	return v
}

// lengthPrefixed returns the next key, aliasing rest.
func (d *decoder) lengthPrefixed() []byte {
	l := d.uvarint()
	if l > uint64(len(d.rest)) {
		d.fail("length %d overruns the %d bytes left", l, len(d.rest))
	}
	if d.err != nil {
		return nil
	}
	b := d.rest[:l:l]
	d.rest = d.rest[l:]
	return b
}

// decodeSpan decodes the next span, which must start at or after prevEnd,
// the End of the span before it (nil for span 0).
func (d *decoder) decodeSpan(prevEnd []byte) Span {
	var sp Span
	sp.Start = d.lengthPrefixed()
	if len(sp.Start) == 0 {
		// Only span 0 can start at the empty key: any later Start is at
		// least the previous End, which is above the empty key. So an
		// empty Start says "abuts the previous span", and for span 0,
		// whose prevEnd is nil, still reads as the empty key.
		sp.Start = prevEnd
	}
	sp.End = d.lengthPrefixed()
	n := d.uvarint()
	switch {
	case d.err != nil:
	case bytes.Compare(sp.Start, prevEnd) < 0:
		d.fail("start %q overlaps the previous span, which ends at %q", sp.Start, prevEnd)
	case bytes.Compare(sp.Start, sp.End) >= 0:
		d.fail("start %q is not below end %q", sp.Start, sp.End)
	case n == 0 || n > uint64(len(d.rest)):
		d.fail("%d seqs in %d bytes", n, len(d.rest))
	}
	if d.err != nil {
		return Span{}
	}
	sp.Seqs = make([]base.SeqNum, n)
	seq := d.uvarint()
	if seq == 0 || seq > uint64(base.MaxSeqNum) {
		d.fail("seq %d is not a write's", seq)
	}
	sp.Seqs[0] = base.SeqNum(seq)
	for j := 1; j < len(sp.Seqs) && d.err == nil; j++ {
		// Seqs strictly descend and stay >= 1.
		gap := d.uvarint()
		if gap == 0 || gap >= uint64(sp.Seqs[j-1]) {
			d.fail("seq gap %d below seq %d", gap, sp.Seqs[j-1])
		}
		sp.Seqs[j] = sp.Seqs[j-1] - base.SeqNum(gap)
	}
	return sp
}
