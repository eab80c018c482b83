package lsm

import (
	"encoding/binary"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/monbandb/monban/internal/cpuclock"
)

// benchKey writes the key of index i into dst: 16 bytes, a bijective mix
// of i so that insertion order is random relative to key order. Present
// keys are even indexes, absent ones odd: absent keys fall between present
// ones, inside every table's range, where only the filters can rule them
// out.
func benchKey(dst []byte, i uint64) []byte {
	x := i * 0x9e3779b97f4a7c15
	x ^= x >> 29
	dst = binary.BigEndian.AppendUint64(dst[:0], x)
	return binary.BigEndian.AppendUint64(dst, i)
}

const benchKeys = 200_000

// benchDB opens a DB in a temporary directory holding benchKeys present
// keys (values of 100 bytes), flushed and compacted.
func benchDB(b *testing.B, opts *Options) *DB {
	d := benchDBFilled(b, opts)
	if err := d.Compact(); err != nil {
		b.Fatal(err)
	}
	return d
}

// benchDBSettled is benchDB as the background work leaves it: flushed,
// then compacted only as far as the level targets ask, so L0 may hold
// tables beside the deeper levels, as in a DB in use.
func benchDBSettled(b *testing.B, opts *Options) *DB {
	d := benchDBFilled(b, opts)
	if err := d.Flush(); err != nil {
		b.Fatal(err)
	}
	d.waitIdle()
	return d
}

