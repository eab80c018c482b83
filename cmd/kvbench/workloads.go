package main

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/monbandb/monban/internal/cpuclock"
	"github.com/monbandb/monban/lsm"
)

// workload is one -benchmarks entry. compare marks the workloads whose
// point lookups, deletes or prefix and range iterators ask the filters: they run a
// second time with Options.IgnoreFilters on a copy of the same DB. found
// marks those whose result line says how many keys were found.
type workload struct {
	compare, found bool
	run            func(b *bench, name string) (*record, error)
}

var workloads = map[string]workload{
	"fillseq":          {run: func(b *bench, name string) (*record, error) { return b.fill(name, nil) }},
	"fillrandom":       {run: func(b *bench, name string) (*record, error) { return b.fill(name, permutation(b.cfg.num, b.cfg.seed)) }},
	"overwrite":        {run: (*bench).overwrite},
	"readrandom":       {compare: true, found: true, run: func(b *bench, name string) (*record, error) { return b.read(name, false) }},
	"readmissing":      {compare: true, found: true, run: func(b *bench, name string) (*record, error) { return b.read(name, true) }},
	"multireadrandom":  {compare: true, found: true, run: func(b *bench, name string) (*record, error) { return b.multiRead(name, true) }},
	"multireadmissing": {compare: true, found: true, run: func(b *bench, name string) (*record, error) { return b.multiRead(name, false) }},
	"deleteabsent":     {compare: true, run: func(b *bench, name string) (*record, error) { return b.delete(name, b.keys.missing) }},
	"deleterandom":     {compare: true, run: func(b *bench, name string) (*record, error) { return b.delete(name, b.keys.present) }},
	"readwhilewriting": {compare: true, found: true, run: (*bench).readWhileWriting},
	"seekrandom":       {found: true, run: (*bench).seekRandom},
	"scan":             {run: (*bench).scan},
	"prefixmissing":    {compare: true, found: true, run: func(b *bench, name string) (*record, error) { return b.prefixScan(name, true) }},
	"prefixrandom":     {compare: true, run: func(b *bench, name string) (*record, error) { return b.prefixScan(name, false) }},
	"rangemissing":     {compare: true, found: true, run: func(b *bench, name string) (*record, error) { return b.rangeScan(name, true) }},
	"rangerandom":      {compare: true, run: func(b *bench, name string) (*record, error) { return b.rangeScan(name, false) }},
	"deleterange":      {run: (*bench).deleteRange},
	"compact":          {run: (*bench).compact},
	"stats":            {run: (*bench).stats},
}

// fill writes every present key once, in key order (order nil) or in the
// given order of key indexes, and among them the -range_tombstones; then
// it flushes (untimed) so the read workloads that follow find the data in
// tables, where the Bloom filters are.
func (b *bench) fill(name string, order []uint32) (*record, error) {
	kv := int64(b.keys.keySize + b.cfg.valueSize)
	r, err := b.runOps(name, b.cfg.num, func(t *thread, i int) error {
		n := i
		if order != nil {
			n = int(order[i])
		}
		t.bytes += kv
		if err := b.db.Put(b.keys.key(t.key, b.keys.present(n)), b.vals.value(uint64(i))); err != nil {
			return err
		}
		return b.fillTombstone(i)
	})
	return b.afterWrite(name, r, err)
}

// overwrite puts -num random present keys again.
func (b *bench) overwrite(name string) (*record, error) {
	kv := int64(b.keys.keySize + b.cfg.valueSize)
	r, err := b.runOps(name, b.cfg.num, func(t *thread, i int) error {
		t.bytes += kv
		return b.db.Put(b.keys.key(t.key, b.keys.present(t.rng.IntN(b.cfg.num))), b.vals.value(uint64(i)))
	})
	return b.afterWrite(name, r, err)
}

func (b *bench) afterWrite(name string, r opsResult, err error) (*record, error) {
	if err != nil {
		return nil, err
	}
	if err := b.db.Flush(); err != nil {
		return nil, fmt.Errorf("flush after writing: %w", err)
	}
	return newRecord(b, name, r), b.warm()
}

// read Gets -reads random keys, present or missing ones.
func (b *bench) read(name string, missing bool) (*record, error) {
	keyOf := b.keys.numbers(missing)
	w, err := b.startWindow(true)
	if err != nil {
		return nil, err
	}
	r, err := b.runOps(name, b.cfg.reads, b.getOp(keyOf))
	if err != nil {
		return nil, err
	}
	rec, _, err := b.readRecord(name, r, w, missing)
	return rec, err
}

func (b *bench) getOp(keyOf func(int) uint64) func(t *thread, i int) error {
	return func(t *thread, i int) error {
		key := b.keys.key(t.key, keyOf(t.rng.IntN(b.cfg.num)))
		v, err := b.db.Get(key)
		switch {
		case err == nil:
			t.found++
			t.bytes += int64(len(key) + len(v))
		case !errors.Is(err, lsm.ErrNotFound):
			return err
		}
		return nil
	}
}

