package keyspan

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"iter"
	"slices"

	"github.com/monbandb/monban/internal/base"
)

// Tombstone is one DeleteRange as written: every user key k with
// Start <= k < End is deleted at Seq. A tombstone with Start >= End covers
// no key.
type Tombstone struct {
	Start, End []byte
	Seq        base.SeqNum
}

// Span is one fragment: every user key in [Start, End) is covered by
// tombstones at exactly the sequence numbers Seqs, newest first
// (invariants 2 and 3).
type Span struct {
	Start, End []byte
	Seqs       []base.SeqNum
}

// Contains reports whether key lies in [Start, End).
func (s Span) Contains(key []byte) bool {
	return bytes.Compare(s.Start, key) <= 0 && bytes.Compare(key, s.End) < 0
}

// Visible returns the newest of the span's sequence numbers that a reader
// at snapshot sees, that is the newest seq <= snapshot (the visibility rule
// of internal/base, invariant 3), and false if every one is newer.
func (s Span) Visible(snapshot base.SeqNum) (base.SeqNum, bool) {
	// Seqs descend, so the comparison is reversed: the search lands on the
	// first seq that is not above snapshot.
	i, _ := slices.BinarySearchFunc(s.Seqs, snapshot, func(seq, snap base.SeqNum) int {
		return cmp.Compare(snap, seq)
	})
	if i == len(s.Seqs) {
		return 0, false
	}
	return s.Seqs[i], true
}

func (s Span) String() string {
	return fmt.Sprintf("[%q, %q) #%v", s.Start, s.End, s.Seqs)
}

// Spans is a fragmented set of tombstones: sorted, non-overlapping spans
// (package invariants 1–4). It is immutable, and so are the keys and
// sequence numbers its spans share with whatever it was built from; copies
// of a Spans value share them freely. The zero value is empty.
type Spans struct {
	spans []Span
	// shared is the prefix every key in [first Start, last End] has (the
	// longest common prefix of those two bounds), and ends[i] the eight
	// bytes of spans[i].End after it, big-endian, zero-padded: Seek
	// searches these integers and compares whole keys only where they tie,
	// which a Get pays on every source that holds tombstones. starts[i]
	// is spans[i].Start's, the same way: Find rejects a key that lies
	// before the span Seek finds, the usual answer, on it alone, without
	// touching the span or its keys.
	shared []byte
	ends   []uint64
	starts []uint64
	// oldest and newest bound every span's sequence numbers (SeqBounds),
	// which a compaction picker asks of a table's tombstones at every
	// pick, under the DB's lock: computed once here, the answer costs the
	// same however many numbers the spans hold.
	oldest, newest base.SeqNum
}

// newSpans returns spans, sorted and fragmented (invariants 1-4), with the
// abbreviated ends Seek searches.
func newSpans(spans []Span) Spans {
	if len(spans) == 0 {
		return Spans{}
	}
	first, last := spans[0].Start, spans[len(spans)-1].End
	n := 0
	for n < len(first) && n < len(last) && first[n] == last[n] {
		n++
	}
	s := Spans{spans: spans, shared: first[:n:n], ends: make([]uint64, len(spans)), starts: make([]uint64, len(spans)), oldest: base.MaxSeqNum}
	for i, sp := range spans {
		s.ends[i] = abbreviate(sp.End[n:])
		s.starts[i] = abbreviate(sp.Start[n:])
		// Seqs descend (invariant 3): the first is the newest, the last
		// the oldest.
		s.newest, s.oldest = max(s.newest, sp.Seqs[0]), min(s.oldest, sp.Seqs[len(sp.Seqs)-1])
	}
	return s
}

// SeqBounds returns the oldest and the newest of the spans' sequence
// numbers; MaxSeqNum and 0 when there are no spans.
func (s Spans) SeqBounds() (oldest, newest base.SeqNum) {
	if len(s.spans) == 0 {
		return base.MaxSeqNum, 0
	}
	return s.oldest, s.newest
}

// abbreviate is the first eight bytes of b as a big-endian integer, zero
// bytes standing in for those b lacks: a < b implies abbreviate(a) <=
// abbreviate(b), and abbreviate(a) < abbreviate(b) implies a < b.
func abbreviate(b []byte) uint64 {
	if len(b) >= 8 {
		return binary.BigEndian.Uint64(b)
	}
	var buf [8]byte
	copy(buf[:], b)
	return binary.BigEndian.Uint64(buf[:])
}

// Len returns the number of spans.
func (s Spans) Len() int { return len(s.spans) }

// At returns the i-th span in key order. The caller must not modify it.
func (s Spans) At(i int) Span { return s.spans[i] }

// All yields the spans in key order.
func (s Spans) All() iter.Seq[Span] { return slices.Values(s.spans) }

// appendSpan appends sp to out, extending the last span instead when sp
// continues it with the same sequence numbers, so that a builder's output
// has no two abutting spans with equal Seqs (invariant 4).
func appendSpan(out []Span, sp Span) []Span {
	if n := len(out); n > 0 && bytes.Equal(out[n-1].End, sp.Start) && slices.Equal(out[n-1].Seqs, sp.Seqs) {
		out[n-1].End = sp.End
		return out
	}
	return append(out, sp)
}
