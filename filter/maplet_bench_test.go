package filter

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/monbandb/monban/internal/cpuclock"
)

// Maplet benchmarks at 10M entries, against what it replaces: a lookup of
// an absent key probes one cache-line filter per run (10 bits per key),
// k = 2, 6 or 10 runs sharing the keys as lsmShares(k) (levels a tenth of
// the one below, 90% in the last; past six runs, L0 tables of 0.5% each).
// The maplet has 2^24 slots (load 0.60) and 6 payload bits, 15.1 bits per
// entry: 10M is past what 2^23 slots hold, and the table's size is a power
// of two. Keys are pre-hashed; probes cycle through 2^16 fresh hashes.
// Besides ns/op each reports cpu-ns/op (the thread's CPU time), false
// runs per lookup, and bits per key. Run with
//
//	go test -run XXX -bench 'BenchmarkMaplet$' -benchtime 2000000x ./filter/
//
// Building the three trees takes about 400 MiB and half a minute.
const (
	mapletBenchN     = 10_000_000
	mapletBenchSlots = 1 << 24
	mapletBenchP     = 6
)

type mapletBenchTree struct {
	hs      []uint64
	rs      []uint8
	lens    []uint8
	m       *Maplet
	filters []CacheLine
	fbytes  int
}

var mapletBenchTrees = map[int]*mapletBenchTree{}

func mapletBench(b *testing.B, k int) *mapletBenchTree {
	if t := mapletBenchTrees[k]; t != nil {
		return t
	}
	rng := rand.New(rand.NewPCG(uint64(k), 41))
	w := lsmShares(k)
	t := &mapletBenchTree{lens: RunCodeLengths(w, mapletBenchP-1)}
	t.hs, t.rs = mapletTree(mapletBenchN, w, rng)
	m, err := BuildMaplet(mapletBenchSlots, mapletBenchP, t.lens, t.hs, t.rs)
	if err != nil {
		b.Fatal(err)
	}
	t.m = m
	for r := range k {
		fb := NewCacheLineBuilder(10)
		for i, h := range t.hs {
			if int(t.rs[i]) == r {
				fb.AddHash(h)
			}
		}
		enc := fb.Finish(nil)
		t.fbytes += len(enc)
		f, err := OpenCacheLine(enc)
		if err != nil {
			b.Fatal(err)
		}
		t.filters = append(t.filters, f)
	}
	mapletBenchTrees[k] = t
	return t
}

func mapletBenchProbes() []uint64 {
	rng := rand.New(rand.NewPCG(3, 0))
	probe := make([]uint64, 1<<16)
	for i := range probe {
		probe[i] = rng.Uint64()
	}
	return probe
}

func BenchmarkMaplet(b *testing.B) {
	for _, k := range []int{2, 6, 10} {
		b.Run(fmt.Sprintf("LookupAbsent/runs=%d", k), func(b *testing.B) {
			t := mapletBench(b, k)
			probe := mapletBenchProbes()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ReportAllocs()
			b.ResetTimer()
			start := cpuclock.Thread()
			falseRuns := 0
			for n := 0; n < b.N; n++ {
				for s := t.m.Lookup(probe[n&(len(probe)-1)]); s != 0; s &= s - 1 {
					falseRuns++
				}
			}
			b.ReportMetric(float64(cpuclock.Thread()-start)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(falseRuns)/float64(b.N), "false/op")
			b.ReportMetric(float64(8*t.m.SizeBytes())/mapletBenchN, "bits/key")
		})
		b.Run(fmt.Sprintf("PerTableAbsent/runs=%d", k), func(b *testing.B) {
			t := mapletBench(b, k)
			probe := mapletBenchProbes()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			b.ReportAllocs()
			b.ResetTimer()
			start := cpuclock.Thread()
			falseRuns := 0
			for n := 0; n < b.N; n++ {
				h := probe[n&(len(probe)-1)]
				for _, f := range t.filters {
					if f.MayContainHash(h) {
						falseRuns++
					}
				}
			}
			b.ReportMetric(float64(cpuclock.Thread()-start)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(falseRuns)/float64(b.N), "false/op")
			b.ReportMetric(float64(8*t.fbytes)/mapletBenchN, "bits/key")
		})
	}
	// What a compaction pays per key it carries to the next run: keys in
	// random order (a compaction's own, key order, is random in hash
	// order), and in hash order, as a compaction could apply its updates
	// if it sorted their hashes first, so that each lands next to the last.
	b.Run("Move/runs=6", func(b *testing.B) { benchMapletMove(b, false) })
	b.Run("MoveHashOrder/runs=6", func(b *testing.B) { benchMapletMove(b, true) })
}

func benchMapletMove(b *testing.B, hashOrder bool) {
	t := mapletBench(b, 6)
	// Reorder the entries, hashes and runs together, so that both cases
	// read them sequentially and the maplet stays the one they describe.
	pairs := make([]mapletEntry, mapletBenchN)
	for i := range pairs {
		pairs[i] = mapletEntry{t.hs[i], int(t.rs[i])}
	}
	if hashOrder {
		slices.SortFunc(pairs, func(x, y mapletEntry) int { return cmp.Compare(x.h, y.h) })
	} else {
		rand.New(rand.NewPCG(5, 0)).Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })
	}
	for i, e := range pairs {
		t.hs[i], t.rs[i] = e.h, uint8(e.run)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuclock.Thread()
	for n := 0; n < b.N; n++ {
		i := n % mapletBenchN
		from := int(t.rs[i])
		to := (from + 1) % 6
		if !t.m.Move(t.hs[i], from, to) {
			b.Fatal("Move of a stored entry failed")
		}
		t.rs[i] = uint8(to)
	}
	b.ReportMetric(float64(cpuclock.Thread()-start)/float64(b.N), "cpu-ns/op")
}
