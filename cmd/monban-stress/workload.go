package main

import (
	"bytes"
	"errors"
	"maps"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/monbandb/monban/lsm"
)

// writer runs ops as writer id w: puts (new keys and overwrites), deletes
// of present and absent keys, deletes in the delete-only range,
// DeleteRange over up to 16 consecutive keys (one in eight over up to an
// eighth of the keys), batches, and Gets and short
// bounded iterators checked against the model.
func (c *child) writer(w uint64, rng *rand.Rand) {
	n := c.cfg.keys
	for seq := uint64(1); ; seq++ {
		o := &op{writer: w, seq: seq, sync: rng.IntN(8) == 0}
		switch r := rng.IntN(100); {
		case r < 45:
			o.entries = []entry{{key: rng.IntN(n), size: c.size(rng)}}
		case r < 60:
			o.entries = []entry{{key: rng.IntN(n), del: true}}
		case r < 65:
			o.entries = []entry{{key: n + rng.IntN(checkedKeys(n)-n), del: true}}
		case r < 69:
			// One in eight spans up to an eighth of the keys: wide enough
			// to cover whole tables, which delete-only compactions drop.
			width := 16
			if rng.IntN(8) == 0 {
				width = max(width, n/8)
			}
			lo := rng.IntN(n)
			hi := min(n, lo+1+rng.IntN(width))
			for k := lo; k < hi; k++ {
				o.entries = append(o.entries, entry{key: k, del: true})
			}
			o.rangeDel = true
		case r < 80:
			keys := map[int]bool{}
			for range 2 + rng.IntN(7) {
				keys[rng.IntN(n)] = true
			}
			for _, k := range slices.Sorted(maps.Keys(keys)) {
				o.entries = append(o.entries, entry{key: k, del: rng.IntN(4) == 0, size: c.size(rng)})
			}
		case r < 90:
			c.checkGet(rng.IntN(checkedKeys(n)))
			continue
		default:
			lo := rng.IntN(checkedKeys(n))
			c.checkRange(lo, min(checkedKeys(n), lo+1+rng.IntN(4)), rng.IntN(2) == 0)
			continue
		}
		c.apply(o)
	}
}

func (c *child) size(rng *rand.Rand) int {
	return c.cfg.minSize + rng.IntN(c.cfg.maxSize-c.cfg.minSize+1)
}

// writeOptions are o's: lsm.Sync, or the option set's default (nil).
func (o *op) writeOptions() *lsm.WriteOptions {
	if o.sync {
		return lsm.Sync
	}
	return nil
}

// apply runs o under its keys' locks (taken in key order, so writers never
// deadlock): "S" record, the DB call, "D" record, model update.
func (c *child) apply(o *op) {
	for _, e := range o.entries {
		c.locks[e.key].Lock()
		defer c.locks[e.key].Unlock()
	}
	if err := c.log.started(o); err != nil {
		c.dbError("ack log: %v", err)
	}
	var err error
	switch e := o.entries[0]; {
	case o.rangeDel:
		end := keyName(o.entries[len(o.entries)-1].key + 1)
		err = c.db.DeleteRange(keyName(e.key), end, o.writeOptions())
	case len(o.entries) > 1:
		var b lsm.Batch
		for _, e := range o.entries {
			if e.del {
				b.Delete(keyName(e.key))
			} else {
				b.Put(keyName(e.key), value(e.key, o.writer, o.seq, e.size))
			}
		}
		err = c.db.Write(&b, o.writeOptions())
	case e.del:
		err = c.db.Delete(keyName(e.key), o.writeOptions())
	default:
		err = c.db.Put(keyName(e.key), value(e.key, o.writer, o.seq, e.size), o.writeOptions())
	}
	if err != nil {
		c.dbError("op %s: %v", opName(o), err)
	}
	if err := c.log.done(o); err != nil {
		c.dbError("ack log: %v", err)
	}
	for _, e := range o.entries {
		c.model[e.key] = effect(o, e.key)
	}
}

// checkGet reads k under its lock: with no write to k in flight, Get must
// return exactly the last acknowledged state.
func (c *child) checkGet(k int) {
	c.locks[k].Lock()
	defer c.locks[k].Unlock()
	v, err := c.db.Get(keyName(k))
	if errors.Is(err, lsm.ErrNotFound) {
		v, err = nil, nil
	}
	if err != nil {
		c.dbError("Get %d: %v", k, err)
	}
	if !sameState(v, c.model[k]) {
		c.checkFailed("Get %d returned %s, the last acknowledged write was %s", k, describe(k, v), describe(k, c.model[k]))
	}
}

