package lsm

import (
	"sync"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/keyspan"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/memtable"
)

// Range tombstones on the read path. A tombstone at seq t over key k,
// visible to a read at seq s when t <= s, deletes every version of k with
// a seq below t (internal/keyspan, "Visibility"), wherever it lies: in the
// tombstone's own source or in any older one. Sources are walked newest
// first, as for point reads, keeping cover, the newest visible tombstone
// over k met so far:
//
//  1. a source's version of k at seq p is deleted when p < cover;
//  2. a source that has no version of k but leaves cover set ends the
//     walk: every version in an older source is older than a tombstone of
//     a newer one over the same key (flushes and compactions move
//     tombstones down with the keys they cover, and a table's key range
//     covers its tombstones), so nothing below can be newer than cover.
//
// Searching every source's tombstones as the walk passes it would cost
// every lookup a search per source that holds any, though most lookups
// meet none. So the searches wait (cover.put)
// until they can change what the lookup costs or answers: before the
// first read of a table that is not answered from memory (a filter in
// memory said maybe, or there is none), where rule 2 may spare the read,
// and when a source holds a version, which rule 1 judges. A key no
// source holds is not found whatever covers it, and a key the filters
// rule out everywhere searches nothing. Rule 2 still stops the walk
// before any read a tombstone makes useless; only in-memory filter probes
// happen past the source that holds the tombstone.
//
// What waits is the source itself, not its tombstones: even loading them
// (an atomic load of a memtable's Set or a table's FileMetadata.RangeDels,
// and a copy of the Spans) made a lookup the filters answer cost 18% more
// beside 1,000 tombstones than beside none, a pointer 4%
// (BenchmarkGetBesideRangeTombstones/n=1000/miss against n=0, CPU ns).
// A source without range tombstones costs its search a load and a length
// test.
//
// Explain searches as it passes each source instead (cover.eager), so
// that its trace shows the tombstone over a key where it lies, and stops
// where rule 2 allows first, even for a key no source holds: its steps
// then end before the in-memory filter probes a Get makes past that
// source. Its answer is the Get's.

// cover is the newest range tombstone over key, visible at readSeq, that
// a read has met so far: its seq (0: none) and the fragment it was met
// in, for Explain; and the sources passed since the last search, not yet
// searched.
type cover struct {
	db         *DB
	key        []byte
	readSeq    base.SeqNum
	seq        base.SeqNum
	start, end []byte
	// pending holds the first few deferred sources in place (a cover
	// lives on its Get's stack), more the rest.
	pending [6]rangeDelSource
	n       int
	more    []rangeDelSource
	// eager searches each source as it is passed (Explain).
	eager bool
}

// rangeDelSource is a source whose range tombstones a cover has not
// searched yet: a memtable (m) or a table (f).
type rangeDelSource struct {
	m *memtable.Memtable
	f *manifest.FileMetadata
}

// put defers the search of one passed source's tombstones, or makes it
// at once when c is eager.
func (c *cover) put(src rangeDelSource) error {
	switch {
	case c.eager:
		return c.raiseSource(src)
	case c.n < len(c.pending):
		c.pending[c.n] = src
		c.n++
	default:
		c.more = append(c.more, src)
	}
	return nil
}

// settle searches the deferred sources, raising c.
func (c *cover) settle() error {
	for i := range c.n {
		if err := c.raiseSource(c.pending[i]); err != nil {
			return err
		}
	}
	for _, src := range c.more {
		if err := c.raiseSource(src); err != nil {
			return err
		}
	}
	c.n, c.more = 0, c.more[:0]
	return nil
}

// raiseSource raises c with one source's tombstones.
func (c *cover) raiseSource(src rangeDelSource) error {
	if src.m != nil {
		c.raise(src.m.RangeDels())
		return nil
	}
	spans, err := c.db.tableRangeDels(src.f)
	if err != nil {
		return err
	}
	c.raise(spans)
	return nil
}

// raise sets c to the newest tombstone of spans visible at c.readSeq over
// c.key, if that is newer.
func (c *cover) raise(spans keyspan.Spans) {
	sp, ok := spans.Find(c.key)
	if !ok {
		return
	}
	if t, ok := sp.Visible(c.readSeq); ok && t > c.seq {
		c.seq, c.start, c.end = t, sp.Start, sp.End
	}
}

// covers applies rules 1 and 2 to one source's answer: found says the
// source holds a version of the key, at seq version.
func (c *cover) covers(found bool, version base.SeqNum) bool {
	if found {
		return version < c.seq
	}
	return c.seq > 0
}

// anyRangeDels reports whether any of ms holds a range tombstone.
func anyRangeDels(ms []*memtable.Memtable) bool {
	for _, m := range ms {
		if m.HasRangeDels() {
			return true
		}
	}
	return false
}

// tableRangeDels returns f's range tombstones: from its metadata, else
// from a reader, opened for it if need be (which records them there).
func (d *DB) tableRangeDels(f *manifest.FileMetadata) (keyspan.Spans, error) {
	if s, ok := f.RangeDels(); ok {
		return s, nil
	}
	r, release, err := d.table(f)
	if err != nil {
		return keyspan.Spans{}, err
	}
	defer release()
	return r.RangeDels(), nil
}

// versionRangeDels is the merged range tombstones of every table of a
// read state's version, built once, by the first iterator that asks
// (readState.tableRangeDels).
type versionRangeDels struct {
	once  sync.Once
	spans keyspan.Spans
	err   error
}

// tableRangeDels returns every range tombstone of rs's tables, merged
// into one Spans (keyspan.Merge): what an iterator over the whole tree
// asks, whichever table a key lies in. Ordering by source does not matter
// to it: a version at seq p is deleted exactly when some tombstone over
// its key visible to the read has a seq above p.
func (rs *readState) tableRangeDels() (keyspan.Spans, error) {
	c := &rs.rangeDels
	c.once.Do(func() {
		var all []keyspan.Spans
		for _, files := range rs.version.Levels {
			for _, f := range files {
				s, err := rs.db.tableRangeDels(f)
				if err != nil {
					c.err = err
					return
				}
				if s.Len() > 0 {
					all = append(all, s)
				}
			}
		}
		c.spans = keyspan.Merge(all...)
	})
	return c.spans, c.err
}

// memtableRangeDels returns the range tombstones of every memtable of rs
// at the time of the call, merged.
func (rs *readState) memtableRangeDels() keyspan.Spans {
	all := []keyspan.Spans{rs.mem.Active().RangeDels()}
	for _, m := range rs.mem.Immutables() {
		all = append(all, m.RangeDels())
	}
	return keyspan.Merge(all...)
}

// mayHoldRangeDels reports whether any memtable or table of rs may hold a
// range tombstone. The tables' answer is built once per read state
// (tableRangeDels); one that cannot be built counts as yes, and the
// caller's reads then meet its error.
func (rs *readState) mayHoldRangeDels() bool {
	if rs.mem.Active().HasRangeDels() || anyRangeDels(rs.mem.Immutables()) {
		return true
	}
	spans, err := rs.tableRangeDels()
	return err != nil || spans.Len() > 0
}
