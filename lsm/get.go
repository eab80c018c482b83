package lsm

import (
	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/memtable"
	"github.com/monbandb/monban/sstable"
)

// Get returns the value of key, or ErrNotFound. The returned slice is the
// caller's to keep and modify.
func (d *DB) Get(key []byte) ([]byte, error) {
	if d.closed.Load() {
		return nil, ErrClosed
	}
	rs, seq := d.currentView()
	if rs == nil {
		return nil, ErrClosed
	}
	defer rs.unref()
	return d.closedOr(d.get(rs, key, seq, nil))
}

// closedOr returns a read's result, but ErrClosed for an error once the DB
// is closed: Close closes the tables under reads still in flight, and
// whatever error that gives, the cause is ErrClosed.
func (d *DB) closedOr(v []byte, err error) ([]byte, error) {
	if err != nil && err != ErrNotFound && d.closed.Load() {
		return nil, ErrClosed
	}
	return v, err
}

// currentView returns what a new read sees: the read state, with a
// reference the caller drops with unref (nil once Close released it), and
// the sequence number to read at. The order is the point (package doc,
// invariant 4): every write published by the time seq is loaded went into
// a memtable that rs holds or that rotated after rs was taken, and rs's
// memtables and tables keep every version they held for as long as the
// reference lasts, so no flush or compaction can take away a version seq
// needs. Loaded the other way round, a flush between the two loads could
// drop the version seq sees, and the read would fall through to an older
// one.
func (d *DB) currentView() (*readState, base.SeqNum) {
	rs := d.loadReadState()
	if h := d.hooks.betweenReadLoads; h != nil {
		h()
	}
	return rs, base.SeqNum(d.visibleSeq.Load())
}

// get is the read path (package doc, "The read path"; docs/read-path.md):
// newest source first, stopping at the first version visible at seq. tr,
// when not nil, records every step for Explain, numbered as here.
//
// Range tombstones (rangedel_read.go) are met on the way: each source's
// that covers key raises cover, the newest visible so far, and the first
// source that answers — with a version, or with a covering tombstone —
// ends the walk; a version older than cover is deleted.
func (d *DB) get(rs *readState, key []byte, seq base.SeqNum, tr *Trace) ([]byte, error) {
	if err := checkKey(key); err != nil {
		return nil, err // no write could have stored it
	}
	h := filter.Hash(key)
	// c stays nil, and no source's range tombstones are asked, in a DB that
	// cannot hold any (DB.rangeDelsPossible, loaded after seq was taken).
	var c *cover
	var cv cover // on the stack: a Get allocates nothing for it
	if d.rangeDelsPossible.Load() {
		cv.db, cv.rs, cv.key, cv.readSeq, cv.next, cv.eager = d, rs, key, seq, walkPos{-1, 0}, tr != nil
		c = &cv
	}
	if v, res := d.getMemtables(rs, key, h, seq, tr, c); answered(res) {
		return memtableValue(v, res)
	}

	ta := d.treeLookup(h)
	for level, files := range rs.version.Levels {
		// 3. L0, newest table first: its tables overlap, so every one whose
		// key range covers the key is asked in turn.
		if level == 0 {
			for i, f := range files {
				if v, found, err := d.getFromTable(walkPos{0, i}, f, key, h, ta, seq, tr, c); found || err != nil {
					return v, err
				}
			}
			continue
		}
		// 4. L1…L6: tables of a level do not overlap, so a binary search
		// on their key ranges finds the only one that can hold the key.
		if f := rs.version.FindFile(level, key); f != nil {
			if v, found, err := d.getFromTable(walkPos{level, 0}, f, key, h, ta, seq, tr, c); found || err != nil {
				return v, err
			}
		} else if len(files) > 0 {
			tr.noTable(level)
		}
	}
	return nil, ErrNotFound
}

