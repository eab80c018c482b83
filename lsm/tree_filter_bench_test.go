package lsm

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/manifest"
)

// BenchmarkTreeFilterGrowthWait times what a reader of the tree-wide
// filter waits while a flush's filing doubles the maplet: a maplet of
// 2^22 slots is built at a load just under filter.MapletMaxLoad, then
// one table of 65,536 keys enters, which takes it past, while a reader
// probes in a loop. It reports the longest time one probe took
// (max-probe-ms) and the filing's own time (enter-ms). Run with
//
//	go test -run XXX -bench TreeFilterGrowthWait -benchtime 3x ./lsm/
func BenchmarkTreeFilterGrowthWait(b *testing.B) {
	const minSlots, perTable = 1 << 22, 1 << 16
	rng := rand.New(rand.NewPCG(1, 2))
	table := func() []uint64 {
		hs := make([]uint64, perTable)
		for i := range hs {
			hs[i] = rng.Uint64() >> (64 - filter.KeyHashBits) << (64 - filter.KeyHashBits)
		}
		slices.Sort(hs)
		return slices.Compact(hs)
	}
	var worst, filing time.Duration
	for range b.N {
		var keysMu sync.Mutex
		keys := map[uint64][]uint64{}
		hashes := func(dst []uint64, f *manifest.FileMetadata) ([]uint64, error) {
			keysMu.Lock()
			defer keysMu.Unlock()
			return append(dst, keys[f.FileNum]...), nil
		}
		var ps []manifest.Placement
		entries := 0
		for n := uint64(1); float64(entries+perTable) < 0.8*minSlots; n++ {
			keys[n] = table()
			entries += len(keys[n])
			ps = append(ps, manifest.Placement{Level: 6, File: &manifest.FileMetadata{FileNum: n}})
		}
		tf := newTreeFilter(hashes, treeFilterPayloadBits, minSlots)
		tf.start(ps)
		tf.builds.Wait()
		// File tables until the next one crosses MapletMaxLoad; the last
		// is timed with a reader probing throughout.
		next := uint64(len(ps) + 1)
		for float64(tf.m.Len()+perTable) <= filter.MapletMaxLoad*float64(tf.m.Slots()) {
			keysMu.Lock()
			keys[next] = table()
			keysMu.Unlock()
			tf.enter([]manifest.NewFile{{Level: 0, Meta: &manifest.FileMetadata{FileNum: next}}}, nil)
			next++
		}
		keysMu.Lock()
		keys[next] = table()
		keysMu.Unlock()
		stop := make(chan struct{})
		done := make(chan time.Duration)
		go func() {
			var longest time.Duration
			probes := table()
			for i := 0; ; i++ {
				select {
				case <-stop:
					done <- longest
					return
				default:
				}
				start := time.Now()
				tf.lookup(probes[i%len(probes)])
				longest = max(longest, time.Since(start))
			}
		}()
		slots := tf.m.Slots()
		start := time.Now()
		tf.enter([]manifest.NewFile{{Level: 0, Meta: &manifest.FileMetadata{FileNum: next}}}, nil)
		filing += time.Since(start)
		close(stop)
		worst = max(worst, <-done)
		tf.builds.Wait()
		if tf.m.Slots() == slots {
			b.Fatalf("the maplet did not double: %d slots", slots)
		}
		tf.close()
	}
	b.ReportMetric(float64(worst.Microseconds())/1e3, "max-probe-ms")
	b.ReportMetric(float64(filing.Microseconds())/1e3/float64(b.N), "enter-ms")
}
