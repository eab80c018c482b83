package main

import (
	"context"
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/monbandb/monban/internal/cpuclock"
	"github.com/monbandb/monban/lsm"
)

// thread is one goroutine's share of a workload. Everything in it is
// private to the goroutine until runOps merges it.
type thread struct {
	id   int
	rng  *rand.Rand
	key  []byte
	iter *lsm.Iter // seekrandom's, reused across seeks
	// upper is a range workload's upper bound, reused across iterators.
	upper []byte
	// batch and nums are a multiread batch's keys and their numbers,
	// reused across batches.
	batch [][]byte
	nums  []uint64
	hist  histogram
	found int64
	bytes int64
}

// opsResult is what runOps measured: wall time for ops/sec, the summed
// per-thread time for micros/op (db_bench's convention: per-thread latency,
// aggregate throughput).
type opsResult struct {
	ops, found, bytes int64
	elapsed, busy     time.Duration
	// cpu is the workers' summed thread CPU time (internal/cpuclock): busy
	// less the moments the machine gave their threads to other work, and
	// without the DB's background flushes and compactions.
	cpu  time.Duration
	hist histogram
}

// runOps runs n operations split evenly over -threads goroutines: op i goes
// to thread i·threads/n. Each op is timed into the thread's histogram. The
// first error stops every thread and is returned.
func (b *bench) runOps(name string, n int, op func(t *thread, i int) error) (opsResult, error) {
	threads := min(b.cfg.threads, max(n, 1))
	ts := make([]*thread, threads)
	var done atomic.Int64
	var stop atomic.Bool
	var firstErr error
	var errOnce sync.Once
	// Ctrl-C stops every thread at its next op (an atomic load, not a
	// context check per op); the caller sees errInterrupted.
	defer context.AfterFunc(b.ctx, func() { stop.Store(true) })()
	prog := startProgress(b.stderr, name, int64(n), &done)
	start := time.Now()
	busy := make([]time.Duration, threads)
	cpu := make([]time.Duration, threads)
	var wg sync.WaitGroup
	for id := range ts {
		t := &thread{id: id, rng: opRand(b.cfg.seed, name, id), key: make([]byte, b.keys.keySize), hist: newHistogram()}
		ts[id] = t
		lo, hi := id*n/threads, (id+1)*n/threads
		wg.Go(func() {
			runtime.LockOSThread() // the thread CPU clock follows one thread
			defer runtime.UnlockOSThread()
			cstart := cpuclock.Thread()
			tstart := time.Now()
			for i := lo; i < hi && !stop.Load(); i++ {
				opStart := time.Now()
				if err := op(t, i); err != nil {
					errOnce.Do(func() { firstErr = err })
					stop.Store(true)
					break
				}
				t.hist.add(time.Since(opStart))
				if (i-lo)&255 == 255 {
					done.Add(256)
				}
			}
			busy[id] = time.Since(tstart)
			cpu[id] = cpuclock.Thread() - cstart
		})
	}
	wg.Wait()
	r := opsResult{elapsed: time.Since(start), hist: newHistogram()}
	prog.stop()
	for id, t := range ts {
		if t.iter != nil {
			if err := t.iter.Close(); err != nil && firstErr == nil {
				firstErr = err
			}
		}
		r.ops += t.hist.count()
		r.found += t.found
		r.bytes += t.bytes
		r.busy += busy[id]
		r.cpu += cpu[id]
		r.hist.merge(t.hist)
	}
	if firstErr == nil && b.ctx.Err() != nil {
		firstErr = errInterrupted
	}
	return r, firstErr
}
