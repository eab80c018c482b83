package lsm

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/monbandb/monban/internal/cpuclock"
)

// BenchmarkGetBesideRangeTombstones is GetHit and GetMiss beside n live
// range tombstones over no key read, laid out much as kvbench's
// -range_tombstones lays them: span j lies in the gap just above a present
// key, [key+"a", key+"b"), written before the fill (so they go down the
// tree with its keys, cut at the tables' bounds), and the spans a
// compaction into the last level dropped are written again into the
// active memtable. The hits run with those in the memtable, the misses
// after a flush has made them an L0 table of range tombstones only, which
// every Get's key falls in: as kvbench's readrandom and then readmissing
// find them. n=0 is the same DB without them: issue 24 asks the two to
// cost the same within 5%.
func BenchmarkGetBesideRangeTombstones(b *testing.B) {
	for _, n := range []int{0, 1000} {
		d := benchDBBesideRangeTombstones(b, n)
		for _, present := range []bool{true, false} {
			name := fmt.Sprintf("n=%d/miss", n)
			if present {
				name = fmt.Sprintf("n=%d/hit", n)
			} else if err := d.Flush(); err != nil {
				b.Fatal(err)
			}
			b.Run(name, func(b *testing.B) { benchGets(b, d, present) })
		}
	}
}

// benchRangeTombstone returns span j of n: the gap just above present key
// (2j+1)·benchKeys/2n, which holds no key benchKey makes.
func benchRangeTombstone(j, n int) (start, end []byte) {
	k := benchKey(nil, 2*uint64((2*j+1)*benchKeys/(2*n)))
	return append(k[:len(k):len(k)], 'a'), append(k[:len(k):len(k)], 'b')
}

// benchDBBesideRangeTombstones is benchDBSettled with n range tombstones
// live (BenchmarkGetBesideRangeTombstones).
func benchDBBesideRangeTombstones(b *testing.B, n int) *DB {
	b.Helper()
	d, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.Close() })
	var batch Batch
	for j := range n {
		batch.DeleteRange(benchRangeTombstone(j, n))
	}
	if err := d.Write(&batch); err != nil {
		b.Fatal(err)
	}
	benchFill(b, d)
	if err := d.Flush(); err != nil {
		b.Fatal(err)
	}
	d.waitIdle()
	// Explain first, then write: a read after each write would fragment
	// the memtable's tombstones again every time.
	batch.Reset()
	for j := range n {
		start, end := benchRangeTombstone(j, n)
		tr, err := d.Explain(start)
		if err != nil {
			b.Fatal(err)
		}
		if tr.Result != ResultRangeDeleted {
			batch.DeleteRange(start, end)
		}
	}
	if err := d.Write(&batch); err != nil {
		b.Fatal(err)
	}
	return d
}

// BenchmarkDeleteRange is the cost of one DeleteRange call into the
// memtable, with disjoint ranges in random order, as bench/peers' delrange
// draws them: the batch, its WAL record and the memtable's Set.Add. No
// read follows, so nothing fragments the tombstones.
func BenchmarkDeleteRange(b *testing.B) {
	d, err := Open(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	var start, end []byte
	b.ReportAllocs()
	defer cpuClock(b)()
	for i := 0; b.Loop(); i++ {
		start = benchKey(start, 2*uint64(i))
		end = append(append(end[:0], start...), 0)
		if err := d.DeleteRange(start, end); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFlushRangeTombstones is the Flush after 100 DeleteRange calls
// over a DB of benchKeys, as in bench/peers' delrange: a memtable of range
// tombstones only becomes an L0 table. Its time is mostly fsyncs: the old
// WAL's and the directory's at rotation, the table's, the manifest's.
func BenchmarkFlushRangeTombstones(b *testing.B) {
	d := benchDBSettled(b, nil)
	var start, end []byte
	next := uint64(0)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		for range 100 {
			start = benchKey(start, 2*next)
			end = benchKey(end, 2*next+2000)
			if bytes.Compare(start, end) > 0 {
				start, end = end, start
			}
			next += 7
			if err := d.DeleteRange(start, end); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		if err := d.Flush(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetBesideRangeTombstonesPaired is BenchmarkGetBesideRangeTombstones
// with both DBs, n=0 and n=1000, built in one process and read in turns:
// the same keys, pairedChunk Gets at a time on one DB then the other, the
// first alternating, each chunk timed on this thread's CPU clock. Load from
// other processes then falls on both alike, and "ratio" (n=1000's CPU time
// over n=0's) is what issue 24 asks to be within 1.05, which separate runs
// on a shared machine spread too widely to show. An op is one Get on each.
func BenchmarkGetBesideRangeTombstonesPaired(b *testing.B) {
	without, with := benchDBBesideRangeTombstones(b, 0), benchDBBesideRangeTombstones(b, 1000)
	for _, present := range []bool{true, false} {
		name := "hit"
		if !present {
			name = "miss"
			for _, d := range []*DB{without, with} {
				if err := d.Flush(); err != nil {
					b.Fatal(err)
				}
			}
		}
		b.Run(name, func(b *testing.B) { benchGetsPaired(b, [2]*DB{without, with}, present) })
	}
}

// pairedChunk is how many Gets a turn of benchGetsPaired makes on one DB:
// enough that reading the clock is lost in them (a read took about 2 µs
// here, 14% of a turn of 100 misses), few enough that a burst of load
// elsewhere meets both DBs.
const pairedChunk = 1000

// benchGetsPaired reads the same random present keys of both DBs, or
// absent ones, in turns, and reports each one's CPU ns per Get and the
// ratio of the second's to the first's.
func benchGetsPaired(b *testing.B, dbs [2]*DB, present bool) {
	var rngs [2]*rand.Rand
	for i := range rngs {
		rngs[i] = rand.New(rand.NewPCG(1, 2))
	}
	var cpu [2]time.Duration
	var k []byte
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ResetTimer()
	for done, turn := 0, 0; done < b.N; done, turn = done+pairedChunk, turn+1 {
		gets := min(pairedChunk, b.N-done)
		for j := range 2 {
			// Each DB goes first in every other turn, so that neither
			// always follows the other's use of the caches.
			i := j ^ turn&1
			start := cpuclock.Thread()
			for range gets {
				x := 2 * rngs[i].Uint64N(benchKeys)
				if !present {
					x++
				}
				k = benchKey(k, x)
				if _, err := dbs[i].Get(k); present != (err == nil) {
					b.Fatalf("Get(%x): %v", k, err)
				}
			}
			cpu[i] += cpuclock.Thread() - start
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(cpu[0])/float64(b.N), "cpu-ns/get-n=0")
	b.ReportMetric(float64(cpu[1])/float64(b.N), "cpu-ns/get-n=1000")
	b.ReportMetric(float64(cpu[1])/float64(cpu[0]), "ratio")
}
