package lsm

import (
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/monbandb/monban/vfs"
)

// The concurrency checks (linearizability_test.go, atomicity_test.go) run
// for a short time by default, so that CI under -race stays quick, and
// longer on request:
//
//	MONBAN_STRESS_SECONDS=120 go test -race -run 'Linearizable|Atomic' ./lsm
//	MONBAN_SEED=1234 go test -run TestLinearizable ./lsm   # replay a seed
//
// A seed fixes what every client does, not how the scheduler interleaves
// them, so a replay reproduces a failure often, not always: run it with a
// long MONBAN_STRESS_SECONDS.

// stressDuration returns how long a check runs in all: short unless
// MONBAN_STRESS_SECONDS says otherwise.
func stressDuration(t *testing.T, short time.Duration) time.Duration {
	s := os.Getenv("MONBAN_STRESS_SECONDS")
	if s == "" {
		return short
	}
	n, err := strconv.ParseFloat(s, 64)
	if err != nil || n <= 0 {
		t.Fatalf("MONBAN_STRESS_SECONDS=%q: want a positive number of seconds", s)
	}
	return time.Duration(n * float64(time.Second))
}

// stressSeeds returns the seed of each round: MONBAN_SEED for every round
// when set (a replay), otherwise a fresh random seed per round.
func stressSeeds(t *testing.T) func() uint64 {
	if s := os.Getenv("MONBAN_SEED"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("MONBAN_SEED=%q: want an unsigned integer", s)
		}
		return func() uint64 { return n }
	}
	return func() uint64 { return rand.Uint64() >> 1 }
}

// moreThreadsThanCores runs the test with more Ps than the machine has
// cores, so that the kernel preempts OS threads at arbitrary instructions
// — also between two loads that the Go scheduler would never split — and
// a descheduled reader misses whole rotations and flushes. Tests that call
// it must not run in parallel with others.
func moreThreadsThanCores(t *testing.T) {
	old := runtime.GOMAXPROCS(max(8, 4*runtime.NumCPU()))
	t.Cleanup(func() { runtime.GOMAXPROCS(old) })
}

// tinyOptions makes every structure small, so that memtable rotations,
// flushes and compactions happen every few dozen writes and race the
// clients. The DB lives in memory: flushes on a real disk wait for fsyncs,
// and the checks want as many flushes per second as they can get.
func tinyOptions(base Options) *Options {
	o := base
	o.FS = vfs.NewMem()
	// A few dozen entries: many rotations, yet a put and the delete after
	// it usually share a memtable.
	o.MemtableSize = 4 << 10
	o.TargetFileSize = 4 << 10
	o.LBaseMaxBytes = 16 << 10
	o.L0CompactionThreshold = 2
	o.BlockCacheSize = 256 << 10
	return &o
}

// openStressDB opens a DB with opts and widens its race windows: now and
// then a read stalls between loading its read state and its sequence
// number, and a commit between applying its group and publishing it, long
// enough for writes, rotations and flushes to run in between. Without the
// stalls those windows are a few instructions wide, and an engine that
// reads them in the wrong order would pass a short run by luck.
func openStressDB(opts *Options) (*DB, error) {
	db, err := Open("db", opts)
	if err != nil {
		return nil, err
	}
	stall := func() {
		if rand.IntN(64) == 0 {
			time.Sleep(time.Duration(50+rand.IntN(250)) * time.Microsecond)
		}
	}
	db.hooks.betweenReadLoads, db.hooks.beforePublish = stall, stall
	return db, nil
}

// churn calls Flush in a loop, and Compact every few flushes, until stop
// is closed; the first error goes to fail. The caller waits on wg.
func churn(db *DB, stop <-chan struct{}, wg *sync.WaitGroup, fail func(string, ...any)) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := db.Flush(); err != nil {
				fail("Flush: %v", err)
				return
			}
			if i%16 == 0 {
				if err := db.Compact(); err != nil {
					fail("Compact: %v", err)
					return
				}
			}
			// Pause so that memtables also fill up and rotate by size, and a
			// put and the delete after it often share one.
			time.Sleep(time.Millisecond)
		}
	}()
}
