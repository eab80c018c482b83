package lsm

import (
	"sync"
	"sync/atomic"

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
// meet none. So the searches wait until they can change what the lookup
// costs or answers: before the first read of a table that is not answered
// from memory (a filter in memory said maybe, or there is none), where
// rule 2 may spare the read, and when a source holds a version, which
// rule 1 judges. A key no source holds is not found whatever covers it,
// and a key the filters rule out everywhere searches nothing. Rule 2 still
// stops the walk before any read a tombstone makes useless; only in-memory
// filter probes happen past the source that holds the tombstone.
//
// What waits is not even a list of the sources passed: a cover keeps only
// its place in the walk (walkPos), the first source not yet searched, and
// a search goes from there to where the walk has come, finding the
// sources again in the read state. Even loading a source's tombstones as
// the walk passed it (an atomic load of a memtable's Set or a table's
// FileMetadata.RangeDels, and a copy of the Spans) made a lookup the
// filters answer cost 18% more beside 1,000 tombstones than beside none,
// a pointer put aside per source 4%, and a list that outgrew the cover
// an allocation (BenchmarkGetBesideRangeTombstones/n=1000/miss against
// n=0, CPU ns; TestReadAllocsBesideRangeTombstones).
//
// Explain searches as it passes each source instead (cover.eager), so
// that its trace shows the tombstone over a key where it lies, and stops
// where rule 2 allows first, even for a key no source holds: its steps
// then end before the in-memory filter probes a Get makes past that
// source. Its answer is the Get's.

// cover is the newest range tombstone over key, visible at readSeq, that
// a read through rs has met so far: its seq (0: none) and the fragment it
// was met in, for Explain; and next, the first source of the walk whose
// tombstones it has not searched.
type cover struct {
	db         *DB
	rs         *readState
	key        []byte
	readSeq    base.SeqNum
	seq        base.SeqNum
	start, end []byte
	next       walkPos
	// eager searches each source as it is passed (Explain).
	eager bool
}

// walkPos is a source's place in the read path's walk, newest first:
// level -1 for the memtables (i 0 the active one, i the i-th immutable),
// then the tables of L0 by index i, then those of L1…L6, one a level (i
// 0): the table whose key range holds the key, if any.
type walkPos struct{ level, i int }

// memtablePos is the place of the memtable src names.
func memtablePos(src Source) walkPos { return walkPos{-1, src.Index} }

// after is the place of the source after p, for a p that names one.
func (p walkPos) after() walkPos {
	if p.level > 0 {
		return walkPos{p.level + 1, 0}
	}
	return walkPos{p.level, p.i + 1}
}

func (p walkPos) before(q walkPos) bool {
	return p.level < q.level || p.level == q.level && p.i < q.i
}

// settle searches the tombstones of every source the walk has passed
// before to and c has not searched yet, raising c.
func (c *cover) settle(to walkPos) error {
	p := c.next
	if p.level < 0 {
		imms := c.rs.mem.Immutables()
		for ; p.level < 0 && p.before(to); p = p.after() {
			if p.i > len(imms) {
				p = walkPos{0, 0}
				break
			}
			m := c.rs.mem.Active()
			if p.i > 0 {
				m = imms[p.i-1]
			}
			c.raise(m.RangeDels())
		}
	}
	levels := c.rs.version.Levels
	for ; p.level == 0 && p.before(to); p = p.after() {
		if p.i == len(levels[0]) {
			p = walkPos{1, 0}
			break
		}
		// A table's key range covers its tombstones (rangedel_write.go):
		// one whose range misses the key has none over it.
		if f := levels[0][p.i]; f.ContainsUserKey(c.key) {
			if err := c.raiseTable(f); err != nil {
				return err
			}
		}
	}
	for ; p.level < len(levels) && p.before(to); p = p.after() {
		if f := c.rs.version.FindFile(p.level, c.key); f != nil {
			if err := c.raiseTable(f); err != nil {
				return err
			}
		}
	}
	c.next = p
	return nil
}

// pass searches the tombstones of f, the table at p, as settle would,
// once the sources before it are searched: the walk has found f already.
func (c *cover) pass(p walkPos, f *manifest.FileMetadata) error {
	if err := c.raiseTable(f); err != nil {
		return err
	}
	c.next = p.after()
	return nil
}

// raiseTable raises c with f's tombstones.
func (c *cover) raiseTable(f *manifest.FileMetadata) error {
	spans, err := c.db.tableRangeDels(f)
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
// (readState.tableRangeDels), and asked again after a failure: a disk
// error is an answer for that iterator, not for every later one.
type versionRangeDels struct {
	mu    sync.Mutex  // held while building
	built atomic.Bool // spans are built: read without mu
	spans keyspan.Spans
}

// tableRangeDels returns every range tombstone of rs's tables, merged
// into one Spans (keyspan.Merge): what an iterator over the whole tree
// asks, whichever table a key lies in. Ordering by source does not matter
// to it: a version at seq p is deleted exactly when some tombstone over
// its key visible to the read has a seq above p.
func (rs *readState) tableRangeDels() (keyspan.Spans, error) {
	c := &rs.rangeDels
	if c.built.Load() {
		return c.spans, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.built.Load() {
		return c.spans, nil
	}
	var all []keyspan.Spans
	for _, files := range rs.version.Levels {
		for _, f := range files {
			s, err := rs.db.tableRangeDels(f)
			if err != nil {
				return keyspan.Spans{}, err
			}
			if s.Len() > 0 {
				all = append(all, s)
			}
		}
	}
	c.spans = keyspan.Merge(all...)
	c.built.Store(true)
	return c.spans, nil
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
