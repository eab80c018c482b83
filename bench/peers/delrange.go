package main

import (
	"bytes"
	"fmt"
	"slices"
	"time"
)

// RangeDeleter is optional. Engines that implement it take part in the
// "delrange" workload; for the others that workload is skipped with a note.
type RangeDeleter interface {
	// DeleteRange deletes every key k with start <= k < end, with the fsync
	// choice Put makes (Options.Sync).
	DeleteRange(start, end []byte) error
	// RangeDeleteHow says how DeleteRange works, for the phase's note: ""
	// for the engine's own range deletion, else a label such as "key by
	// key", so a fallback is never read as the engine's native cost.
	RangeDeleteHow() string
}

// delRangePlan is the delrange phase's ranges over the filled keys in key
// order: range i deletes sorted[starts[i] : starts[i]+size], by the bounds
// [sorted[starts[i]], sorted[starts[i]+size]); the end bound is the next
// present key, so a range covers exactly size present keys.
type delRangePlan struct {
	sorted [][]byte
	starts []int
	size   int
}

// planDelRange cuts the n filled keys, in key order, into m/1000 (at least
// one) equal slots and picks in each slot, by the phase's RNG, a run of
// p.rangeSize consecutive keys that ends before the slot does: the ranges
// are disjoint, random, and independent of which phases ran before. It
// sorts all n keys, so it runs before the phase is measured.
func planDelRange(p *params) (*delRangePlan, error) {
	calls := max(p.m/1000, 1)
	// Each slot leaves room for its range's end bound, the present key
	// after it; the last slot ends at key n-2, so key n-1 is that bound.
	slot := (p.n - 1) / calls
	if p.rangeSize <= 0 || slot < p.rangeSize {
		return nil, fmt.Errorf("delrange: %d ranges of %d keys do not fit, disjoint, in %d keys", calls, p.rangeSize, p.n)
	}
	buf := make([]byte, p.n*keySize)
	sorted := make([][]byte, p.n)
	for i := range sorted {
		sorted[i] = p.keys.key(buf[i*keySize:], uint64(i), false)
	}
	slices.SortFunc(sorted, bytes.Compare)
	r := phaseRNG(p.seed, wDelRange, 0)
	plan := &delRangePlan{sorted: sorted, size: p.rangeSize, starts: make([]int, calls)}
	for i := range plan.starts {
		plan.starts[i] = i*slot + r.IntN(slot-p.rangeSize+1)
	}
	return plan, nil
}

// bounds returns range i's [start, end).
func (pl *delRangePlan) bounds(i int) (start, end []byte) {
	s := pl.starts[i]
	return pl.sorted[s], pl.sorted[s+pl.size]
}

// doDelRange issues the plan's DeleteRange calls, split among the workers
// as delmiss's deletes are (the ranges are disjoint), then Flush. An op is
// one call; the note gives the keys each call covers, the calls' own wall
// time per call (m/1000 native calls take far less time than the Flush
// after them, whose quiet-wait window then sets the phase's ops/s) and,
// for a fallback, how the engine deleted them.
func doDelRange(rd RangeDeleter, e Engine, p *params, pl *delRangePlan, flush func() (float64, error)) (phaseOutcome, error) {
	start := time.Now()
	out, err := writes(e, p, len(pl.starts), flush, func(_, lo, hi int) (phaseOutcome, error) {
		for i := lo; i < hi; i++ {
			if err := rd.DeleteRange(pl.bounds(i)); err != nil {
				return phaseOutcome{}, fmt.Errorf("delete range #%d: %w", i, err)
			}
		}
		return phaseOutcome{ops: int64(hi - lo)}, nil
	})
	callSecs := time.Since(start).Seconds() - out.flushSecs
	out.note = fmt.Sprintf("keys/call=%d us/call-without-flush=%.1f", pl.size, callSecs*1e6/float64(len(pl.starts)))
	if how := rd.RangeDeleteHow(); how != "" {
		out.note += " " + how
	}
	return out, err
}