// checkRange reads keys [lo, hi) under their locks (taken in key order,
// as writers take them) through an iterator with both bounds, the kind
// that asks the range filters: with no write to them in flight it must
// return exactly the last acknowledged state of each. A range of up to
// four keys is short enough that the filters rule most tables out, and
// often holds no key at all.
func (c *child) checkRange(lo, hi int, reverse bool) {
	for k := lo; k < hi; k++ {
		c.locks[k].Lock()
		defer c.locks[k].Unlock()
	}
	s := c.scan(c.db.NewIter(&lsm.IterOptions{LowerBound: keyName(lo), UpperBound: keyName(hi)}), lo, hi, reverse)
	for k := lo; k < hi; k++ {
		if !sameState(s[k], c.model[k]) {
			c.checkFailed("iterator [%d,%d) reverse=%v: key %d shows %s, the last acknowledged write was %s",
				lo, hi, reverse, k, describe(k, s[k]), describe(k, c.model[k]))
		}
	}
}

// scanner iterates random ranges forwards and backwards. Writes run
// concurrently, so it cannot know the values, but keys must come in order
// and inside the bounds, and each value must be some write's to its key.
func (c *child) scanner(rng *rand.Rand) {
	n := checkedKeys(c.cfg.keys)
	for {
		lo := rng.IntN(n)
		hi := lo + 1 + rng.IntN(256)
		c.scan(c.db.NewIter(&lsm.IterOptions{LowerBound: keyName(lo), UpperBound: keyName(hi)}), lo, hi, rng.IntN(3) == 0)
	}
}

// scan reads it in one direction, checks it and returns what it saw; it
// closes it.
func (c *child) scan(it *lsm.Iter, lo, hi int, reverse bool) state {
	s := state{}
	prev := -1
	first, step := it.First, it.Next
	if reverse {
		first, step = it.Last, it.Prev
	}
	for ok := first(); ok; ok = step() {
		k, kok := parseKey(it.Key())
		switch {
		case !kok || k < lo || k >= hi:
			c.checkFailed("iterator [%d,%d): key %q out of bounds", lo, hi, it.Key())
		case prev >= 0 && (!reverse && k <= prev || reverse && k >= prev):
			c.checkFailed("iterator [%d,%d) reverse=%v: key %d after %d", lo, hi, reverse, k, prev)
		}
		if _, _, vok := parseValue(k, it.Value()); !vok {
			c.checkFailed("iterator: key %d holds %s, no write's value", k, describe(k, it.Value()))
		}
		s[k], prev = bytes.Clone(it.Value()), k
	}
	if err := it.Close(); err != nil {
		c.dbError("iterator [%d,%d): %v", lo, hi, err)
	}
	return s
}

// snapshotter opens a snapshot, reads a range through it, lets the writers,
// flushes and compactions run, and reads it again: the two reads, and a Get
// per key, must agree, for as long as the snapshot is open.
func (c *child) snapshotter(rng *rand.Rand) {
	n := checkedKeys(c.cfg.keys)
	for {
		snap := c.db.NewSnapshot()
		lo := rng.IntN(n)
		hi := min(n, lo+1+rng.IntN(128))
		bounds := &lsm.IterOptions{LowerBound: keyName(lo), UpperBound: keyName(hi)}
		first := c.scan(snap.NewIter(bounds), lo, hi, false)
		for range 1 + rng.IntN(4) {
			time.Sleep(time.Duration(rng.IntN(20)) * time.Millisecond)
			again := c.scan(snap.NewIter(bounds), lo, hi, rng.IntN(2) == 0)
			for k := lo; k < hi; k++ {
				v, err := snap.Get(keyName(k))
				if errors.Is(err, lsm.ErrNotFound) {
					v, err = nil, nil
				}
				if err != nil {
					c.dbError("snapshot Get %d: %v", k, err)
				}
				if !sameState(first[k], again[k]) || !sameState(first[k], v) {
					c.checkFailed("snapshot: key %d first read %s, later scan %s, Get %s",
						k, describe(k, first[k]), describe(k, again[k]), describe(k, v))
				}
			}
		}
		if err := snap.Close(); err != nil {
			c.dbError("snapshot Close: %v", err)
		}
	}
}

// maintainer calls Flush, CompactRange and Compact now and then, announcing
// each on stdout first.
func (c *child) maintainer(rng *rand.Rand) {
	n := checkedKeys(c.cfg.keys)
	for {
		time.Sleep(time.Duration(5+rng.IntN(100)) * time.Millisecond)
		var err error
		switch r := rng.IntN(10); {
		case r < 5:
			c.mark("flush")
			err = c.db.Flush()
		case r < 8:
			lo := rng.IntN(n)
			c.mark("compact")
			err = c.db.CompactRange(keyName(lo), keyName(lo+rng.IntN(n/4+1)))
		default:
			c.mark("compact")
			err = c.db.Compact()
		}
		if err != nil {
			c.dbError("maintenance: %v", err)
		}
	}
}
