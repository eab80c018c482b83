package filter

import (
	"math/rand/v2"
	"testing"
)

// TestMayContainHashesModel: batched answers equal single answers, for
// random filters (fractional bits per key, zero to thousands of keys) and
// batches of every length around the group size, present and absent keys
// mixed, as well as the zero CacheLine and an empty filter. Entries of
// maybe past the batch are left alone.
func TestMayContainHashesModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 6))
	empty, err := OpenCacheLine(NewCacheLineBuilder(10).Finish(nil))
	if err != nil {
		t.Fatal(err)
	}
	filters := []struct {
		name  string
		f     CacheLine
		added []uint64
	}{{"zero value", CacheLine{}, nil}, {"empty", empty, nil}}
	for i := range 40 {
		// One probe (below 2.13 bits per key), the default, the most, then
		// random settings.
		bpk := []float64{1, 1.5, 10, 64}[min(i, 3)]
		if i > 3 {
			bpk = 1 + 29*rng.Float64()
		}
		b := NewCacheLineBuilder(bpk)
		added := make([]uint64, rng.IntN(5000))
		for i := range added {
			added[i] = rng.Uint64()
			b.AddHash(added[i])
		}
		f, err := OpenCacheLine(b.Finish(nil))
		if err != nil {
			t.Fatal(err)
		}
		filters = append(filters, struct {
			name  string
			f     CacheLine
			added []uint64
		}{"random", f, added})
	}
	var hashes []uint64
	var maybe []bool
	for _, c := range filters {
		for n := range 3*batchGroup + 2 {
			hashes = hashes[:0]
			for range n {
				if len(c.added) > 0 && rng.IntN(2) == 0 {
					hashes = append(hashes, c.added[rng.IntN(len(c.added))])
				} else {
					hashes = append(hashes, rng.Uint64())
				}
			}
			maybe = append(maybe[:0], make([]bool, n+1)...)
			maybe[n] = true // past the batch: must stay
			c.f.MayContainHashes(hashes, maybe)
			for i, h := range hashes {
				if want := c.f.MayContainHash(h); maybe[i] != want {
					t.Fatalf("%s filter (%d lines, %d probes), batch of %d: query %d says %v, MayContainHash %v",
						c.name, c.f.Lines(), c.f.Probes(), n, i, maybe[i], want)
				}
			}
			if !maybe[n] {
				t.Fatalf("%s filter, batch of %d: wrote past the batch", c.name, n)
			}
		}
	}
}

func TestMayContainHashesShortOutput(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Errorf("a maybe slice shorter than the batch did not panic")
		}
	}()
	CacheLine{}.MayContainHashes(make([]uint64, 3), make([]bool, 2))
}
