package keyspan

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/monbandb/monban/internal/base"
)

// TestTruncateMatchesModel: inside [lo, hi) every key keeps its seqs;
// outside, no key is covered; and no span reaches past a bound.
func TestTruncateMatchesModel(t *testing.T) {
	seeded(t, func(t *testing.T, rng *rand.Rand) {
		for range 2000 {
			m := randTombstones(rng)
			s := Fragment(m)
			lo := probes[rng.IntN(len(probes))]
			var hi []byte // nil: no upper bound
			if rng.IntN(4) != 0 {
				hi = probes[rng.IntN(len(probes))]
			}
			got := Truncate(s, lo, hi)
			checkValid(t, got)
			checkMinimal(t, got)
			inside := func(k []byte) bool {
				return bytes.Compare(lo, k) <= 0 && (hi == nil || bytes.Compare(k, hi) < 0)
			}
			if start, end, ok := got.Bounds(); ok && (!inside(start) || hi != nil && bytes.Compare(end, hi) > 0) {
				t.Fatalf("Truncate(%v, %q, %q) = %v reaches outside", s.spans, lo, hi, got.spans)
			}
			for _, k := range probes {
				var want []base.SeqNum
				if inside(k) {
					want = m.seqs(k)
				}
				var seqs []base.SeqNum
				if i := got.Seek(k); i < got.Len() && got.At(i).Contains(k) {
					seqs = got.At(i).Seqs
				}
				if !slices.Equal(seqs, want) {
					t.Fatalf("Truncate(%v, %q, %q) = %v: key %q has seqs %v, want %v", s.spans, lo, hi, got.spans, k, seqs, want)
				}
			}
		}
	})
}

// TestCompactMatchesModel checks Compact's contract against the model, at
// every snapshot it is given and for current reads: Covering is unchanged,
// except, when bottom, where the old answer lay in the lowest stripe and
// the new one is nothing. It also checks that Compact does its job: at
// most one seq per stripe, and none in the lowest stripe when bottom.
func TestCompactMatchesModel(t *testing.T) {
	seeded(t, func(t *testing.T, rng *rand.Rand) {
		for range 3000 {
			m := randTombstones(rng)
			var snaps []base.SeqNum
			for s := range base.SeqNum(maxTestSeq + 1) {
				if rng.IntN(4) == 0 {
					snaps = append(snaps, s)
				}
			}
			bottom := rng.IntN(2) == 0
			got := Compact(Fragment(m), snaps, bottom)
			checkValid(t, got)
			checkMinimal(t, got)

			stripe := func(seq base.SeqNum) int { // the number of snapshots below seq
				n := 0
				for _, s := range snaps {
					if s < seq {
						n++
					}
				}
				return n
			}
			for sp := range got.All() {
				for i, seq := range sp.Seqs {
					if i > 0 && stripe(seq) == stripe(sp.Seqs[i-1]) {
						t.Fatalf("Compact(%v, %v, %v): span %v keeps two seqs of one stripe", m, snaps, bottom, sp)
					}
					if bottom && stripe(seq) == 0 {
						t.Fatalf("Compact(%v, %v, %v): span %v keeps a seq of the lowest stripe at the bottom", m, snaps, bottom, sp)
					}
				}
			}
			for _, k := range probes {
				for _, snap := range append(slices.Clone(snaps), base.MaxSeqNum) {
					want, wantOK := m.covering(k, snap)
					seq, ok := got.Covering(k, snap)
					if seq == want && ok == wantOK || bottom && wantOK && !ok && stripe(want) == 0 {
						continue
					}
					t.Fatalf("Compact(%v, %v, %v) = %v: Covering(%q, %d) = %d, %v; model %d, %v", m, snaps, bottom, got.spans, k, snap, seq, ok, want, wantOK)
				}
			}
		}
	})
}
