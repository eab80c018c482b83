package filter

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/monbandb/monban/internal/cpuclock"
)

// BenchmarkBatchQuery times, in one run, the standard layout's single
// queries, the cache-line filter's single queries and its batched queries
// (MayContainHashes, batches of 8, 16, 32 and 64), at 10 bits per key on 10^7
// keys (12.5 MB per filter: beyond L2, within a 32 MB L3) and 10^8 keys
// (125 MB: beyond every cache), for absent and for present keys. It reports
// ns/query for each and each cache-line variant's speedup over the standard
// layout.
//
// As in BenchmarkQuerySpeedup, the variants alternate in chunks timed on
// the thread's CPU clock, so that other load on a shared machine falls on
// all alike. Each variant queries its own keys, so that none finds lines
// another has just brought into the caches; the keys' hashes are computed
// before each chunk's clock starts. The filters are built once per process
// (filtersFor): the 10^8-key pair takes ~20 s and peaks at 2.6 GB of memory
// while it is built (the builder holds every hash), 250 MB after.
func BenchmarkBatchQuery(b *testing.B) {
	for _, n := range []int{10_000_000, 100_000_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			variants := batchVariants(filtersFor(n))
			present := func(i int) uint64 { return splitmix(uint64(i % n)) }
			b.Run("absent", func(b *testing.B) { benchBatchQuery(b, variants, absent) })
			b.Run("present", func(b *testing.B) { benchBatchQuery(b, variants, present) })
		})
	}
}

// batchVariant is one way of answering a chunk of queries.
type batchVariant struct {
	name  string
	query func(hashes []uint64, maybe []bool)
}

func batchVariants(f *benchFilters) []batchVariant {
	single := func(may func(uint64) bool) func([]uint64, []bool) {
		return func(hs []uint64, out []bool) {
			for i, h := range hs {
				out[i] = may(h)
			}
		}
	}
	batched := func(size int) func([]uint64, []bool) {
		return func(hs []uint64, out []bool) {
			for i := 0; i < len(hs); i += size {
				f.cl.MayContainHashes(hs[i:i+size], out[i:i+size])
			}
		}
	}
	return []batchVariant{
		{"standard", single(f.std.MayContainHash)},
		{"cacheline", single(f.cl.MayContainHash)},
		{"batch8", batched(8)},
		{"batch16", batched(16)},
		{"batch32", batched(32)},
		{"batch64", batched(64)},
	}
}

// benchBatchQuery times the variants in alternating chunks; the first is the
// baseline the others' speedups are reported against.
func benchBatchQuery(b *testing.B, variants []batchVariant, key func(int) uint64) {
	const chunk, chunks = 1 << 14, 128 // chunk: a multiple of every batch size
	hs, out := make([]uint64, chunk), make([]bool, chunk)
	spent := make([]time.Duration, len(variants))
	maybes := make([]int, len(variants))
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	next := 0 // the next key index: every chunk of every variant has its own keys
	for b.Loop() {
		for range chunks {
			for v, variant := range variants {
				for i := range hs {
					hs[i] = key(next + i)
				}
				next += chunk
				start := cpuclock.Thread()
				variant.query(hs, out)
				spent[v] += cpuclock.Thread() - start
				for _, m := range out {
					if m {
						maybes[v]++
					}
				}
			}
		}
	}
	q := float64(b.N * chunk * chunks)
	std := float64(spent[0].Nanoseconds()) / q
	for v, variant := range variants {
		ns := float64(spent[v].Nanoseconds()) / q
		b.ReportMetric(ns, variant.name+"-ns/query")
		if v > 0 {
			b.ReportMetric(std/ns, variant.name+"-speedup-x")
		}
		if float64(maybes[v]) > 0.05*q && float64(maybes[v]) < 0.95*q {
			b.Fatalf("%s answered maybe to %d of %.0f queries: neither absent nor present keys", variant.name, maybes[v], q)
		}
	}
}