// getMemtables is steps 1 and 2 of the read path: the version of key a
// memtable holds, if one does (answered), as the memtable's own bytes;
// Deleted also when a range tombstone met so far covers it (c).
func (d *DB) getMemtables(rs *readState, key []byte, h uint64, seq base.SeqNum, tr *Trace, c *cover) ([]byte, memtable.Result) {
	// 1. The active memtable: its filter, then its tree.
	v, res := d.getMemtable(rs.mem.Active(), Source{Kind: SourceActive}, key, h, seq, tr, c)
	if answered(res) {
		return v, res
	}

	// 2. The immutable memtables: one probe of their combined filter rules
	// them all out at once — but not their range tombstones, which no
	// filter holds: a Get searches those later if it must, and Explain,
	// which searches as it passes, asks the memtables one by one when any
	// holds some; otherwise each one, newest first.
	if imms := rs.mem.Immutables(); len(imms) > 0 {
		if !d.opts.IgnoreFilters && !rs.mem.CombinedFilter().MayContainHash(h) && (c == nil || !c.eager || !anyRangeDels(imms)) {
			d.stats.immutableFilterNegatives.Add(1)
			tr.combined(len(imms), VerdictAbsent)
		} else {
			tr.combined(len(imms), maybeUnless(d.opts.IgnoreFilters))
			for i, m := range imms {
				v, res := d.getMemtable(m, Source{Kind: SourceImmutable, Index: i + 1, Count: len(imms)}, key, h, seq, tr, c)
				if answered(res) {
					return v, res
				}
			}
		}
	}
	return nil, memtable.Absent
}

// getMemtable asks one memtable: its filter and tree, then, if it holds a
// version, the range tombstones of it and of the newer sources over key.
func (d *DB) getMemtable(m *memtable.Memtable, src Source, key []byte, h uint64, seq base.SeqNum, tr *Trace, c *cover) ([]byte, memtable.Result) {
	v, res, found := m.GetVersion(key, h, seq)
	d.stats.countMemtable(res)
	tr.memtable(src, m, key, seq, res, !d.opts.IgnoreFilters)
	if c == nil || !answered(res) && !c.eager {
		return v, res // nothing to judge: the search waits (rangedel_read.go)
	}
	c.settle(memtablePos(src).after()) // no error: a memtable's are in memory
	if c.covers(answered(res), found) {
		tr.rangeDeleted(src, 0, c)
		return nil, memtable.Deleted
	}
	return v, res
}

// answered reports whether a memtable's result ends a read: a value or a
// tombstone.
func answered(res memtable.Result) bool { return res == memtable.Found || res == memtable.Deleted }

func memtableValue(v []byte, res memtable.Result) ([]byte, error) {
	if res == memtable.Deleted {
		return nil, ErrNotFound
	}
	// The memtable's bytes are shared; the caller gets its own copy.
	return append(make([]byte, 0, len(v)), v...), nil
}

