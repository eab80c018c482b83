package lsm

import (
	"bytes"
	"cmp"
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
// any other error of that key's read (ErrClosed for every key of a closed
// DB). keys may be in any order and may repeat; MultiGet neither keeps nor
// modifies them.
//
// It answers what len(keys) Gets would, for less where the keys reach
// the tables: the keys left after the memtables are sorted once and
// walked through each level's tables together, so a table is found,
// opened and filter-probed once for its keys and a data block holding
// several of them is read once (docs/design.md, "Reads without garbage";
// measured gains in docs/benchmarks.md, "MultiGet"). Keys the memtables
// answer cost what their Gets would, and the two result slices.
func (d *DB) MultiGet(keys [][]byte) (values [][]byte, errs []error) {
	if d.closed.Load() {
		return d.multiGet(nil, 0, keys)
	}
	rs, seq := d.currentView()
	return d.multiGet(rs, seq, keys)
}

// MultiGet reads keys as they were when the snapshot was taken, as
// DB.MultiGet reads them at the call.
func (s *Snapshot) MultiGet(keys [][]byte) (values [][]byte, errs []error) {
	if s.closed.Load() || s.db.closed.Load() {
		return s.db.multiGet(nil, 0, keys)
	}
	return s.db.multiGet(s.db.loadReadState(), s.seq, keys)
}

// multiGet reads keys at seq through rs and drops rs's reference; a nil
// rs (a closed DB or snapshot) answers ErrClosed for every key.
func (d *DB) multiGet(rs *readState, seq base.SeqNum, keys [][]byte) (values [][]byte, errs []error) {
	values, errs = make([][]byte, len(keys)), make([]error, len(keys))
	if rs == nil {
		for i := range errs {
			errs[i] = ErrClosed
		}
		return values, errs
	}
	defer rs.unref()
	if rs.mayHoldRangeDels() {
		// The batched walk below knows no range tombstone: each key takes
		// Get's path, which does (rangedel_read.go).
		for i, k := range keys {
			values[i], errs[i] = d.closedOr(d.get(rs, k, seq, nil))
		}
		return values, errs
	}
	b := multiGets.Get().(*multiGet)
	b.d, b.keys, b.seq, b.values, b.errs = d, keys, seq, values, errs
	b.run(rs)
	b.reset()
	multiGets.Put(b)
	for i, err := range errs {
		values[i], errs[i] = d.closedOr(values[i], err)
		if err := checkKey(keys[i]); err != nil {
			values[i], errs[i] = nil, err // as Get answers it: no write could have stored it
		}
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
	counts [NumLevels]sstable.LookupCounts

	// shared is the longest prefix every key of the batch begins with,
	// and prefixes are the 8 bytes of each key after it (base.KeyPrefix):
	// keys that all begin alike (zero-padded numbers, a table's name) are
	// told apart by the bytes where they differ. words are the sort words
	// of sortKeys, each a prefix's first four bytes above the key's index
	// (no batch holds 2^32 keys).
	shared          []byte
	prefixes, words []uint64
	// pending are the indexes of the keys still unanswered, in key order
	// from the first table on (sortKeys).
	pending []int
	// runHashes and maybe are one table's keys' hashes and its filter's
	// answers; maybe is first the active memtable's answers.
	runHashes []uint64
	maybe     []bool
	// runs are the levels the tree-wide filter names for each key, when
	// it answered (treeOK).
	runs   []filter.RunSet
	treeOK bool
}

// reset empties the batch for the pool: it keeps the scratch arrays, and
// no reference to the caller's keys and results.
func (b *multiGet) reset() {
	*b = multiGet{hashes: b.hashes[:0], prefixes: b.prefixes[:0], words: b.words[:0], pending: b.pending[:0], runHashes: b.runHashes[:0], maybe: b.maybe[:0], runs: b.runs[:0]}
}

// prepare computes the keys' hashes, the prefix they all share, and each
// key's 8 bytes after it.
func (b *multiGet) prepare() {
	b.hashes = slices.Grow(b.hashes[:0], len(b.keys))[:len(b.keys)]
	b.prefixes = slices.Grow(b.prefixes[:0], len(b.keys))[:len(b.keys)]
	if len(b.keys) > 0 {
		b.shared = b.keys[0]
	}
	for i, k := range b.keys {
		b.hashes[i] = filter.Hash(k)
		b.shared = b.shared[:base.SharedPrefixLen(b.shared, k)]
	}
	for i, k := range b.keys {
		b.prefixes[i] = base.KeyPrefix(k[len(b.shared):])
	}
}

func (b *multiGet) run(rs *readState) {
	b.prepare()
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
	pending := slices.Grow(b.pending[:0], len(b.keys))
	var filteredOut uint64
	for i := range b.keys {
		if batchFilter && !b.maybe[i] {
			filteredOut++
		} else if v, res := b.d.getMemtables(rs, b.keys[i], b.hashes[i], b.seq, nil, nil); answered(res) {
			b.values[i], b.errs[i] = memtableValue(v, res)
			continue
		}
		pending = append(pending, i)
	}
	if filteredOut > 0 {
		b.d.stats.memtableFilterNegatives.Add(filteredOut)
	}
	// The tree-wide filter, when it answers, once for every key left.
	if t := b.d.tree; t != nil && !b.d.opts.IgnoreFilters && len(pending) > 0 {
		b.runs = slices.Grow(b.runs[:0], len(b.keys))[:len(b.keys)]
		b.treeOK = t.lookupEach(b.hashes, pending, b.runs)
	}

	// 3. L0, newest table first; 4. one table per key in each deeper level.
	// The tables are walked beside the keys in key order, sorted once
	// the first table is met: a batch the memtables answer, or a DB
	// without tables, sorts nothing.
	sorted := false
	for level, files := range rs.version.Levels {
		if len(pending) == 0 {
			break
		}
		if len(files) > 0 && !sorted {
			b.sortKeys(pending)
			sorted = true
		}
		if level == 0 {
			for _, f := range files {
				pending = b.l0Table(f, pending)
			}
			continue
		}
		pending = b.level(files, level, pending)
	}
	for _, i := range pending {
		b.errs[i] = ErrNotFound
	}
	for level := range b.counts {
		b.d.stats.levels[level].add(&b.counts[level])
	}
	b.pending = pending
}

// ruledOut reports whether the tree-wide filter proved that no table of
// level holds the batch's key i.
func (b *multiGet) ruledOut(i, level int) bool { return b.treeOK && !b.runs[i].Has(level) }

// bound is a key to compare the batch's keys with (a table's smallest
// or largest), prepared once for all of them: whether it begins with the
// batch's shared prefix, and if so the 8 bytes after it (base.KeyPrefix).
type bound struct {
	key    []byte
	shared bool
	prefix uint64
}

func (b *multiGet) bound(k []byte) bound {
	n := len(b.shared)
	if len(k) < n || !bytes.Equal(k[:n], b.shared) {
		return bound{key: k}
	}
	return bound{key: k, shared: true, prefix: base.KeyPrefix(k[n:])}
}

// keyBound is the batch's key j as a bound, which begins with the shared
// prefix by its definition.
func (b *multiGet) keyBound(j int) bound { return bound{b.keys[j], true, b.prefixes[j]} }

// compare orders the batch's key i against bd, as bytes.Compare does: a
// bound that begins with the batch's shared prefix, as table bounds among
// the batch's keys do, is ordered on the 8 bytes after it, and the two
// keys are read only where those tie.
func (b *multiGet) compare(i int, bd bound) int {
	if !bd.shared {
		return bytes.Compare(b.keys[i], bd.key)
	}
	if c := cmp.Compare(b.prefixes[i], bd.prefix); c != 0 {
		return c
	}
	n := len(b.shared)
	return bytes.Compare(b.keys[i][n:], bd.key[n:])
}

// sortKeys puts idx, indexes of the batch's keys, in key order. A key
// sorts first on a word that holds the first four bytes of its prefix
// above its index, which slices.Sort orders without a call per
// comparison; each run of keys whose four bytes tie is then put in order
// by compare (sortTied). slices.SortFunc with bytes.Compare, a call per
// comparison, had cost a MultiGet of absent keys, which reads almost no
// block, more than the walk it allows saved (BenchmarkMultiGet).
func (b *multiGet) sortKeys(idx []int) {
	words := slices.Grow(b.words[:0], len(idx))
	for _, i := range idx {
		words = append(words, b.prefixes[i]&^(1<<32-1)|uint64(i))
	}
	slices.Sort(words)
	b.words = words
	for j, w := range words {
		idx[j] = int(uint32(w))
	}
	for lo := 0; lo < len(idx); {
		hi := lo + 1
		for hi < len(idx) && words[hi]>>32 == words[lo]>>32 {
			hi++
		}
		b.sortTied(idx[lo:hi])
		lo = hi
	}
}

// maxInsertionSort is the longest run of tied keys sortTied orders by
// insertion: quadratic, so only where the runs are short, as they are
// among keys that differ early; keys alike in their first four bytes
// past the shared prefix (a common field, then the key's own bytes) make
// one run of the whole batch.
const maxInsertionSort = 12

// sortTied puts run, key indexes whose sort words tie, in key order.
func (b *multiGet) sortTied(run []int) {
	if len(run) > maxInsertionSort {
		slices.SortFunc(run, func(x, y int) int {
			if c := b.compare(x, b.keyBound(y)); c != 0 {
				return c
			}
			return cmp.Compare(x, y) // equal keys in the batch's order, as insertion leaves them
		})
		return
	}
	for j := 1; j < len(run); j++ {
		x := run[j]
		n := j
		for ; n > 0 && b.compare(x, b.keyBound(run[n-1])) < 0; n-- {
			run[n] = run[n-1]
		}
		run[n] = x
	}
}

// firstFrom returns the first position of sorted (key indexes in key
// order) whose key compares to k at least c: c 0 for the first key ≥ k,
// 1 for the first key > k.
func (b *multiGet) firstFrom(sorted []int, k []byte, c int) int {
	bd := b.bound(k)
	lo, hi := 0, len(sorted)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if b.compare(sorted[mid], bd) < c {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// l0Table looks the keys pending (in key order) up in the L0 table f and
// returns those it did not answer, in key order in pending's own array.
// a. Key range: the keys the table's range covers are one stretch of
// pending.
func (b *multiGet) l0Table(f *manifest.FileMetadata, pending []int) []int {
	lo := b.firstFrom(pending, f.Smallest.UserKey, 0)
	hi := lo + b.firstFrom(pending[lo:], f.Largest.UserKey, 1)
	if lo == hi {
		return pending
	}
	// table() compacts the stretch in place: it appends at most one key
	// to left for each key of run it has read.
	left := b.table(0, f, pending[lo:hi], pending[:lo])
	return append(left, pending[hi:]...)
}

// level looks the keys pending (in key order) up in files, a level of
// disjoint tables in key order, and returns those it did not answer, in
// key order in pending's own array. a. Key range: the keys and the
// tables are walked together, each key to the first table whose largest
// key is not below it, searched for forward from the table before
// (firstTable); the keys that table covers are the stretch of keys up to
// its largest.
func (b *multiGet) level(files []*manifest.FileMetadata, level int, pending []int) []int {
	if len(files) == 0 {
		return pending
	}
	left := pending[:0] // as in l0Table: left never passes what was read
	t, largest := 0, b.bound(files[0].Largest.UserKey)
	for p := 0; p < len(pending); {
		i := pending[p]
		if b.compare(i, largest) > 0 {
			t += 1 + b.firstTable(files[t+1:], i)
			if t == len(files) {
				return append(left, pending[p:]...)
			}
			largest = b.bound(files[t].Largest.UserKey)
		}
		f := files[t]
		if b.compare(i, b.bound(f.Smallest.UserKey)) < 0 { // between tables
			left = append(left, i)
			p++
			continue
		}
		q := p + 1
		for q < len(pending) && b.compare(pending[q], largest) <= 0 {
			q++
		}
		left = b.table(level, f, pending[p:q], left)
		p = q
	}
	return left
}

// firstTable returns the index of the first of files whose largest key
// is not below the batch's key i (len(files) if none). The batch's next
// key is most often a table or a few past the last one's, so it looks 1,
// 2, 4, … tables ahead before it searches between the last two it looked
// at (manifest.SearchLargest).
func (b *multiGet) firstTable(files []*manifest.FileMetadata, i int) int {
	lo, hi := 0, 1
	for hi <= len(files) && bytes.Compare(b.keys[i], files[hi-1].Largest.UserKey) > 0 {
		lo, hi = hi, 2*hi
	}
	return lo + manifest.SearchLargest(files[lo:min(hi, len(files))], b.keys[i])
}

// table looks the keys of run up in the table f, whose key range covers
// them all, and appends those it did not answer to left: sub-step b (the
// filter) for all of them at once, with their cache lines loaded together
// (filter.CacheLine.MayContainHashes), then c and d (sstable.Reader.Find)
// for the keys the filter admits.
func (b *multiGet) table(level int, f *manifest.FileMetadata, run, left []int) []int {
	// b. As in getFromTable: the tree-wide filter's answer for the level
	// first, then the filter the metadata holds, and the table is opened
	// only if it admits some key.
	hashes := b.runHashes[:0]
	for _, i := range run {
		if !b.ruledOut(i, level) {
			hashes = append(hashes, b.hashes[i])
		}
	}
	if len(hashes) == 0 {
		return append(left, run...)
	}
	maybe := slices.Grow(b.maybe[:0], len(hashes))[:len(hashes)]
	b.runHashes, b.maybe = hashes, maybe
	c := &b.counts[level]
	fl := b.d.knownFilter(f)
	asked := fl != nil
	if asked {
		fl.MayContainHashes(hashes, maybe)
		if !slices.Contains(maybe, true) {
			c.FilterProbes += uint64(len(hashes))
			c.FilterNegatives += uint64(len(hashes))
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
	var cur sstable.BlockCursor // the keys of run are in key order
	defer cur.Release()
	if !asked {
		r.MayContainHashes(hashes, maybe)
	}
	n := 0
	for _, i := range run {
		if b.ruledOut(i, level) {
			left = append(left, i)
			continue
		}
		n++
		if !maybe[n-1] {
			c.FilterProbes++
			c.FilterNegatives++
			left = append(left, i)
			continue
		}
		var l sstable.Lookup
		v, kind, found, err := r.FindNext(b.keys[i], b.seq, &l, &cur)
		c.Count(&l)
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
