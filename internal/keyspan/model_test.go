package keyspan

import (
	"bytes"
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/monbandb/monban/internal/base"
)

// The model is the list of raw tombstones itself: a key is covered at
// snapshot s by every tombstone whose range holds it and whose seq is at
// most s. Every test compares the package's answer with this one.
type model []Tombstone

func covers(t Tombstone, key []byte) bool {
	return bytes.Compare(t.Start, key) <= 0 && bytes.Compare(key, t.End) < 0
}

// seqs returns the seqs of the tombstones covering key, newest first,
// without duplicates: what the span containing key must list.
func (m model) seqs(key []byte) []base.SeqNum {
	var out []base.SeqNum
	for _, t := range m {
		if covers(t, key) {
			out = append(out, t.Seq)
		}
	}
	slices.SortFunc(out, func(a, b base.SeqNum) int { return cmp.Compare(b, a) })
	return slices.Compact(out)
}

func (m model) covering(key []byte, snapshot base.SeqNum) (base.SeqNum, bool) {
	var best base.SeqNum
	for _, t := range m {
		if covers(t, key) && t.Seq <= snapshot && t.Seq > best {
			best = t.Seq
		}
	}
	return best, best > 0
}

// endpoints are the keys tombstones start and end at: the empty key, keys
// that are prefixes of others, and "\xff\xff" beyond every probe but one.
var endpoints = [][]byte{
	{}, []byte("a"), []byte("aa"), []byte("ab"), []byte("b"), []byte("ba"), []byte("c"), []byte("\xff\xff"),
}

// probes are the keys the tests ask about: every endpoint, and keys
// between and beyond them.
var probes = append(slices.Clone(endpoints),
	[]byte("\x00"), []byte("a\x00"), []byte("aaa"), []byte("abz"), []byte("b\x00"),
	[]byte("bz"), []byte("c\x00"), []byte("\xff"), []byte("\xff\xff\x00"))

const maxTestSeq = 12

// randTombstones returns up to 12 tombstones over the endpoints, with
// repeated seqs, repeated ranges and a few empty or inverted ones (which
// cover nothing).
func randTombstones(rng *rand.Rand) model {
	ts := make(model, rng.IntN(13))
	for i := range ts {
		a, b := rng.IntN(len(endpoints)), rng.IntN(len(endpoints))
		if rng.IntN(8) != 0 && a > b {
			a, b = b, a
		}
		ts[i] = Tombstone{Start: endpoints[a], End: endpoints[b], Seq: base.SeqNum(1 + rng.IntN(maxTestSeq))}
	}
	return ts
}

// snapshots returns every snapshot worth asking at: below, at and between
// every seq, and the current state.
func snapshots() []base.SeqNum {
	out := []base.SeqNum{base.MaxSeqNum}
	for s := range base.SeqNum(maxTestSeq + 2) {
		out = append(out, s)
	}
	return out
}

// seeded runs f with a fresh random source, naming its seed on failure.
func seeded(t *testing.T, f func(t *testing.T, rng *rand.Rand)) {
	t.Helper()
	seed := rand.Uint64()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d", seed)
		}
	})
	f(t, rand.New(rand.NewPCG(seed, 0)))
}

// checkValid fails t unless s satisfies invariants 1–3, checked here
// independently of the code under test, and SeqBounds bounds its spans'
// sequence numbers exactly.
func checkValid(t *testing.T, s Spans) {
	t.Helper()
	oldest, newest := base.MaxSeqNum, base.SeqNum(0)
	for _, sp := range s.spans {
		for _, seq := range sp.Seqs {
			oldest, newest = min(oldest, seq), max(newest, seq)
		}
	}
	if lo, hi := s.SeqBounds(); lo != oldest || hi != newest {
		t.Fatalf("spans %v: SeqBounds %d, %d; want %d, %d", s.spans, lo, hi, oldest, newest)
	}
	for i, sp := range s.spans {
		if bytes.Compare(sp.Start, sp.End) >= 0 {
			t.Fatalf("span %d %v: Start >= End", i, sp)
		}
		if i > 0 && bytes.Compare(s.spans[i-1].End, sp.Start) > 0 {
			t.Fatalf("span %d %v overlaps span %d %v", i, sp, i-1, s.spans[i-1])
		}
		if len(sp.Seqs) == 0 {
			t.Fatalf("span %d %v has no seqs", i, sp)
		}
		for j := 1; j < len(sp.Seqs); j++ {
			if sp.Seqs[j] >= sp.Seqs[j-1] {
				t.Fatalf("span %d %v: seqs do not strictly descend", i, sp)
			}
		}
	}
}

// checkMinimal fails t unless s satisfies invariant 4.
func checkMinimal(t *testing.T, s Spans) {
	t.Helper()
	for i := 1; i < len(s.spans); i++ {
		a, b := s.spans[i-1], s.spans[i]
		if bytes.Equal(a.End, b.Start) && slices.Equal(a.Seqs, b.Seqs) {
			t.Fatalf("spans %d %v and %d %v abut with equal seqs", i-1, a, i, b)
		}
	}
}

// equalSpans compares by value; nil and empty keys are the same key.
func equalSpans(a, b Spans) bool {
	return slices.EqualFunc(a.spans, b.spans, func(x, y Span) bool {
		return bytes.Equal(x.Start, y.Start) && bytes.Equal(x.End, y.End) && slices.Equal(x.Seqs, y.Seqs)
	})
}
