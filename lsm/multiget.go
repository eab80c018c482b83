package lsm

import (
	"slices"
	"sync"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/sstable"
)

// MultiGet reads keys as one consistent read: every key at the same
// sequence number, through the same read state, as a snapshot taken at the
// call would see them. values[i] is the value of keys[i] (the caller's to
// keep), or nil with errs[i] == ErrNotFound when it has none; errs[i] is
// any other error of that key's read.
//
// It follows the read path of Get (package doc) for the whole batch at
// once: the memtables (the active one's filter asked for all the keys
// under one lock), then the keys still unanswered walk the tables level by
// level, grouped by table. In L0 a table takes the keys its range covers;
// in a deeper level each key finds its table by binary search, as in Get,
// and the keys are grouped by the table's index. A table is then found,
// opened and pinned once for its keys, not once per key, and its filter is
// asked for all of them at once. The keys themselves are never sorted:
// sorting 32 keys took 15–19% of a batch of absent keys in
// BenchmarkMultiGet (two tables below L0), more than the binary searches
// cost. With hundreds of tables a level, the searches cost as much as
// Get's (43% of a batch of absent keys, 422 tables in L6), and a sorted
// merge walking the tables did no better.
func (d *DB) MultiGet(keys [][]byte) (values [][]byte, errs []error) {
	values, errs = make([][]byte, len(keys)), make([]error, len(keys))
	if d.closed.Load() {
		for i := range errs {
			errs[i] = ErrClosed
		}
		return values, errs
	}
	rs, seq := d.currentView()
	if rs == nil {
		for i := range errs {
			errs[i] = ErrClosed
		}
		return values, errs
	}
	defer rs.unref()
	b := multiGets.Get().(*multiGet)
	b.d, b.keys, b.seq, b.values, b.errs = d, keys, seq, values, errs
	b.run(rs)
	b.reset()
	multiGets.Put(b)
	for i, err := range errs {
		values[i], errs[i] = d.closedOr(values[i], err)
	}
	return values, errs
}

// multiGets holds batches between MultiGet calls, so that a batch's
// scratch slices are not allocated again for each call.
var multiGets = sync.Pool{New: func() any { return new(multiGet) }}

// multiGet is one MultiGet's batch: the keys, their hashes, the results,
// and the scratch of the table walk.
type multiGet struct {
	d      *DB
	keys   [][]byte
	hashes []uint64
	seq    base.SeqNum
	values [][]byte
	errs   []error
	// counts are the batch's table-lookup counters, added to the DB's
	// stats once at the end.
	counts [NumLevels]lookupCounts

	// pending are the indexes of the keys still unanswered, in no order.
	pending []int
	// byTable are a level's keys that some table covers, each as the
	// table's index in the level (high 32 bits) and the key's (low 32
	// bits; no batch holds 2^32 keys), one word level() compacts in place.
	byTable []uint64
	// runKeys, runHashes and maybe are one table's keys, their hashes, and
	// its filter's answers; maybe is first the active memtable's answers.
	runKeys   []int
	runHashes []uint64
	maybe     []bool
}

// reset empties the batch for the pool: it keeps the scratch arrays, and
// no reference to the caller's keys and results.
func (b *multiGet) reset() {
	*b = multiGet{hashes: b.hashes[:0], pending: b.pending[:0], byTable: b.byTable[:0], runKeys: b.runKeys[:0], runHashes: b.runHashes[:0], maybe: b.maybe[:0]}
}

func (b *multiGet) run(rs *readState) {
	b.hashes = slices.Grow(b.hashes, len(b.keys))[:len(b.keys)]
	for i, k := range b.keys {
		b.hashes[i] = filter.Hash(k)
	}
	// 1–2. The memtables. With no immutable memtable, the active one's
	// filter answers for the whole batch under one read lock, and the keys
	// it rules out skip getMemtables; a key it admits, or any key while
	// immutables wait, asks the memtables as in Get: a memtable is a tree,
	// with nothing to share between lookups.
	batchFilter := !b.d.opts.IgnoreFilters && len(rs.mem.Immutables()) == 0
	if batchFilter {
		b.maybe = slices.Grow(b.maybe[:0], len(b.keys))[:len(b.keys)]
		rs.mem.Active().MayContainHashes(b.hashes, b.maybe)
	}
	pending := slices.Grow(b.pending, len(b.keys))
	var filteredOut uint64
	for i, k := range b.keys {
		if batchFilter && !b.maybe[i] {
			filteredOut++
		} else if v, res := b.d.getMemtables(rs, k, b.hashes[i], b.seq, nil); answered(res) {
			b.values[i], b.errs[i] = memtableValue(v, res)
			continue
		}
		pending = append(pending, i)
	}
	if filteredOut > 0 {
		b.d.stats.memtableFilterNegatives.Add(filteredOut)
	}

	// 3. L0, newest table first; 4. one table per key in each deeper level.
	for level, files := range rs.version.Levels {
		if len(pending) == 0 {
			break
		}
		if level == 0 {
			for _, f := range files {
				pending = b.l0Table(f, pending)
			}
			continue
		}
		pending = b.level(rs.version, level, pending)
	}
	for _, i := range pending {
		b.errs[i] = ErrNotFound
	}
	for level := range b.counts {
		b.d.stats.levels[level].add(&b.counts[level])
	}
	b.pending = pending
}

