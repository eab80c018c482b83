package filter

import (
	"fmt"
	"github.com/monbandb/monban/internal/cpuclock"
	"runtime"
	"sync"
	"testing"
	"time"
)

// The benchmarks compare the two Bloom layouts at 10 bits per key, on a
// filter that fits in cache (10^4 keys, 12.5 KB) and one far larger than it
// (10^7 keys, 12.5 MB). Keys are stood in for by their hashes (splitmix64 of
// a counter), so the figures are the filters' own cost; BenchmarkHash is the
// cost of the one xxhash a caller pays per key.

const benchBitsPerKey = 10

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// absent is the i-th absent key's hash: its counter is outside [0, n).
func absent(i int) uint64 { return splitmix(1<<40 + uint64(i)) }

type benchFilters struct {
	std *Bloom
	cl  CacheLine
}

var (
	benchMu    sync.Mutex
	benchCache = map[int]*benchFilters{}
)

// filtersFor builds (once per process) both layouts over keys [0, n).
func filtersFor(n int) *benchFilters {
	benchMu.Lock()
	defer benchMu.Unlock()
	if f := benchCache[n]; f != nil {
		return f
	}
	std := newBloomBits(uint64(n*benchBitsPerKey), StandardHashes(benchBitsPerKey))
	b := NewCacheLineBuilder(benchBitsPerKey)
	for i := range n {
		std.AddHash(splitmix(uint64(i)))
		b.AddHash(splitmix(uint64(i)))
	}
	cl, err := OpenCacheLine(b.Finish(nil))
	if err != nil {
		panic(err)
	}
	f := &benchFilters{std: std, cl: cl}
	benchCache[n] = f
	return f
}

var benchSizes = []int{10_000, 10_000_000}

func BenchmarkHash(b *testing.B) {
	key := []byte("user0000000012345678")
	for b.Loop() {
		key[len(key)-1]++
		sink += Hash(key)
	}
}

var sink uint64

func BenchmarkBloomAdd(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			f := newBloomBits(uint64(n*benchBitsPerKey), StandardHashes(benchBitsPerKey))
			i := 0
			for b.Loop() {
				f.AddHash(splitmix(uint64(i % n)))
				i++
			}
		})
	}
}

// BenchmarkCacheLineAdd is the build cost per key: AddHash, and the key's
// share of Finish, which sets its bits.
func BenchmarkCacheLineAdd(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			builder := NewCacheLineBuilder(benchBitsPerKey)
			var buf []byte
			i := 0
			for b.Loop() {
				builder.AddHash(splitmix(uint64(i)))
				if i++; i == n {
					buf = builder.Finish(buf[:0])
					i = 0
				}
			}
		})
	}
}

func BenchmarkMayContain(b *testing.B) {
	for _, n := range benchSizes {
		f := filtersFor(n)
		for _, layout := range []struct {
			name string
			may  func(uint64) bool
		}{{"standard", f.std.MayContainHash}, {"cacheline", f.cl.MayContainHash}} {
			b.Run(fmt.Sprintf("%s/keys=%d/absent", layout.name, n), func(b *testing.B) {
				fp, i := 0, 0
				for b.Loop() {
					if layout.may(absent(i)) {
						fp++
					}
					i++
				}
				b.ReportMetric(float64(fp)/float64(i), "fpr")
			})
			b.Run(fmt.Sprintf("%s/keys=%d/present", layout.name, n), func(b *testing.B) {
				i := 0
				for b.Loop() {
					if !layout.may(splitmix(uint64(i % n))) {
						b.Fatal("false negative")
					}
					i++
				}
			})
		}
	}
}

// BenchmarkMayContainKey is the whole query a reader makes from a key:
// hash, then probe. It must not allocate.
func BenchmarkMayContainKey(b *testing.B) {
	f := filtersFor(benchSizes[0])
	key := []byte("user0000000012345678")
	b.ReportAllocs()
	for b.Loop() {
		key[len(key)-1]++
		if f.cl.MayContain(key) {
			sink++
		}
	}
}

// BenchmarkQuerySpeedup times both layouts in the same run, absent keys
// then present ones, and reports standard ns/query over cache-line
// ns/query. 10^6 keys (1.25 MB) sit in L2/L3 and within the TLB's reach;
// 10^7 keys (12.5 MB) outgrow the TLB's reach but can still fit a large L3
// (35.8 MiB on the 2-core CI machine); 10^8 keys (125 MB) are far larger
// than any cache: most queries of either layout go to DRAM.
func BenchmarkQuerySpeedup(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000, 100_000_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) { benchQuerySpeedup(b, n) })
	}
}

func benchQuerySpeedup(b *testing.B, n int) {
	f := filtersFor(n)
	for _, mix := range []struct {
		name string
		key  func(int) uint64
	}{{"absent", absent}, {"present", func(i int) uint64 { return splitmix(uint64(i % n)) }}} {
		b.Run(mix.name, func(b *testing.B) {
			// The layouts alternate in chunks of 2^16 queries, timed by the
			// thread's CPU clock, so that other load on a shared machine
			// falls on both alike and descheduled time is not counted.
			const chunk, chunks = 1 << 16, 64
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			timeIt := func(may func(uint64) bool, from int) time.Duration {
				start := cpuclock.Thread()
				for i := from; i < from+chunk; i++ {
					if may(mix.key(i)) {
						sink++
					}
				}
				return cpuclock.Thread() - start
			}
			var stdT, clT time.Duration
			for b.Loop() {
				for c := range chunks {
					stdT += timeIt(f.std.MayContainHash, c*chunk)
					clT += timeIt(f.cl.MayContainHash, c*chunk)
				}
			}
			q := float64(b.N * chunk * chunks)
			std, cl := float64(stdT.Nanoseconds())/q, float64(clT.Nanoseconds())/q
			b.ReportMetric(std, "standard-ns/query")
			b.ReportMetric(cl, "cacheline-ns/query")
			b.ReportMetric(std/cl, "speedup-x")
		})
	}
}