// readRecord is the record of a read workload measured over w, and the
// Stats difference across w; missing marks a workload of keys no table
// holds, whose data-block reads the filters promise. DB.Tables opens the
// tables written during the workload, so that the Stats at its end
// describe their filters too.
func (b *bench) readRecord(name string, r opsResult, w window, missing bool) (*record, lsm.Stats, error) {
	if _, err := b.db.Tables(); err != nil {
		return nil, lsm.Stats{}, err
	}
	d := statsDiff(w.stats, b.db.Stats())
	rec := newRecord(b, name, r)
	rec.Reads = readsFrom(d, r.ops, w, b.watch.counts(), missing && !b.filtersOff)
	rec.Reads.RangeTombstones = w.tombstones
	return rec, d, nil
}

// delete deletes -deletes random keys numbered by keyOf, then flushes
// (untimed) so the report can say which tombstones the flush dropped.
func (b *bench) delete(name string, keyOf func(int) uint64) (*record, error) {
	w, err := b.startWindow(false)
	if err != nil {
		return nil, err
	}
	r, err := b.runOps(name, b.cfg.deletes, func(t *thread, i int) error {
		return b.db.Delete(b.keys.key(t.key, keyOf(t.rng.IntN(b.cfg.num))))
	})
	if err != nil {
		return nil, err
	}
	if err := b.db.Flush(); err != nil {
		return nil, fmt.Errorf("flush after deleting: %w", err)
	}
	rec, d, err := b.readRecord(name, r, w, false)
	if rec != nil {
		rec.Deletes = deletesFrom(d)
	}
	return rec, err
}

// readWhileWriting runs -reads Gets of present keys on -threads goroutines
// while one more goroutine overwrites random keys until they finish; the
// figures are the readers'.
func (b *bench) readWhileWriting(name string) (*record, error) {
	w, err := b.startWindow(true)
	if err != nil {
		return nil, err
	}
	var stop atomic.Bool
	var writes atomic.Int64
	var werr error
	var wg sync.WaitGroup
	wg.Go(func() {
		rng := opRand(b.cfg.seed, name+"/writer", 0)
		key := make([]byte, b.keys.keySize)
		for i := uint64(0); !stop.Load(); i++ {
			if werr = b.db.Put(b.keys.key(key, b.keys.present(rng.IntN(b.cfg.num))), b.vals.value(i)); werr != nil {
				return
			}
			writes.Add(1)
		}
	})
	r, err := b.runOps(name, b.cfg.reads, b.getOp(b.keys.present))
	stop.Store(true)
	wg.Wait()
	if err = errors.Join(err, werr); err != nil {
		return nil, err
	}
	rec, _, err := b.readRecord(name, r, w, false)
	if rec != nil {
		rec.Note = fmt.Sprintf("%d writes by 1 writer meanwhile", writes.Load())
	}
	return rec, err
}

// seekRandom positions an iterator (one per thread, reused) at -reads
// random present keys.
func (b *bench) seekRandom(name string) (*record, error) {
	r, err := b.runOps(name, b.cfg.reads, func(t *thread, i int) error {
		if t.iter == nil {
			t.iter = b.db.NewIter(nil)
		}
		key := b.keys.key(t.key, b.keys.present(t.rng.IntN(b.cfg.num)))
		if t.iter.SeekGE(key) && string(t.iter.Key()) == string(key) {
			t.found++
			t.bytes += int64(len(key) + len(t.iter.Value()))
		}
		return t.iter.Err()
	})
	if err != nil {
		return nil, err
	}
	return newRecord(b, name, r), nil
}

// scan iterates the whole DB once, forward, on one goroutine; an op is
// one entry.
func (b *bench) scan(name string) (*record, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	it := b.db.NewIter(nil)
	r := opsResult{hist: newHistogram()}
	cstart := cpuclock.Thread()
	start := time.Now()
	last := start
	for ok := it.First(); ok; ok = it.Next() {
		if r.found&1023 == 1023 && b.ctx.Err() != nil {
			return nil, errors.Join(errInterrupted, it.Close())
		}
		r.bytes += int64(len(it.Key()) + len(it.Value()))
		r.found++
		now := time.Now()
		r.hist.add(now.Sub(last))
		last = now
	}
	r.elapsed = time.Since(start)
	r.busy, r.ops, r.cpu = r.elapsed, r.found, cpuclock.Thread()-cstart
	if err := errors.Join(it.Err(), it.Close()); err != nil {
		return nil, err
	}
	return newRecord(b, name, r), nil
}

// compact compacts the whole key range down the tree (DB.Compact): one op,
// whose merges run on the calling thread, the one the CPU clock follows.
func (b *bench) compact(name string) (*record, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cstart := cpuclock.Thread()
	start := time.Now()
	if err := b.db.Compact(); err != nil {
		return nil, err
	}
	r := opsResult{ops: 1, elapsed: time.Since(start), cpu: cpuclock.Thread() - cstart, hist: newHistogram()}
	r.busy = r.elapsed
	r.hist.add(r.elapsed)
	return newRecord(b, name, r), b.warm()
}

// stats prints the DB's counters since it was last opened.
func (b *bench) stats(name string) (*record, error) {
	b.rep.stats(b, b.db.Stats())
	return nil, nil
}