func benchDBFilled(b *testing.B, opts *Options) *DB {
	b.Helper()
	d, err := Open(b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	benchFill(b, d)
	return d
}

// benchFill writes benchDB's keys into d, in batches of 100.
func benchFill(b *testing.B, d *DB) {
	b.Helper()
	val := make([]byte, 100)
	var k []byte
	var batch Batch
	for i := uint64(0); i < benchKeys; i++ {
		k = benchKey(k, 2*i)
		batch.Put(k, val)
		if batch.Len() == 100 {
			if err := d.Write(&batch); err != nil {
				b.Fatal(err)
			}
			batch.Reset()
		}
	}
	if err := d.Write(&batch); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkPut(b *testing.B) {
	d, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	val := make([]byte, 100)
	var k []byte
	b.SetBytes(16 + 100)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k = benchKey(k, uint64(i))
		if err := d.Put(k, val); err != nil {
			b.Fatal(err)
		}
	}
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

// reportReads reports the table reads per op since before.
func reportReads(b *testing.B, d *DB, before Stats) {
	after := d.Stats()
	n := float64(b.N)
	b.ReportMetric(float64(after.Total.BlocksRead-before.Total.BlocksRead)/n, "blocks-read/op")
	b.ReportMetric(float64(after.Total.CacheHits-before.Total.CacheHits)/n, "cache-hits/op")
	b.ReportMetric(float64(after.Total.FilterNegatives-before.Total.FilterNegatives)/n, "filter-skips/op")
}

func benchGet(b *testing.B, opts *Options, present bool) {
	benchGets(b, benchDB(b, opts), present)
}

// benchGets reads random present keys of d, or absent ones.
func benchGets(b *testing.B, d *DB, present bool) {
	rng := rand.New(rand.NewPCG(1, 2))
	var k []byte
	before := d.Stats()
	b.ReportAllocs()
	defer cpuClock(b)()
	for b.Loop() {
		i := 2 * rng.Uint64N(benchKeys)
		if !present {
			i++
		}
		k = benchKey(k, i)
		_, err := d.Get(k)
		if present != (err == nil) {
			b.Fatalf("Get(%x): %v", k, err)
		}
	}
	reportReads(b, d, before)
}

// BenchmarkGetHit reads present keys with the default 8 MiB block cache,
// smaller than the tables: about 0.7 of the Gets read their block from the
// file, into a recycled buffer. allocs/op counts the value returned.
func BenchmarkGetHit(b *testing.B)  { benchGet(b, nil, true) }
func BenchmarkGetMiss(b *testing.B) { benchGet(b, nil, false) }

// BenchmarkGetHitCached is GetHit with a block cache that holds every
// table's blocks, warmed first: every Get is a cache hit, and the value
// returned is its only allocation.
func BenchmarkGetHitCached(b *testing.B) {
	d := benchDB(b, &Options{BlockCacheSize: 64 << 20})
	var k []byte
	for i := uint64(0); i < benchKeys; i++ {
		k = benchKey(k, 2*i)
		if _, err := d.Get(k); err != nil {
			b.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	before := d.Stats()
	b.ReportAllocs()
	defer cpuClock(b)()
	for b.Loop() {
		k = benchKey(k, 2*rng.Uint64N(benchKeys))
		if _, err := d.Get(k); err != nil {
			b.Fatalf("Get(%x): %v", k, err)
		}
	}
	reportReads(b, d, before)
}

// BenchmarkScan seeks to a random key and reads the next 1000 entries, with
// a block cache that holds every block, warmed first (cached), or with the
// default 8 MiB one, smaller than the tables (default-cache). allocs/entry
// is every allocation of the op, the iterator's own included, per entry
// read.
func BenchmarkScan(b *testing.B) {
	const n = 1000
	for _, tc := range []struct {
		name  string
		cache int64
	}{{"cached", 64 << 20}, {"default-cache", 0}} {
		b.Run(tc.name, func(b *testing.B) {
			d := benchDB(b, &Options{BlockCacheSize: tc.cache})
			scan := func(start []byte) {
				it := d.NewIter(nil)
				seen := 0
				for ok := it.SeekGE(start); ok && seen < n; ok = it.Next() {
					seen++
				}
				if err := it.Close(); err != nil || seen < n {
					b.Fatalf("scan from %x: %d entries, %v", start, seen, err)
				}
			}
			if tc.cache > 0 {
				it := d.NewIter(nil)
				for ok := it.First(); ok; ok = it.Next() {
				}
				if err := it.Close(); err != nil {
					b.Fatal(err)
				}
			}
			var k []byte
			rng := rand.New(rand.NewPCG(7, 8))
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			mallocs := ms.Mallocs
			b.ReportAllocs()
			b.ResetTimer()
			defer cpuClock(b)()
			for i := 0; i < b.N; i++ {
				// Keys are a random mix of their index: start anywhere but
				// near the end, so that n entries follow.
				k = binary.BigEndian.AppendUint64(k[:0], rng.Uint64N(^uint64(0)-^uint64(0)/64))
				scan(k)
			}
			b.StopTimer()
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.Mallocs-mallocs)/float64(b.N*n), "allocs/entry")
		})
	}
}

// BenchmarkGetMissIgnoreFilters is GetMiss on the same data with filters
// switched off: what every miss would cost without them.
func BenchmarkGetMissIgnoreFilters(b *testing.B) { benchGet(b, &Options{IgnoreFilters: true}, false) }

// BenchmarkDelete measures deletes of absent and of present keys, with the
// absent-key proof on (the default) and off: what the proof saves on the
// former and costs on the latter.
func BenchmarkDelete(b *testing.B) {
	for _, tc := range []struct {
		name    string
		present bool
		keep    bool
	}{
		{"absent/proof", false, false},
		{"absent/no-proof", false, true},
		{"present/proof", true, false},
		{"present/no-proof", true, true},
	} {
		b.Run(tc.name, func(b *testing.B) {
			d := benchDB(b, &Options{KeepAbsentDeletes: tc.keep})
			rng := rand.New(rand.NewPCG(3, 4))
			var k []byte
			before := d.Stats()
			b.ReportAllocs()
			for b.Loop() {
				i := 2 * rng.Uint64N(benchKeys)
				if !tc.present {
					i++
				}
				k = benchKey(k, i)
				if err := d.Delete(k); err != nil {
					b.Fatal(err)
				}
			}
			after := d.Stats()
			b.ReportMetric(float64(after.DeletesElided-before.DeletesElided)/float64(b.N), "elided/op")
			b.ReportMetric(float64(after.WALBytes-before.WALBytes)/float64(b.N), "wal-bytes/op")
			b.ReportMetric(float64(after.DeleteProofProbes-before.DeleteProofProbes)/float64(b.N), "proof-probes/op")
		})
	}
}

// BenchmarkDeleteProof is the absent-key proof of Delete alone, on a
// settled DB: what KeepAbsentDeletes saves a delete of an absent key, and
// what it costs one of a present key (BenchmarkDelete measures the whole
// delete, whose WAL write hides the proof's cost in its noise).
func BenchmarkDeleteProof(b *testing.B) {
	d := benchDBSettled(b, nil)
	for _, present := range []bool{true, false} {
		name := map[bool]string{true: "present", false: "absent"}[present]
		b.Run(name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(7, 8))
			var k []byte
			proved := 0
			before := d.Stats()
			for b.Loop() {
				i := 2 * rng.Uint64N(benchKeys)
				if !present {
					i++
				}
				k = benchKey(k, i)
				if d.provablyAbsent(k) {
					proved++
				}
			}
			after := d.Stats()
			if present && proved > 0 {
				b.Fatalf("%d present keys proved absent", proved)
			}
			b.ReportMetric(float64(proved)/float64(b.N), "proved/op")
			b.ReportMetric(float64(after.DeleteProofProbes-before.DeleteProofProbes)/float64(b.N), "proof-probes/op")
		})
	}
}

