package main

import (
	"fmt"
	"time"

	"github.com/monbandb/monban/lsm"
)

// rangeDeletes is what deleterange did: its DB.DeleteRange calls, and what
// the Compact after them reclaimed, measured as Stats' table bytes over
// every level (the figure the stats table prints per level).
type rangeDeletes struct {
	Calls            int64   `json:"calls"`
	KeysPerCall      int     `json:"keys_per_call"`
	KeysCovered      int64   `json:"keys_covered"`
	TableBytesBefore int64   `json:"table_bytes_before"` // after the calls' Flush, before Compact
	TableBytesAfter  int64   `json:"table_bytes_after"`
	CompactSec       float64 `json:"compact_sec"`
}

// rangeCalls is the number of deleterange calls: -deletes keys in calls of
// -range_size, at least one, so it deletes as many keys as deleterandom.
func (c *config) rangeCalls() int { return max(c.deletes/c.rangeSize, 1) }

// deleteRange deletes disjoint runs of -range_size present keys with
// DB.DeleteRange, timed; then, untimed, flushes and compacts the whole key
// range, and reports the table bytes before and after. The present keys
// are cut into rangeCalls equal slots and the workload's seed picks a run
// in each, so the ranges are random, disjoint and the same for any
// -threads. Key numbers sort as keys do, so [present(s), present(s+size))
// covers exactly the present keys s … s+size-1.
func (b *bench) deleteRange(name string) (*record, error) {
	calls, size := b.cfg.rangeCalls(), b.cfg.rangeSize
	slot := b.cfg.num / calls // validate makes it at least size
	rng := opRand(b.cfg.seed, name, 0)
	starts := make([]int, calls)
	for i := range starts {
		starts[i] = i*slot + rng.IntN(slot-size+1)
	}
	r, err := b.runOps(name, calls, func(t *thread, i int) error {
		end := make([]byte, b.keys.keySize)
		return b.db.DeleteRange(b.keys.key(t.key, b.keys.present(starts[i])), b.keys.key(end, b.keys.present(starts[i]+size)))
	})
	if err != nil {
		return nil, err
	}
	if err := b.db.Flush(); err != nil {
		return nil, fmt.Errorf("flush after deleting ranges: %w", err)
	}
	rd := &rangeDeletes{Calls: r.ops, KeysPerCall: size, KeysCovered: r.ops * int64(size), TableBytesBefore: tableBytes(b.db.Stats())}
	start := time.Now()
	if err := b.db.Compact(); err != nil {
		return nil, fmt.Errorf("compact after deleting ranges: %w", err)
	}
	rd.CompactSec = time.Since(start).Seconds()
	rd.TableBytesAfter = tableBytes(b.db.Stats())
	rec := newRecord(b, name, r)
	rec.RangeDeletes = rd
	return rec, b.warm()
}

// tableBytes is the bytes of every level's tables.
func tableBytes(s lsm.Stats) int64 {
	var n int64
	for _, l := range s.Levels {
		n += int64(l.Bytes)
	}
	return n
}
