package lsm

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRecentKeyHashesModel checks recentKeyHashes against a model: a set
// comes back as added until its table is dropped or newer sets need its
// room, least recently used first out; the sets kept never exceed the
// bound, and one larger than the bound is never kept.
func TestRecentKeyHashesModel(t *testing.T) {
	defer func(n int) { recentKeyHashesBytes = n }(recentKeyHashesBytes)
	recentKeyHashesBytes = 8 * 100
	rng := rand.New(rand.NewPCG(modelSeed(t), 41))
	c := newRecentKeyHashes()
	type kept struct {
		num    uint64
		hashes []uint64
	}
	var model []kept // most recently used first
	size := func() (n int) {
		for _, k := range model {
			n += 8 * len(k.hashes)
		}
		return n
	}
	find := func(num uint64) int { return slices.IndexFunc(model, func(k kept) bool { return k.num == num }) }
	for step := range 5000 {
		num := uint64(rng.IntN(20))
		switch rng.IntN(3) {
		case 0:
			hs := make([]uint64, rng.IntN(120))
			for i := range hs {
				hs[i] = rng.Uint64()
			}
			c.add(num, hs)
			if i := find(num); i >= 0 {
				model = slices.Delete(model, i, i+1)
			}
			if 8*len(hs) <= recentKeyHashesBytes {
				model = slices.Insert(model, 0, kept{num, hs})
				for size() > recentKeyHashesBytes {
					model = model[:len(model)-1]
				}
			}
		case 1:
			got, ok := c.appendTo([]uint64{7}, num)
			i := find(num)
			if ok != (i >= 0) || got[0] != 7 || (ok && !slices.Equal(got[1:], model[i].hashes)) {
				t.Fatalf("step %d: table %d: kept %t, want %t", step, num, ok, i >= 0)
			}
			if ok {
				k := model[i]
				model = slices.Insert(slices.Delete(model, i, i+1), 0, k)
			}
		case 2:
			c.drop(num)
			if i := find(num); i >= 0 {
				model = slices.Delete(model, i, i+1)
			}
		}
		if c.bytes != size() || len(c.sets) != len(model) || c.bytes > recentKeyHashesBytes {
			t.Fatalf("step %d: %d sets in %d bytes, want %d in %d", step, len(c.sets), c.bytes, len(model), size())
		}
	}
}