// l0Table looks the keys pending up in the L0 table f and returns those it
// did not answer, in pending's own array.
func (b *multiGet) l0Table(f *manifest.FileMetadata, pending []int) []int {
	run := b.runKeys[:0]
	left := pending[:0] // compacts pending in place: left never passes i
	for _, i := range pending {
		// a. Key range.
		if f.ContainsUserKey(b.keys[i]) {
			run = append(run, i)
		} else {
			left = append(left, i)
		}
	}
	b.runKeys = run
	if len(run) == 0 {
		return left
	}
	return b.table(0, f, run, left)
}

// level looks the keys pending up in a level of sorted, disjoint tables
// and returns those it did not answer, in pending's own array.
func (b *multiGet) level(v *manifest.Version, level int, pending []int) []int {
	files := v.Levels[level]
	byTable := b.byTable[:0]
	left := pending[:0] // compacts pending in place: left never passes i
	for _, i := range pending {
		// a. Key range: the only table that may hold the key.
		if t := v.FindFileIndex(level, b.keys[i]); t >= 0 {
			byTable = append(byTable, uint64(t)<<32|uint64(i))
		} else {
			left = append(left, i)
		}
	}
	b.byTable = byTable
	// Every key of byTable was read out of pending above, so table() may
	// append to left past where pending's keys were. Each round takes the
	// keys of the first key's table and compacts the others in place:
	// cheaper than sorting for the few tables a batch meets in most
	// levels, and at worst (a table per key) as many rounds as keys.
	for rest := byTable; len(rest) > 0; {
		t := rest[0] >> 32
		run, others := b.runKeys[:0], rest[:0]
		for _, x := range rest {
			if x>>32 == t {
				run = append(run, int(uint32(x)))
			} else {
				others = append(others, x)
			}
		}
		b.runKeys, rest = run, others
		left = b.table(level, files[t], run, left)
	}
	return left
}

// table looks the keys of run up in the table f, whose key range covers
// them all, and appends those it did not answer to left: sub-step b (the
// filter) for all of them at once, with their cache lines loaded together
// (filter.CacheLine.MayContainHashes), then c and d (sstable.Reader.Find)
// for the keys the filter admits.
func (b *multiGet) table(level int, f *manifest.FileMetadata, run, left []int) []int {
	hashes := b.runHashes[:0]
	for _, i := range run {
		hashes = append(hashes, b.hashes[i])
	}
	maybe := slices.Grow(b.maybe[:0], len(run))[:len(run)]
	b.runHashes, b.maybe = hashes, maybe
	c := &b.counts[level]
	// b. As in getFromTable: the filter the metadata holds answers first,
	// and the table is opened only if it admits some key.
	fl := b.d.knownFilter(f)
	asked := fl != nil
	if asked {
		fl.MayContainHashes(hashes, maybe)
		if !slices.Contains(maybe, true) {
			c.filterProbes += uint64(len(run))
			c.filterNegatives += uint64(len(run))
			return append(left, run...)
		}
	}
	r, release, err := b.d.table(f)
	if err != nil {
		for _, i := range run {
			b.errs[i] = err
		}
		return left
	}
	defer release()
	if !asked {
		r.MayContainHashes(hashes, maybe)
	}
	for n, i := range run {
		if !maybe[n] {
			c.filterProbes++
			c.filterNegatives++
			left = append(left, i)
			continue
		}
		var t sstable.GetTrace
		v, kind, found, err := r.Find(b.keys[i], b.seq, &t)
		c.count(&t)
		switch {
		case err != nil:
			b.errs[i] = err
		case !found:
			left = append(left, i)
		case kind == base.KindDelete:
			b.errs[i] = ErrNotFound
		default:
			b.values[i] = v
		}
	}
	return left
}