// BenchmarkGetMissParallel is GetMiss from every core at once: what the
// shared structures of the read path (read state, table cache, block
// cache) cost under contention.
func BenchmarkGetMissParallel(b *testing.B) {
	d := benchDB(b, nil)
	var seed atomic.Uint64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		rng := rand.New(rand.NewPCG(seed.Add(1), 2))
		var k []byte
		for pb.Next() {
			k = benchKey(k, 2*rng.Uint64N(benchKeys)+1)
			if _, err := d.Get(k); err == nil {
				b.Fatalf("Get(%x) found an absent key", k)
			}
		}
	})
}

// reportKeys reports, when the benchmark function returns, figures per key
// read of a benchmark reading perOp keys per op: keys/s, the process's CPU
// ns (all goroutines', so work split between them counts whole), and the
// data blocks found in the block cache and read from the file.
func reportKeys(b *testing.B, d *DB, perOp int) func() {
	b.ReportAllocs()
	before, cpu := d.Stats(), cpuclock.Process()
	return func() {
		keys := float64(b.N * perOp)
		after := d.Stats()
		b.ReportMetric(keys/b.Elapsed().Seconds(), "keys/s")
		b.ReportMetric(float64(cpuclock.Process()-cpu)/keys, "cpu-ns/key")
		b.ReportMetric(float64(after.Total.CacheHits-before.Total.CacheHits)/keys, "cache-hits/key")
		b.ReportMetric(float64(after.Total.BlocksRead-before.Total.BlocksRead)/keys, "blocks-read/key")
	}
}

// BenchmarkMultiGet reads 32 keys per op as one MultiGet and as 32 Gets:
// random present keys, random absent ones, and a run of 32 present keys
// in key order from a random start (dense), most of which share data
// blocks. keys/s is the figure to compare.
func BenchmarkMultiGet(b *testing.B) {
	d := benchDBSettled(b, nil)
	b.Logf("shape: %s", d.rs.Load().version.String())
	// Every present key in key order, for the dense runs.
	var sorted [][]byte
	it := d.NewIter(nil)
	for k := range it.All() {
		sorted = append(sorted, slices.Clone(k))
	}
	if err := it.Close(); err != nil {
		b.Fatal(err)
	}
	for _, batch := range []string{"present", "absent", "dense"} {
		rng := rand.New(rand.NewPCG(5, 6))
		keys := make([][]byte, 32)
		next := func() {
			start := rng.IntN(len(sorted) - len(keys))
			for i := range keys {
				switch batch {
				case "present":
					keys[i] = benchKey(keys[i][:0], 2*rng.Uint64N(benchKeys))
				case "absent":
					keys[i] = benchKey(keys[i][:0], 2*rng.Uint64N(benchKeys)+1)
				case "dense":
					keys[i] = sorted[start+i]
				}
			}
		}
		want := map[bool]error{true: ErrNotFound, false: nil}[batch == "absent"]
		name := batch
		b.Run(name+"/MultiGet", func(b *testing.B) {
			defer reportKeys(b, d, len(keys))()
			for b.Loop() {
				next()
				if _, errs := d.MultiGet(keys); errs[0] != want {
					b.Fatal(errs[0])
				}
			}
		})
		b.Run(name+"/Gets", func(b *testing.B) {
			defer reportKeys(b, d, len(keys))()
			for b.Loop() {
				next()
				for _, k := range keys {
					if _, err := d.Get(k); err != want {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkPrefixMiss iterates over absent prefixes: benchKey's first 8
// bytes, under a Split that cuts there, of odd indexes, which lie inside
// a table's range on every level. With the filters each such table is
// skipped unread; with them ignored each costs an index search and a data
// block (data-blocks/op counts lookups, from the cache or the file).
func BenchmarkPrefixMiss(b *testing.B) {
	for _, ignore := range []bool{false, true} {
		name := "filters"
		if ignore {
			name = "ignore-filters"
		}
		b.Run(name, func(b *testing.B) {
			d := benchDB(b, &Options{Split: fixedSplit("first8", 8), IgnoreFilters: ignore})
			rng := rand.New(rand.NewPCG(1, 2))
			var k []byte
			blocks := dataBlockLookups(b, d)
			defer cpuClock(b)()
			for b.Loop() {
				k = benchKey(k, 2*rng.Uint64N(benchKeys)+1)
				it := d.NewIter(&IterOptions{Prefix: k[:8]})
				if it.First() {
					b.Fatalf("prefix %x: found %x", k[:8], it.Key())
				}
				if err := it.Close(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(dataBlockLookups(b, d)-blocks)/float64(b.N), "data-blocks/op")
		})
	}
}
