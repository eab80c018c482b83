package main

import (
	"errors"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/monbandb/monban/lsm"
)

// snapshotDeleter, as writer id w, takes a snapshot of a range of keys,
// deletes most of the range with DeleteRange, puts a few keys back under
// the tombstone, and runs Flush and CompactRange over it, so that
// delete-only compactions (compaction.PickDeleteOnly) meet tables the
// tombstone covers. The snapshot must then read exactly what it read
// before, and the range now exactly the model: a table dropped while the
// snapshot still needed it (PickDeleteOnly's condition 2), or one whose
// puts are newer than the tombstone (condition 1), shows as a failed
// check. Its writes go through apply like a writer's, logged and modelled.
func (c *child) snapshotDeleter(w uint64, rng *rand.Rand) {
	n := c.cfg.keys
	for seq := uint64(1); ; seq += 2 {
		time.Sleep(time.Duration(10+rng.IntN(50)) * time.Millisecond)
		dlo, dhi := c.deletedRange(rng)
		lo, hi := max(0, dlo-rng.IntN(8)), min(checkedKeys(n), dhi+rng.IntN(8))
		snap, want := c.snapshotOf(lo, hi)
		c.checkSnapshot(snap, rng, lo, hi, want, "before the DeleteRange")

		del := &op{writer: w, seq: seq, rangeDel: true, sync: rng.IntN(8) == 0}
		for k := dlo; k < dhi; k++ {
			del.entries = append(del.entries, entry{key: k, del: true})
		}
		c.apply(del)
		c.mark("flush")
		if err := c.db.Flush(); err != nil {
			c.dbError("snapshot deleter: Flush: %v", err)
		}
		// Puts newer than the tombstone, in a table of their own once
		// CompactRange flushes them: a table that holds them must not go
		// with what the tombstone deletes.
		put := &op{writer: w, seq: seq + 1}
		for _, k := range rng.Perm(dhi - dlo)[:min(dhi-dlo, 1+rng.IntN(4))] {
			put.entries = append(put.entries, entry{key: dlo + k, size: c.size(rng)})
		}
		slices.SortFunc(put.entries, func(a, b entry) int { return a.key - b.key })
		c.apply(put)
		c.mark("compact")
		if err := c.db.CompactRange(keyName(dlo), keyName(dhi-1)); err != nil {
			c.dbError("snapshot deleter: CompactRange: %v", err)
		}

		c.checkSnapshot(snap, rng, lo, hi, want, "after DeleteRange, Flush and CompactRange")
		if err := snap.Close(); err != nil {
			c.dbError("snapshot deleter: snapshot Close: %v", err)
		}
		c.checkRange(dlo, dhi, rng.IntN(2) == 0)
	}
}

// deletedRange picks the key indexes [lo, hi) the snapshot deleter
// deletes: half the time those of a table below L0 (one whole table, the
// kind a delete-only compaction drops, when no compaction has moved it
// since), else up to an eighth of the keys anywhere.
func (c *child) deletedRange(rng *rand.Rand) (lo, hi int) {
	n := c.cfg.keys
	if rng.IntN(2) == 0 {
		tables, err := c.db.Tables()
		if err != nil {
			c.dbError("snapshot deleter: Tables: %v", err)
		}
		tables = slices.DeleteFunc(tables, func(t lsm.TableInfo) bool { return t.Level == 0 })
		if len(tables) > 0 {
			t := tables[rng.IntN(len(tables))]
			s, sok := parseKey(t.Smallest)
			l, lok := parseKey(t.Largest)
			// Keys of the delete-only eighth, or a table too wide to
			// delete often, take the other branch.
			if sok && lok && l < n && l+1-s <= n/4 {
				return s, l + 1
			}
		}
	}
	lo = rng.IntN(n)
	return lo, min(n, lo+1+rng.IntN(max(1, n/8)))
}

// snapshotOf takes a snapshot under the locks of keys [lo, hi), with no
// write to them in flight, and returns it with the model's state of those
// keys: what the snapshot must read for as long as it is open.
func (c *child) snapshotOf(lo, hi int) (*lsm.Snapshot, state) {
	for k := lo; k < hi; k++ {
		c.locks[k].Lock()
		defer c.locks[k].Unlock()
	}
	want := state{}
	for k := lo; k < hi; k++ {
		if c.model[k] != nil {
			want[k] = c.model[k]
		}
	}
	return c.db.NewSnapshot(), want
}

// checkSnapshot reads keys [lo, hi) through snap, by an iterator with
// both bounds and by a Get of a few keys, and fails the child if any
// differs from want.
func (c *child) checkSnapshot(snap *lsm.Snapshot, rng *rand.Rand, lo, hi int, want state, when string) {
	reverse := rng.IntN(2) == 0
	got := c.scan(snap.NewIter(&lsm.IterOptions{LowerBound: keyName(lo), UpperBound: keyName(hi)}), lo, hi, reverse)
	for k := lo; k < hi; k++ {
		if !sameState(got[k], want[k]) {
			c.checkFailed("snapshot deleter: snapshot of [%d,%d) %s, iterator reverse=%v: key %d shows %s, the snapshot holds %s",
				lo, hi, when, reverse, k, describe(k, got[k]), describe(k, want[k]))
		}
	}
	for range 4 {
		k := lo + rng.IntN(hi-lo)
		v, err := snap.Get(keyName(k))
		if errors.Is(err, lsm.ErrNotFound) {
			v, err = nil, nil
		}
		if err != nil {
			c.dbError("snapshot deleter: snapshot Get %d: %v", k, err)
		}
		if !sameState(v, want[k]) {
			c.checkFailed("snapshot deleter: snapshot of [%d,%d) %s: Get %d returned %s, the snapshot holds %s",
				lo, hi, when, k, describe(k, v), describe(k, want[k]))
		}
	}
}
