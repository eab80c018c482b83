package filter

import (
	"fmt"
	"github.com/monbandb/monban/internal/cpuclock"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"
)

// Quotient filter benchmarks: Insert, MayContain (absent and present keys)
// and Delete at 50% and 90% load, on a filter inside the CPU cache (2^16
// slots, 88 KiB) and one far larger (2^24 slots, 22 MiB). Keys are
// pre-hashed so the figures are the filter's own cost. Run with
//
//	go test -run XXX -bench BenchmarkQuotient -benchmem ./filter/
//
// Insert and Delete keep the load within one batch (1% of the slots) of the
// target: the timer stops while a batch is undone. Besides wall-clock ns/op,
// each reports cpu-ns/op, the thread's CPU time (internal/cpuclock),
// which other jobs on a shared machine disturb less.

type qfBenchKey struct{ qbits, pct int }

var qfBenchFilters = map[qfBenchKey]*Quotient{}

// qfBenchFilter returns a shared filter of 2^qbits slots filled with hashes
// from seed 1 to pct% load; callers that modify it Clone it.
func qfBenchFilter(b *testing.B, qbits, pct int) *Quotient {
	k := qfBenchKey{qbits, pct}
	if f := qfBenchFilters[k]; f != nil {
		return f
	}
	f, _ := NewQuotient(uint(qbits), 8)
	rng := rand.New(rand.NewPCG(1, uint64(qbits)))
	for f.Len() < f.Slots()*pct/100 {
		if err := f.InsertHash(rng.Uint64()); err != nil {
			b.Fatal(err)
		}
	}
	qfBenchFilters[k] = f
	return f
}

func BenchmarkQuotient(b *testing.B) {
	for _, qbits := range []int{16, 24} {
		for _, pct := range []int{50, 90} {
			name := fmt.Sprintf("slots=2^%d/load=%d%%", qbits, pct)
			b.Run("Insert/"+name, func(b *testing.B) { benchQuotientUpdate(b, qbits, pct, true) })
			b.Run("Delete/"+name, func(b *testing.B) { benchQuotientUpdate(b, qbits, pct, false) })
			b.Run("MayContainAbsent/"+name, func(b *testing.B) { benchQuotientMayContain(b, qbits, pct, false) })
			b.Run("MayContainPresent/"+name, func(b *testing.B) { benchQuotientMayContain(b, qbits, pct, true) })
		}
	}
}

// benchQuotientUpdate times inserts of new hashes into a filter at pct%
// load, or deletes of hashes just inserted into it, in batches of 1% of
// the slots; between batches, with the timer stopped, it undoes an insert
// batch, or inserts the next batch to delete.
func benchQuotientUpdate(b *testing.B, qbits, pct int, insert bool) {
	f := qfBenchFilter(b, qbits, pct).Clone()
	batch := make([]uint64, f.Slots()/100)
	rng := rand.New(rand.NewPCG(2, 0))
	fill := func() {
		for i := range batch {
			batch[i] = rng.Uint64()
		}
	}
	fill()
	if !insert {
		for _, h := range batch {
			_ = f.InsertHash(h)
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	var cpu time.Duration
	start := cpuclock.Thread()
	i := 0
	for n := 0; n < b.N; n++ {
		if i == len(batch) {
			cpu += cpuclock.Thread() - start
			b.StopTimer()
			if insert { // undo the batch; a delete batch undid itself
				for _, h := range batch {
					f.DeleteHash(h)
				}
			}
			fill()
			if !insert {
				for _, h := range batch {
					_ = f.InsertHash(h)
				}
			}
			i = 0
			b.StartTimer()
			start = cpuclock.Thread()
		}
		if insert {
			if err := f.InsertHash(batch[i]); err != nil {
				b.Fatal(err)
			}
		} else if !f.DeleteHash(batch[i]) {
			b.Fatal("delete of inserted hash failed")
		}
		i++
	}
	cpu += cpuclock.Thread() - start
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(f.LoadFactor(), "load")
}

// benchQuotientMayContain times lookups of absent (fresh random) or present
// hashes.
func benchQuotientMayContain(b *testing.B, qbits, pct int, present bool) {
	f := qfBenchFilter(b, qbits, pct)
	probe := make([]uint64, 1<<16)
	if present {
		rng := rand.New(rand.NewPCG(1, uint64(qbits))) // the fill's sequence
		for i := range probe {
			probe[i] = rng.Uint64()
		}
	} else {
		rng := rand.New(rand.NewPCG(3, 0))
		for i := range probe {
			probe[i] = rng.Uint64()
		}
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b.ReportAllocs()
	b.ResetTimer()
	start := cpuclock.Thread()
	hits := 0
	for n := 0; n < b.N; n++ {
		if f.MayContainHash(probe[n&(len(probe)-1)]) {
			hits++
		}
	}
	b.ReportMetric(float64(cpuclock.Thread()-start)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(hits)/float64(b.N), "maybe/op")
	b.ReportMetric(f.LoadFactor(), "load")
	b.ReportMetric(float64(f.SizeBytes())/float64(f.Slots()), "bytes/slot")
}
