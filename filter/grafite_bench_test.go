package filter

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/monbandb/monban/internal/cpuclock"
)

// threadCPU reports, when the benchmark returns, this thread's CPU ns per
// op divided by per ("cpu-ns/"+unit): steadier than ns/op on a shared
// machine. Call as defer threadCPU(b, 1, "op")() just before the loop.
func threadCPU(b *testing.B, per int, unit string) func() {
	runtime.LockOSThread()
	start := cpuclock.Thread()
	return func() {
		b.ReportMetric(float64(cpuclock.Thread()-start)/float64(b.N*per), "cpu-ns/"+unit)
		runtime.UnlockOSThread()
	}
}

// BenchmarkGrafiteBuild builds a filter of 100,000 sorted integers with
// random gaps at 16 bits per key, as a table writer does: per key, in
// cpu-ns/op divided by the keys.
func BenchmarkGrafiteBuild(b *testing.B) {
	const n = 100_000
	rng := rand.New(rand.NewPCG(1, 1))
	xs := make([]uint64, n)
	x := uint64(0)
	for i := range xs {
		x += 1 + rng.Uint64N(128)
		xs[i] = x
	}
	bld := NewGrafiteBuilder(16, 32, 1)
	var buf []byte
	defer threadCPU(b, n, "key")()
	for b.Loop() {
		for _, x := range xs {
			bld.Add(x)
		}
		buf = bld.Finish(buf[:0])
	}
}

// BenchmarkGrafiteQuery asks a filter of 100,000 integers about empty
// ranges of 32.
func BenchmarkGrafiteQuery(b *testing.B) {
	const n = 100_000
	xs := make([]uint64, n)
	for i := range xs {
		xs[i] = 64 * uint64(i)
	}
	g := buildGrafite(b, xs, 16, 32, 1)
	rng := rand.New(rand.NewPCG(1, 2))
	fp := 0
	defer threadCPU(b, 1, "op")()
	for b.Loop() {
		lo := 64*rng.Uint64N(n) + 16
		if g.MayContainRange(lo, lo+31) {
			fp++
		}
	}
	b.ReportMetric(float64(fp)/float64(b.N), "maybe/op")
}

// BenchmarkSortCodes sorts 100,000 codes as a filter build does, with
// about one code per bucket (random hashes) and with every code in one
// bucket (keys chosen to collide), per code.
func BenchmarkSortCodes(b *testing.B) {
	const n, l = 100_000, 16
	r := uint64(n) << l
	rng := rand.New(rand.NewPCG(1, 3))
	for _, tc := range []struct {
		name  string
		width uint64
	}{{"uniform", r}, {"one-bucket", 1 << l}} {
		codes := make([]uint64, n)
		for i := range codes {
			codes[i] = rng.Uint64N(tc.width)
		}
		b.Run(tc.name, func(b *testing.B) {
			in, out := make([]uint64, n), make([]uint64, n)
			defer threadCPU(b, n, "code")()
			for b.Loop() {
				copy(in, codes)
				sortCodes(in, l, r, out)
			}
		})
	}
}
