package main

import (
	"errors"
	"fmt"
	"slices"

	"github.com/monbandb/monban/lsm"
)

// multiRead reads -reads random keys, present or missing ones, in
// DB.MultiGet calls of -batch_size keys: an op is one batch, timed as one
// (the latency percentiles are per batch), and the record's per-op figures
// are per key. A key's answer is checked: a missing key found, or a present
// key that MultiGet did not find and Get then does (a key deleterandom
// deleted is absent for both), fails the run. The Gets that check run after
// the timed batches.
func (b *bench) multiRead(name string, present bool) (*record, error) {
	keyOf := b.keys.missing
	if present {
		keyOf = b.keys.present
	}
	size := b.cfg.batchSize
	n := (b.cfg.reads + size - 1) / size
	w, err := b.startWindow(true)
	if err != nil {
		return nil, err
	}
	// missed[thread] holds the present keys that thread's MultiGets did not
	// find, for the check.
	missed := make([][]uint64, b.cfg.threads)
	r, err := b.runOps(name, n, func(t *thread, i int) error {
		if t.batch == nil {
			t.batch, t.nums = b.keys.batch(size), make([]uint64, size)
		}
		m := min(size, b.cfg.reads-i*size)
		keys, nums := t.batch[:m], t.nums[:m]
		for j := range keys {
			nums[j] = keyOf(t.rng.IntN(b.cfg.num))
			b.keys.key(keys[j], nums[j])
		}
		vals, errs := b.db.MultiGet(keys)
		for j, err := range errs {
			switch {
			case err == nil && !present:
				return fmt.Errorf("MultiGet found missing key %q", keys[j])
			case err == nil:
				t.found++
				t.bytes += int64(len(keys[j]) + len(vals[j]))
			case !errors.Is(err, lsm.ErrNotFound):
				return fmt.Errorf("MultiGet %q: %w", keys[j], err)
			case present:
				missed[t.id] = append(missed[t.id], nums[j])
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	bt := &batches{Size: size, Count: r.ops, MicrosPerBatch: microsPer(r.busy, r.ops), CPUMicrosPerBatch: microsPer(r.cpu, r.ops)}
	if s := r.elapsed.Seconds(); s > 0 {
		bt.BatchesPerSec = ptr(float64(r.ops) / s)
	}
	r.ops = int64(b.cfg.reads)
	rec, _, err := b.readRecord(name, r, w, !present)
	if err != nil {
		return nil, err
	}
	rec.Batches = bt
	return rec, b.checkMissed(slices.Concat(missed...))
}

// checkMissed Gets each present key a MultiGet did not find: one that Get
// finds is a MultiGet that missed a key.
func (b *bench) checkMissed(nums []uint64) error {
	key := make([]byte, b.keys.keySize)
	for _, n := range nums {
		_, err := b.db.Get(b.keys.key(key, n))
		switch {
		case err == nil:
			return fmt.Errorf("MultiGet did not find present key %q, which Get finds", key)
		case !errors.Is(err, lsm.ErrNotFound):
			return err
		}
	}
	return nil
}
