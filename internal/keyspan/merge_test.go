package keyspan

import (
	"math/rand/v2"
	"testing"
)

// TestMergeMatchesModel: merging the fragments of several groups of
// tombstones covers every key at every snapshot as the fragments of all
// of them together do.
func TestMergeMatchesModel(t *testing.T) {
	seeded(t, func(t *testing.T, rng *rand.Rand) {
		var all model
		var parts []Spans
		for range rng.IntN(4) + 1 {
			m := randTombstones(rng)
			all = append(all, m...)
			parts = append(parts, Fragment(m))
		}
		got := Merge(parts...)
		checkValid(t, got)
		want := Fragment(all)
		if got.Len() != want.Len() {
			t.Fatalf("Merge has %d spans, Fragment of all %d", got.Len(), want.Len())
		}
		for i := range got.Len() {
			if got.At(i).String() != want.At(i).String() {
				t.Fatalf("span %d: %v, want %v", i, got.At(i), want.At(i))
			}
		}
	})
}