// getFromTable looks key up in one table, step 3 or 4's sub-steps: a. key
// range (here, from the manifest), b. Bloom filter, c. index, d. data
// block (sstable/get.go). Before it reads the table, the range tombstones
// of the sources passed so far are searched: one over key ends the walk
// here (rule 2 of rangedel_read.go), and the table's own are searched
// with them for the version it holds (rule 1). found means the search
// ends here: err is ErrNotFound for a tombstone, point or range.
func (d *DB) getFromTable(pos walkPos, f *manifest.FileMetadata, key []byte, h uint64, ta treeAnswer, seq base.SeqNum, tr *Trace, c *cover) ([]byte, bool, error) {
	level := pos.level
	if f.NumEntries == 0 && c != nil && !c.eager {
		// A table of range tombstones only (rangedel_write.go): no version
		// to find, so no filter to ask, only tombstones, which wait as
		// every passed source's do. Its key range spans its tombstones',
		// often most of the key space, so most Gets would pass its range
		// check (a.), which is left to the search: a key outside the range
		// lies in none of its spans.
		return nil, false, nil
	}
	// a. Key range, before the table is even opened. It covers the table's
	// range tombstones too (rangedel_write.go).
	if !f.ContainsUserKey(key) {
		tr.outOfRange(level, f.FileNum)
		return nil, false, nil
	}
	src := Source{Kind: SourceTable, Level: level, FileNum: f.FileNum}
	// b. The tree-wide filter's answer for the level, if it gave one, then
	// the filter the table's metadata holds once a reader of it was open
	// (and, with it, the table's range tombstones): a "no" needs no
	// reader at all — no table-cache lookup, and no disk even when the
	// cache has closed the table since.
	fl := d.knownFilter(f)
	if ruledOut := ta.rulesOut(level); ruledOut || fl != nil && !fl.MayContainHash(h) {
		if ruledOut {
			tr.treeRuledOut(level, f.FileNum)
		} else {
			l := sstable.Lookup{Outcome: sstable.OutcomeFilteredOut, FilterAsked: true}
			d.stats.levels[level].count(&l)
			tr.table(level, f.FileNum, &l)
		}
		if c != nil && c.eager {
			if err := c.settle(pos.after()); err != nil {
				return nil, true, err
			}
			if c.covers(false, 0) {
				tr.rangeDeleted(src, tableStep(level), c)
				return nil, true, ErrNotFound
			}
		}
		return nil, false, nil
	}
	if c != nil {
		if err := c.settle(pos); err != nil {
			return nil, true, err
		}
		if c.covers(false, 0) {
			tr.rangeDeleted(src, tableStep(level), c)
			return nil, true, ErrNotFound
		}
		if err := c.pass(pos, f); err != nil {
			return nil, true, err
		}
	}
	v, found, version, err := d.findInTable(level, f, fl, key, h, seq, tr)
	switch {
	case err != nil && err != ErrNotFound:
		return nil, true, err
	case c != nil && c.covers(found, version):
		tr.rangeDeleted(src, tableStep(level), c)
		return nil, true, ErrNotFound
	}
	return v, found, err
}

// findInTable is getFromTable's sub-steps c and d, and b when the
// table's metadata holds no filter (fl nil): the point version of key the
// table holds, and its sequence number. The lookup counts nothing itself
// (sstable.Lookup): its record is counted here, per level, and explained.
func (d *DB) findInTable(level int, f *manifest.FileMetadata, fl *filter.CacheLine, key []byte, h uint64, seq base.SeqNum, tr *Trace) ([]byte, bool, base.SeqNum, error) {
	r, release, err := d.table(f)
	if err != nil {
		return nil, true, 0, err
	}
	defer release()
	var l sstable.Lookup
	var v []byte
	var kind base.Kind
	var found bool
	may := true
	if fl == nil {
		may, err = r.Probe(h, &l) // b., reading a filter page if need be
	}
	if may && err == nil {
		v, kind, found, err = r.Find(key, seq, &l) // c and d
	}
	d.stats.levels[level].count(&l)
	tr.table(level, f.FileNum, &l)
	switch {
	case err != nil:
		return nil, true, 0, err
	case !found:
		return nil, false, 0, nil
	case kind == base.KindDelete:
		return nil, true, l.Seq, ErrNotFound
	}
	return v, true, l.Seq, nil
}

// table returns the reader of f from the table cache (opening it if
// needed) and a func that releases it, and records f's filter, when the
// reader holds it in memory, for the proofs (tableMayContain), which then
// probe it without the cache's lock. Every path to a table reader goes
// through here.
func (d *DB) table(f *manifest.FileMetadata) (*sstable.Reader, func(), error) {
	r, release, err := d.tables.Get(tableRef(f))
	if err == nil {
		d.recordFilter(f, r)
		spans := r.RangeDels()
		if spans.Len() > 0 {
			d.rangeDelsPossible.Store(true)
		}
		f.SetRangeDels(spans)
	}
	return r, release, err
}

// tableRef is what the table cache checks a table file against: the size
// and identity the manifest recorded for it, so that a swapped or replaced
// file gives ErrCorruption, never a wrong answer.
func tableRef(f *manifest.FileMetadata) sstable.TableRef {
	return sstable.TableRef{FileNum: f.FileNum, Size: f.Size, TableID: f.TableID}
}
