package lsm

import (
	"bytes"
	"slices"

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
// once: each key asks the memtables, then the keys still unanswered are
// sorted once and walk the tables level by level. A level's tables and the
// sorted keys are merged in one pass, so the keys a table covers come as
// one run: the table is found, opened and pinned once for the run, not
// once per key, and no key binary-searches the level.
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
	b := multiGet{d: d, keys: keys, hashes: make([]uint64, len(keys)), seq: seq, values: values, errs: errs}
	b.run(rs)
	for i, err := range errs {
		values[i], errs[i] = d.closedOr(values[i], err)
	}
	return values, errs
}

// multiGet is one MultiGet's batch: the keys, their hashes, the results.
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
	// hashesInRange and maybe are table's scratch: the hashes of a run's
	// keys inside the table's range, and the filter's answers.
	hashesInRange []uint64
	maybe         []bool
}

func (b *multiGet) run(rs *readState) {
	// 1–2. The memtables, key by key: a memtable is a tree, with nothing
	// to share between lookups.
	pending := make([]int, 0, len(b.keys))
	for i, k := range b.keys {
		b.hashes[i] = filter.Hash(k)
		if v, res := b.d.getMemtables(rs, k, b.hashes[i], b.seq, nil); answered(res) {
			b.values[i], b.errs[i] = memtableValue(v, res)
			continue
		}
		pending = append(pending, i)
	}
	slices.SortFunc(pending, func(x, y int) int { return bytes.Compare(b.keys[x], b.keys[y]) })

	// 3. L0, newest table first; 4. one table per key in each deeper level.
	for level, files := range rs.version.Levels {
		if len(pending) == 0 {
			break
		}
		if level == 0 {
			for _, f := range files {
				pending = b.table(0, f, pending)
			}
			continue
		}
		pending = b.level(level, files, pending)
	}
	for _, i := range pending {
		b.errs[i] = ErrNotFound
	}
	for level := range b.counts {
		b.d.stats.levels[level].add(&b.counts[level])
	}
}

// level looks the sorted keys pending up in a level's sorted, disjoint
// tables and returns those it did not answer, still sorted, in pending's
// own array.
func (b *multiGet) level(level int, files []*manifest.FileMetadata, pending []int) []int {
	left := pending[:0]
	j := 0
	for i := 0; i < len(pending); {
		for j < len(files) && bytes.Compare(files[j].Largest.UserKey, b.keys[pending[i]]) < 0 {
			j++
		}
		if j == len(files) {
			return append(left, pending[i:]...)
		}
		// The run of keys up to files[j]'s largest: the ones below its
		// smallest fall between tables, which table() leaves pending.
		end := i + 1
		for end < len(pending) && bytes.Compare(b.keys[pending[end]], files[j].Largest.UserKey) <= 0 {
			end++
		}
		// table() compacts the run's unanswered keys to its front, and
		// left never passes i: the append moves them down in place.
		left = append(left, b.table(level, files[j], pending[i:end])...)
		i = end
	}
	return left
}

// table looks the sorted keys run up in one table and returns those it
// did not answer, in run's own array: sub-step a (key range) per key, b
// (the filter) for all the keys in range at once, with their cache lines
// loaded together (filter.CacheLine.MayContainHashes), then c and d
// (sstable.Reader.Find) for the keys the filter admits.
func (b *multiGet) table(level int, f *manifest.FileMetadata, run []int) []int {
	b.hashesInRange = b.hashesInRange[:0]
	for _, i := range run {
		if f.ContainsUserKey(b.keys[i]) {
			b.hashesInRange = append(b.hashesInRange, b.hashes[i])
		}
	}
	if len(b.hashesInRange) == 0 {
		return run
	}
	left := run[:0] // compacts run in place, in order: left never passes i
	b.maybe = slices.Grow(b.maybe[:0], len(b.hashesInRange))[:len(b.hashesInRange)]
	// b. As in getFromTable: the filter the metadata holds answers first,
	// and the table is opened only if it admits some key.
	fl := b.d.knownFilter(f)
	asked := fl != nil
	if asked {
		fl.MayContainHashes(b.hashesInRange, b.maybe)
	}
	var r *sstable.Reader
	if !asked || slices.Contains(b.maybe, true) {
		var release func()
		var err error
		if r, release, err = b.d.table(f); err != nil {
			for _, i := range run {
				if f.ContainsUserKey(b.keys[i]) {
					b.errs[i] = err
				} else {
					left = append(left, i)
				}
			}
			return left
		}
		defer release()
		if !asked {
			r.MayContainHashes(b.hashesInRange, b.maybe)
		}
	}
	c := &b.counts[level]
	n := 0
	for _, i := range run {
		if !f.ContainsUserKey(b.keys[i]) {
			left = append(left, i)
			continue
		}
		maybe := b.maybe[n]
		n++
		if !maybe {
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
