package sstable

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
	"github.com/monbandb/monban/internal/cpuclock"
	"github.com/monbandb/monban/vfs"
)

const benchKeys = 100000

// benchEntries: 16-byte keys "k%015d" (even numbers; odd ones are absent
// but in range), 100-byte values, one version each.
func benchEntries() []entry {
	es := make([]entry, benchKeys)
	v := make([]byte, 100)
	for i := range es {
		for j := range v {
			v[j] = byte(i*7 + j)
		}
		es[i] = entry{base.MakeInternalKey([]byte(fmt.Sprintf("k%015d", 2*i)), base.SeqNum(i+1), base.KindSet), append([]byte(nil), v...)}
	}
	return es
}

func benchKey(i int) []byte { return []byte(fmt.Sprintf("k%015d", i)) }

// benchTable writes the bench table to an OS file (reads then go through
// the page cache and a syscall, as in a DB) and opens it.
func benchTable(b *testing.B, opts WriterOptions, c *Cache) *Reader {
	b.Helper()
	name := filepath.Join(b.TempDir(), TableFileName(1))
	f, err := vfs.Default.Create(name)
	if err != nil {
		b.Fatal(err)
	}
	w := NewWriter(f, opts)
	for _, e := range benchEntries() {
		if err := w.Add(e.key, e.value); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := w.Finish(); err != nil {
		b.Fatal(err)
	}
	rf, err := vfs.Default.Open(name)
	if err != nil {
		b.Fatal(err)
	}
	r, err := Open(rf, ReaderOptions{Cache: c, FileNum: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { r.Close() })
	return r
}

func BenchmarkWrite(b *testing.B) {
	es := benchEntries()
	for _, compress := range []bool{false, true} {
		b.Run(fmt.Sprintf("snappy=%v", compress), func(b *testing.B) {
			benchWrite(b, es, WriterOptions{BloomBitsPerKey: 10, Compression: compress})
		})
	}
}

// BenchmarkWriteSplit is BenchmarkWrite (no snappy) with the prefixes of
// a split in the filter: none, one per 50 keys (the bench keys without
// their last two digits), and one per key (the whole key, the worst
// case: twice the filter). cpu-ns/key is the writer's CPU per entry.
func BenchmarkWriteSplit(b *testing.B) {
	es := benchEntries()
	for _, tc := range []struct {
		name  string
		split *filter.Split
	}{
		{"none", nil},
		{"50-keys-per-prefix", &filter.Split{Name: "len14", Len: func(k []byte) int { return min(len(k), 14) }}},
		{"1-key-per-prefix", &filter.Split{Name: "whole", Len: func(k []byte) int { return len(k) }}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			benchWrite(b, es, WriterOptions{BloomBitsPerKey: 10, Split: tc.split})
		})
	}
}

func benchWrite(b *testing.B, es []entry, opts WriterOptions) {
	var raw int64
	for _, e := range es {
		raw += int64(e.key.Size() + len(e.value))
	}
	b.SetBytes(raw)
	b.ReportAllocs()
	var filterBytes uint64
	stop := cpuClock(b)
	for i := 0; i < b.N; i++ {
		w := NewWriter(&memFile{data: make([]byte, 0, 16<<20)}, opts)
		for _, e := range es {
			w.Add(e.key, e.value)
		}
		p, err := w.Finish()
		if err != nil {
			b.Fatal(err)
		}
		filterBytes = p.FilterBytes
	}
	stop()
	b.ReportMetric(float64(filterBytes)/float64(len(es)), "filter-bytes/key")
}

// cpuClock reports, when the benchmark function returns, this thread's CPU
// ns per iteration as "cpu-ns/op": less noisy than ns/op on a shared
// machine. Call as defer cpuClock(b)() just before the timed loop.
func cpuClock(b *testing.B) func() {
	runtime.LockOSThread()
	start := cpuclock.Thread()
	return func() {
		b.ReportMetric(float64(cpuclock.Thread()-start)/float64(b.N), "cpu-ns/op")
		runtime.UnlockOSThread()
	}
}

func benchGet(b *testing.B, r *Reader, key func(i int) []byte, wantFound bool) {
	keys := make([][]byte, 4096)
	hashes := make([]uint64, len(keys))
	for i := range keys {
		keys[i] = key(int(uint64(i) * 0x9e3779b97f4a7c15 % benchKeys))
		hashes[i] = filter.Hash(keys[i])
	}
	before := r.Stats()
	var l Lookup
	b.ReportAllocs()
	b.ResetTimer()
	defer cpuClock(b)()
	for i := 0; i < b.N; i++ {
		j := i % len(keys)
		_, _, found, err := r.Get(keys[j], hashes[j], base.MaxSeqNum, &l)
		if err != nil || found != wantFound {
			b.Fatalf("Get(%s): found=%v err=%v", keys[j], found, err)
		}
	}
	b.StopTimer()
	s := r.Stats()
	n := float64(b.N)
	b.ReportMetric(float64(s.BlocksRead-before.BlocksRead)/n, "blocks-read/op")
	b.ReportMetric(float64(s.CacheHits-before.CacheHits)/n, "cache-hits/op")
	b.ReportMetric(float64(s.FilterNegatives-before.FilterNegatives)/n, "filter-skips/op")
}

func BenchmarkGet(b *testing.B) {
	present := func(i int) []byte { return benchKey(2 * i) }
	absent := func(i int) []byte { return benchKey(2*i + 1) }
	b.Run("hit/cached", func(b *testing.B) {
		r := benchTable(b, WriterOptions{BloomBitsPerKey: 10}, cache.New(64<<20))
		for i := 0; i < benchKeys; i += 10 { // warm the cache
			k := present(i)
			r.Get(k, filter.Hash(k), base.MaxSeqNum, &Lookup{})
		}
		benchGet(b, r, present, true)
	})
	b.Run("hit/cache-miss", func(b *testing.B) {
		// 1 MiB of a 13 MiB table: most Gets read their block from the
		// file into the buffer of a block just evicted.
		benchGet(b, benchTable(b, WriterOptions{BloomBitsPerKey: 10}, cache.New(1<<20)), present, true)
	})
	b.Run("hit/uncached", func(b *testing.B) {
		benchGet(b, benchTable(b, WriterOptions{BloomBitsPerKey: 10}, nil), present, true)
	})
	b.Run("absent/filter", func(b *testing.B) {
		benchGet(b, benchTable(b, WriterOptions{BloomBitsPerKey: 10}, nil), absent, false)
	})
	b.Run("absent/filter-no", func(b *testing.B) {
		// Only absent keys the filter rejects: the filter step alone, with
		// none of absent/filter's false positives, each a block read.
		r := benchTable(b, WriterOptions{BloomBitsPerKey: 10}, nil)
		rejected := func(i int) []byte {
			for ; ; i = (i + 1) % benchKeys {
				if k := absent(i); !r.MayContainHash(filter.Hash(k)) {
					return k
				}
			}
		}
		benchGet(b, r, rejected, false)
	})
	b.Run("absent/nofilter", func(b *testing.B) {
		benchGet(b, benchTable(b, WriterOptions{}, nil), absent, false)
	})
}

// BenchmarkScan reads the whole table, or 1000 entries from a random key
// (seek1000), with and without a block cache; allocs/entry counts every
// allocation of the op, the iterator's included.
func BenchmarkScan(b *testing.B) {
	for _, c := range []*Cache{nil, cache.New(64 << 20)} {
		r := benchTable(b, WriterOptions{BloomBitsPerKey: 10}, c)
		for _, n := range []int{benchKeys, 1000} {
			name := fmt.Sprintf("cached=%v", c != nil)
			if n < benchKeys {
				name = fmt.Sprintf("seek%d/cached=%v", n, c != nil)
			}
			b.Run(name, func(b *testing.B) {
				p := r.Properties()
				b.SetBytes(int64(p.RawKeyBytes+p.RawValueBytes) * int64(n) / benchKeys)
				rng := rand.New(rand.NewPCG(1, 2))
				var starts []base.InternalKey
				for i := 0; n < benchKeys && i < 4096; i++ {
					starts = append(starts, base.SeekKey(benchKey(2*rng.IntN(benchKeys-n)), base.MaxSeqNum))
				}
				before := r.Stats()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				mallocs := ms.Mallocs
				b.ReportAllocs()
				b.ResetTimer()
				defer cpuClock(b)()
				for i := 0; i < b.N; i++ {
					it := r.NewIter(nil, nil)
					seen := 0
					ok := it.First()
					if n < benchKeys {
						ok = it.SeekGE(starts[i%len(starts)])
					}
					for ; ok && seen < n; ok = it.Next() {
						seen++
					}
					if err := it.Close(); err != nil || seen != n {
						b.Fatalf("scan saw %d entries, err %v", seen, err)
					}
				}
				b.StopTimer()
				runtime.ReadMemStats(&ms)
				s := r.Stats()
				b.ReportMetric(float64(s.BlocksRead-before.BlocksRead)/float64(b.N), "blocks-read/op")
				b.ReportMetric(float64(ms.Mallocs-mallocs)/float64(b.N*n), "allocs/entry")
			})
		}
	}
}
