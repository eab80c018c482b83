package lsm

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestBatchesAtomic checks that readers see every batch whole and never
// one older than a batch they saw before. Each group has one writer; its
// batch n
//
//   - deletes marker n/2 (n even: by Delete, or when n is a multiple of 4
//     by a DeleteRange over all the group's markers) or puts marker
//     (n+1)/2 with value n (n odd), first, and then
//   - writes counter n to every counter key of the group.
//
// The invariant readers check, for the counter n they see: all counters of
// the group equal n; the group's only live marker is (n+1)/2 holding n
// when n is odd, and none is live when n is even. An even batch's delete
// meets its marker's only put, written by the batch before, usually still
// alone in the active memtable: the case where the engine once removed the
// put in place (annihilation) before the batch was published, and readers
// saw the marker gone but not the counters. Each marker key is written
// once and deleted once, so no table holds an older version of it and the
// filters prove it absent: such an engine would take the shortcut.
//
// Readers check through snapshots (Snapshot.Get of every key), iterators
// (one scan of the DB) and pairs of Gets (Get(a) then Get(b) of two
// counters of a group: b's counter is at least a's, since counters only go
// up and the second read starts after the first returned), and each reader
// checks that the counters it sees never go backwards.
func TestBatchesAtomic(t *testing.T) {
	moreThreadsThanCores(t)
	configs := []struct {
		name string
		opts Options
	}{
		{"default", Options{}},
		{"KeepAbsentDeletes", Options{KeepAbsentDeletes: true}},
	}
	total := stressDuration(t, 3*time.Second)
	seeds := stressSeeds(t)
	for _, c := range configs {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			deadline := start.Add(total / time.Duration(len(configs)))
			var rounds int
			var st atomicStats
			for rounds == 0 || time.Now().Before(deadline) {
				seed := seeds()
				if err := runAtomicRound(t, tinyOptions(c.opts), seed, &st); err != nil {
					t.Fatalf("seed %d (MONBAN_SEED=%d to replay), %s, round %d, after %.1fs: %v",
						seed, seed, c.name, rounds+1, time.Since(start).Seconds(), err)
				}
				rounds++
			}
			t.Logf("%s: %d rounds, %d batches, %d snapshot views, %d scans, %d get pairs checked, in %.1fs",
				c.name, rounds, st.batches.Load(), st.snapshots.Load(), st.scans.Load(), st.pairs.Load(),
				time.Since(start).Seconds())
		})
	}
}

const (
	atomicGroups      = 3
	atomicCounters    = 3 // counter keys per group
	atomicBatches     = 150
	atomicReaders     = 4
	atomicRoundLength = 250 * time.Millisecond // at most; writers usually finish first
)

type atomicStats struct {
	batches, snapshots, scans, pairs atomic.Uint64
}

func counterKey(g, i int) []byte { return fmt.Appendf(nil, "g%d-c%d", g, i) }

// markerKey is marker m of group g; markers sort after the counters.
func markerKey(g int, m uint64) []byte { return fmt.Appendf(nil, "g%d-m%08d", g, m) }

// atomicValue encodes counter n, padded so that a few batches fill a tiny
// memtable.
func atomicValue(n uint64) []byte { return fmt.Appendf(nil, "%010d%030d", n, 0) }

