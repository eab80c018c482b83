package keyspan

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/monbandb/monban/internal/base"
)

// TestFragmentMatchesModel: at every probe key, the span containing it
// lists exactly the seqs of the tombstones covering it, and Covering
// agrees with the model at every snapshot.
func TestFragmentMatchesModel(t *testing.T) {
	seeded(t, func(t *testing.T, rng *rand.Rand) {
		for range 3000 {
			m := randTombstones(rng)
			s := Fragment(m)
			checkValid(t, s)
			checkMinimal(t, s)
			for _, k := range probes {
				var got []base.SeqNum
				if i := s.Seek(k); i < s.Len() && s.At(i).Contains(k) {
					got = s.At(i).Seqs
				}
				if want := m.seqs(k); !slices.Equal(got, want) {
					t.Fatalf("tombstones %v: fragments %v: key %q has seqs %v, want %v", m, s.spans, k, got, want)
				}
				for _, snap := range snapshots() {
					got, gotOK := s.Covering(k, snap)
					want, wantOK := m.covering(k, snap)
					if got != want || gotOK != wantOK {
						t.Fatalf("tombstones %v: fragments %v: Covering(%q, %d) = %d, %v; want %d, %v", m, s.spans, k, snap, got, gotOK, want, wantOK)
					}
				}
			}
		}
	})
}

// TestFragmentOrderIndependent: invariant 4 makes the output a function
// of the set of tombstones, not of their order; and Fragment leaves its
// input as it was.
func TestFragmentOrderIndependent(t *testing.T) {
	seeded(t, func(t *testing.T, rng *rand.Rand) {
		for range 1000 {
			m := randTombstones(rng)
			want := Fragment(m)
			shuffled := slices.Clone(m)
			rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			before := slices.Clone(shuffled)
			if got := Fragment(shuffled); !equalSpans(got, want) {
				t.Fatalf("Fragment(%v) = %v, but Fragment(%v) = %v", m, want.spans, shuffled, got.spans)
			}
			if !slices.EqualFunc(before, shuffled, func(a, b Tombstone) bool { return a.Seq == b.Seq && string(a.Start) == string(b.Start) }) {
				t.Fatalf("Fragment reordered its input: %v became %v", before, shuffled)
			}
		}
	})
}