func parseAtomicValue(v []byte) (uint64, error) {
	if len(v) != 40 {
		return 0, fmt.Errorf("value %q is not one the test wrote", v)
	}
	n, err := strconv.ParseUint(string(v[:10]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("value %q is not one the test wrote", v)
	}
	return n, nil
}

// groupView is what a reader saw of one group: each counter (0: absent),
// and every live marker.
type groupView struct {
	counters [atomicCounters]uint64
	markers  map[uint64]uint64 // marker number → value
}

// check returns the batch n the view shows, or an error if it is not the
// state after one whole batch.
func (v groupView) check(g int) (uint64, error) {
	n := v.counters[0]
	for i, c := range v.counters {
		if c != n {
			return 0, fmt.Errorf("group %d counters %v: counter %d is %d, counter 0 is %d: a torn batch", g, v.counters, i, c, n)
		}
	}
	switch {
	case n%2 == 1 && (len(v.markers) != 1 || v.markers[(n+1)/2] != n):
		return 0, fmt.Errorf("group %d at batch %d (odd) shows markers %v, want only marker %d holding %d: a torn batch", g, n, v.markers, (n+1)/2, n)
	case n%2 == 0 && len(v.markers) != 0:
		return 0, fmt.Errorf("group %d at batch %d (even) shows markers %v, want none: a torn batch", g, n, v.markers)
	}
	return n, nil
}

func runAtomicRound(t *testing.T, opts *Options, seed uint64, st *atomicStats) error {
	db, err := openStressDB(opts)
	if err != nil {
		return err
	}
	defer db.Close()

	var (
		mu       sync.Mutex
		firstErr error
		failed   atomic.Bool
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		if firstErr == nil {
			firstErr = fmt.Errorf(format, args...)
		}
		mu.Unlock()
		failed.Store(true)
	}
	stop := make(chan struct{})
	var bg, writers sync.WaitGroup
	churn(db, stop, &bg, fail)

	for g := range atomicGroups {
		writers.Add(1)
		go func() {
			defer writers.Done()
			for n := uint64(1); n <= atomicBatches && !failed.Load(); n++ {
				var b Batch
				switch n % 4 {
				case 1, 3:
					b.Put(markerKey(g, (n+1)/2), atomicValue(n))
				case 2:
					b.Delete(markerKey(g, n/2))
				case 0:
					// Every marker of the group, those to come included:
					// they are newer than the tombstone and survive it.
					b.DeleteRange(markerKey(g, 0), markerKey(g, 1e8-1))
				}
				for i := range atomicCounters {
					b.Put(counterKey(g, i), atomicValue(n))
				}
				if err := db.Write(&b); err != nil {
					fail("writer %d batch %d: %v", g, n, err)
					return
				}
				st.batches.Add(1)
			}
		}()
	}

	for r := range atomicReaders {
		bg.Add(1)
		go func() {
			defer bg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(r)))
			var last [atomicGroups]uint64 // the newest batch seen per group
			saw := func(how string, g int, n uint64) {
				if n < last[g] {
					fail("reader %d: %s shows group %d at batch %d after batch %d: went backwards", r, how, g, n, last[g])
				}
				last[g] = max(last[g], n)
			}
			for !failed.Load() {
				select {
				case <-stop:
					return
				default:
				}
				switch rng.IntN(3) {
				case 0:
					views, err := readSnapshot(db, last)
					if err != nil {
						fail("reader %d: snapshot: %v", r, err)
						return
					}
					for g, v := range views {
						n, err := v.check(g)
						if err != nil {
							fail("reader %d: snapshot: %v", r, err)
							return
						}
						saw("snapshot", g, n)
					}
					st.snapshots.Add(1)
				case 1:
					views, err := readScan(db)
					if err != nil {
						fail("reader %d: scan: %v", r, err)
						return
					}
					for g, v := range views {
						n, err := v.check(g)
						if err != nil {
							fail("reader %d: scan: %v", r, err)
							return
						}
						saw("scan", g, n)
					}
					st.scans.Add(1)
				default:
					g, a, b := rng.IntN(atomicGroups), rng.IntN(atomicCounters), rng.IntN(atomicCounters)
					na, err := getCounter(db, counterKey(g, a))
					if err != nil {
						fail("reader %d: %v", r, err)
						return
					}
					saw(fmt.Sprintf("Get(%s)", counterKey(g, a)), g, na)
					nb, err := getCounter(db, counterKey(g, b))
					if err != nil {
						fail("reader %d: %v", r, err)
						return
					}
					saw(fmt.Sprintf("Get(%s) after Get(%s) gave %d", counterKey(g, b), counterKey(g, a), na), g, nb)
					st.pairs.Add(1)
				}
				if rng.IntN(4) == 0 {
					runtime.Gosched()
				}
			}
		}()
	}

	done := make(chan struct{})
	go func() { writers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(atomicRoundLength):
		failed.Store(true) // ends the writers early; not an error
		<-done
	}
	close(stop)
	bg.Wait()
	return firstErr
}

// getCounter returns a counter's value, 0 when absent.
func getCounter(db *DB, key []byte) (uint64, error) {
	v, err := db.Get(key)
	switch {
	case errors.Is(err, ErrNotFound):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("Get(%s): %w", key, err)
	}
	n, err := parseAtomicValue(v)
	if err != nil {
		return 0, fmt.Errorf("Get(%s): %w", key, err)
	}
	return n, nil
}

// readSnapshot reads every group through one snapshot with Snapshot.Get:
// the counters, and the markers that could be live given the counters the
// reader saw before (last) and the counter it sees now.
func readSnapshot(db *DB, last [atomicGroups]uint64) ([atomicGroups]groupView, error) {
	var views [atomicGroups]groupView
	s := db.NewSnapshot()
	defer s.Close()
	get := func(key []byte) (uint64, bool, error) {
		v, err := s.Get(key)
		switch {
		case errors.Is(err, ErrNotFound):
			return 0, false, nil
		case err != nil:
			return 0, false, fmt.Errorf("Get(%s): %w", key, err)
		}
		n, err := parseAtomicValue(v)
		return n, true, err
	}
	for g := range atomicGroups {
		v := &views[g]
		for i := range atomicCounters {
			n, _, err := get(counterKey(g, i))
			if err != nil {
				return views, err
			}
			v.counters[i] = n
		}
		// Every marker from the one the reader last saw to the one the
		// counter names, and the next: any of them live would be a tear.
		v.markers = make(map[uint64]uint64)
		lo, hi := (min(last[g], v.counters[0])+1)/2, (max(last[g], v.counters[0])+1)/2+1
		for m := max(lo, 1); m <= hi; m++ {
			n, ok, err := get(markerKey(g, m))
			if err != nil {
				return views, err
			}
			if ok {
				v.markers[m] = n
			}
		}
	}
	return views, nil
}

// readScan reads every group with one full scan.
func readScan(db *DB) ([atomicGroups]groupView, error) {
	var views [atomicGroups]groupView
	for g := range views {
		views[g].markers = make(map[uint64]uint64)
	}
	it := db.NewIter(nil)
	for k, v := range it.All() {
		var g, i int
		var m uint64
		n, err := parseAtomicValue(v)
		if err != nil {
			it.Close()
			return views, fmt.Errorf("%s: %w", k, err)
		}
		if _, err := fmt.Sscanf(string(k), "g%d-c%d", &g, &i); err == nil && g < atomicGroups && i < atomicCounters && len(k) == 5 {
			views[g].counters[i] = n
		} else if _, err := fmt.Sscanf(string(k), "g%d-m%d", &g, &m); err == nil && g < atomicGroups {
			views[g].markers[m] = n
		} else {
			it.Close()
			return views, fmt.Errorf("scan found key %q the test never wrote", k)
		}
	}
	return views, it.Close()
}
