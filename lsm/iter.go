package lsm

import (
	"bytes"
	"iter"
	"sync"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/keyspan"
	"github.com/monbandb/monban/internal/merge"
)

// IterOptions bounds an iterator to the user keys in [LowerBound,
// UpperBound); nil bounds are open.
//
// Prefix, if not nil, bounds it further to the keys k whose prefix under
// Options.Split is Prefix (Split.Prefix(k) equal to it; a key that merely
// starts with Prefix's bytes but has a longer prefix is not one), and
// lets it leave out every memtable and table whose filter rules the
// prefix out (iter_prefix.go). A DB opened without a Split gives an
// iterator whose Err wraps ErrInvalidOptions.
//
// The iterator keeps the three slices, not copies: they must not change
// while it is open (as Pebble's IterOptions), or its bounds change with
// them, out of step with the filters it asked at creation.
type IterOptions struct {
	LowerBound, UpperBound []byte
	Prefix                 []byte
}

// Iter iterates over a consistent view of the DB: the state at the
// sequence number it was created at, even while writes, flushes and
// compactions go on. It is not safe for concurrent use. Key and Value are
// valid until the next positioning call or Close; copy what you keep (they
// may alias a cached block, which the iterator holds only while it is on
// it). Close it: an open Iter keeps the tables of its view from being
// deleted.
type Iter struct {
	rs    *readState
	seq   base.SeqNum
	lower []byte
	upper []byte
	// prefix is IterOptions.Prefix and split Options.Split, both nil for
	// an iterator bounded by LowerBound and UpperBound alone.
	prefix  []byte
	split   *filter.Split
	parts   *iterParts // nil once closed
	merged  *merge.Iter
	forward bool
	valid   bool
	// In reverse, the merged iterator sits before the current entry's
	// versions, so the current key and value are copied here.
	savedKey, savedValue []byte
	err                  error
	closed               bool
	// rangeDels are the range tombstones of every source of the view,
	// merged (rangedel_read.go); empty, and never asked, without any.
	rangeDels keyspan.Spans
}

// NewIter returns an iterator over the DB's current state. o may be nil.
func (d *DB) NewIter(o *IterOptions) *Iter {
	if d.closed.Load() {
		return &Iter{err: ErrClosed}
	}
	rs, seq := d.currentView()
	return d.newIter(rs, seq, o)
}

// newIter returns an iterator over rs at seq; the iterator owns rs's
// reference (a nil rs: the DB is closed).
func (d *DB) newIter(rs *readState, seq base.SeqNum, o *IterOptions) *Iter {
	if rs == nil {
		return &Iter{err: ErrClosed}
	}
	var opts IterOptions
	if o != nil {
		opts = *o
	}
	lower, upper, err := d.prefixBounds(&opts)
	if err != nil {
		rs.unref()
		return &Iter{err: err} // born stopped: Close returns err
	}
	p := iterPartsPool.Get().(*iterParts)
	it := &Iter{rs: rs, seq: seq, lower: lower, upper: upper, parts: p, merged: &p.merged,
		savedKey: p.savedKey[:0], savedValue: p.savedValue[:0]}
	var probe *prefixProbe // nil: every source is read
	if opts.Prefix != nil {
		it.prefix, it.split = opts.Prefix, d.opts.Split
		// Under IgnoreFilters a memtable's filter is empty, not absent:
		// asking it would skip every memtable.
		if !d.opts.IgnoreFilters {
			p.probe = prefixProbe{split: d.opts.Split, hash: filter.PrefixHash(opts.Prefix), stats: &d.stats}
			probe = &p.probe
		}
	}
	// Range filters answer for a bounded range only (iter_range.go).
	ranged := lower != nil && upper != nil && d.opts.RangeFilter.BitsPerKey > 0 && !d.opts.IgnoreFilters
	var tp *tableProbe // nil: every table is read
	if probe != nil || ranged {
		p.tables = tableProbe{prefix: probe}
		if ranged {
			p.ranges = rangeProbe{lower: lower, upper: upper, stats: &d.stats}
			p.tables.ranges = &p.ranges
		}
		tp = &p.tables
	}
	// An L0 table is a level of its own: L0 tables overlap.
	l0 := rs.version.Levels[0]
	n := len(l0)
	for level := 1; level < NumLevels; level++ {
		if len(rs.version.Levels[level]) > 0 {
			n++
		}
	}
	if cap(p.levels) < n {
		p.levels = make([]levelIter, n)
	}
	p.levels = p.levels[:n]
	sources := probe.appendMemtable(p.sources[:0], rs.mem.Active())
	for _, m := range rs.mem.Immutables() {
		sources = probe.appendMemtable(sources, m)
	}
	n = 0
	for i := range l0 {
		p.levels[n].init(d, l0[i:i+1], it.lower, it.upper, tp)
		sources = append(sources, &p.levels[n])
		n++
	}
	for level := 1; level < NumLevels; level++ {
		if files := rs.version.Levels[level]; len(files) > 0 {
			p.levels[n].init(d, files, it.lower, it.upper, tp)
			sources = append(sources, &p.levels[n])
			n++
		}
	}
	p.sources = sources
	p.merged.Init(sources)
	tables, err := rs.tableRangeDels()
	it.rangeDels = keyspan.Merge(rs.memtableRangeDels(), tables)
	it.setErr(err) // ErrClosed, if Close closed the tables meanwhile
	return it
}

// iterParts is what an Iter is built of besides itself and its memtables'
// iterators: the merging iterator, its sources, a levelIter per L0 table
// and per deeper level, and the buffers of the reverse direction. Close
// returns them to iterPartsPool with their buffers grown, so that opening,
// running and closing an Iter allocates nothing else in steady state. The
// Iter itself is not pooled: a method called after Close still finds it
// closed, never another caller's iterator.
type iterParts struct {
	merged               merge.Iter
	sources              []base.InternalIterator
	levels               []levelIter
	savedKey, savedValue []byte
	probe                prefixProbe
	ranges               rangeProbe
	tables               tableProbe
	stretch              deletedStretch // skipDeleted's, kept here so that passing it allocates nothing
}

var iterPartsPool = sync.Pool{New: func() any { return new(iterParts) }}

// release returns p to the pool once its iterators are closed, dropping
// what they point at (the view's tables and memtables) but not their
// buffers.
func (p *iterParts) release(it *Iter) {
	p.savedKey, p.savedValue = it.savedKey[:0], it.savedValue[:0]
	clear(p.sources)
	p.sources = p.sources[:0]
	for i := range p.levels {
		p.levels[i].init(nil, nil, nil, nil, nil)
	}
	p.probe, p.ranges, p.tables = prefixProbe{}, rangeProbe{}, tableProbe{}
	p.merged.Init(nil)
	iterPartsPool.Put(p)
}

// First moves to the first key.
func (it *Iter) First() bool {
	if it.lower != nil {
		return it.SeekGE(it.lower)
	}
	if !it.usable() {
		return false
	}
	it.forward = true
	it.merged.First()
	return it.findNext(nil, false)
}

// Last moves to the last key.
func (it *Iter) Last() bool {
	if it.upper != nil {
		return it.SeekLT(it.upper)
	}
	if !it.usable() {
		return false
	}
	it.forward = false
	it.merged.Last()
	return it.findPrev()
}

// SeekGE moves to the first key >= key.
func (it *Iter) SeekGE(key []byte) bool {
	if !it.usable() {
		return false
	}
	if it.lower != nil && bytes.Compare(key, it.lower) < 0 {
		key = it.lower
	}
	it.forward = true
	it.merged.SeekGE(base.SeekKey(key, it.seq))
	return it.findNext(nil, false)
}

// SeekLT moves to the last key < key.
func (it *Iter) SeekLT(key []byte) bool {
	if !it.usable() {
		return false
	}
	if it.upper != nil && bytes.Compare(key, it.upper) > 0 {
		key = it.upper
	}
	it.forward = false
	// SeekKey(key, MaxSeqNum) is the smallest internal key of key.
	it.merged.SeekLT(base.SeekKey(key, base.MaxSeqNum))
	return it.findPrev()
}

// Next moves to the next key.
func (it *Iter) Next() bool {
	if !it.usable() || !it.valid {
		return false
	}
	if !it.forward {
		// The merged iterator sits before savedKey's versions: step onto
		// them, then past them.
		it.forward = true
		if !it.merged.Valid() {
			it.merged.First()
		} else {
			it.merged.Next()
		}
		return it.findNext(it.savedKey, true)
	}
	it.savedKey = append(it.savedKey[:0], it.merged.Key().UserKey...)
	it.merged.Next()
	return it.findNext(it.savedKey, true)
}

// Prev moves to the previous key.
func (it *Iter) Prev() bool {
	if !it.usable() || !it.valid {
		return false
	}
	if it.forward {
		// Step back past every version of the current key.
		it.savedKey = append(it.savedKey[:0], it.merged.Key().UserKey...)
		for {
			if !it.merged.Prev() {
				// No earlier key: the merged iterator is exhausted backward,
				// which findPrev reports.
				break
			}
			if bytes.Compare(it.merged.Key().UserKey, it.savedKey) < 0 {
				break
			}
		}
		it.forward = false
	}
	return it.findPrev()
}

// deletedBy returns the fragment and the seq of the visible range
// tombstone that deletes the version k, if one does: every version older
// than seq of every key of the fragment is deleted as well.
func (it *Iter) deletedBy(k base.InternalKey) (sp keyspan.Span, seq base.SeqNum, ok bool) {
	i := it.rangeDels.Seek(k.UserKey)
	if i == it.rangeDels.Len() {
		return keyspan.Span{}, 0, false
	}
	sp = it.rangeDels.At(i)
	if !sp.Contains(k.UserKey) {
		return keyspan.Span{}, 0, false
	}
	if t, vis := sp.Visible(it.seq); vis && k.Seq() < t {
		return sp, t, true
	}
	return keyspan.Span{}, 0, false
}

// deletedStretch is the merged iterator's Skipper past a range
// tombstone's fragment: a level holding nothing as new as the tombstone
// between its position and the fragment's end (forward) or start
// (backward) is sought there in one seek, where stepping would visit every
// deleted entry (contrib/raft saw 0.7 s to find the first entry of a log
// truncated by 10^6). Memtables, whose entries may be of any age, are
// stepped.
type deletedStretch struct {
	sources []base.InternalIterator
	span    keyspan.Span
	seq     base.SeqNum // the tombstone's
	readSeq base.SeqNum // the iterator's
	forward bool
}

func (d *deletedStretch) SkipTo(i int) (base.InternalKey, bool) {
	l, ok := d.sources[i].(*levelIter)
	if !ok {
		return base.InternalKey{}, false
	}
	if !d.forward {
		if !l.olderFrom(d.seq, d.span.Start) {
			return base.InternalKey{}, false
		}
		// Every version of Start and after: the first internal key of Start.
		return base.SeekKey(d.span.Start, base.MaxSeqNum), true
	}
	to := l.olderUntil(d.seq, d.span.End)
	if to == nil {
		return base.InternalKey{}, false
	}
	return base.SeekKey(to, d.readSeq), true
}

// skipDeleted seeks past a deleted stretch, in the iterator's direction,
// the sources that can be (deletedStretch), and reports whether any moved.
func (it *Iter) skipDeleted(sp keyspan.Span, seq base.SeqNum) bool {
	p := it.parts
	p.stretch = deletedStretch{sources: p.sources, span: sp, seq: seq, readSeq: it.seq, forward: it.forward}
	moved := it.merged.Skip(&p.stretch)
	p.stretch = deletedStretch{}
	return moved
}

// step moves the merged iterator on for findNext and findPrev, in the
// iterator's direction: to the next entry, or nowhere if a skip
// (skipDeleted) left it on the next entry to look at.
func (it *Iter) step(skipped *bool) bool {
	switch {
	case *skipped:
		*skipped = false
		return it.merged.Valid()
	case it.forward:
		return it.merged.Next()
	default:
		return it.merged.Prev()
	}
}

// findNext moves forward from the merged iterator's position to the first
// visible, live entry: versions newer than the iterator's sequence number
// are invisible, a tombstone hides the older versions of its key, and with
// skipping every key <= skip has been seen already.
func (it *Iter) findNext(skip []byte, skipping bool) bool {
	skipped := false
	for ok := it.merged.Valid(); ok; ok = it.step(&skipped) {
		k := it.merged.Key()
		if k.Seq() > it.seq {
			continue
		}
		if it.upper != nil && bytes.Compare(k.UserKey, it.upper) >= 0 {
			break
		}
		if skipping && bytes.Compare(k.UserKey, skip) <= 0 {
			continue
		}
		if c := it.prefixOrder(k.UserKey); c > 0 {
			break // Split is monotone: every key on has a greater prefix
		} else if c < 0 {
			continue
		}
		if k.Kind() == base.KindDelete {
			it.savedKey = append(it.savedKey[:0], k.UserKey...)
			skip, skipping = it.savedKey, true
			continue
		}
		if sp, seq, deleted := it.deletedBy(k); deleted {
			it.savedKey = append(it.savedKey[:0], k.UserKey...)
			skip, skipping = it.savedKey, true
			skipped = it.skipDeleted(sp, seq)
			continue
		}
		it.valid = true
		return true
	}
	it.setErr(it.merged.Error())
	it.valid = false
	return false
}

// findPrev moves backward to the previous visible, live key. The merged
// iterator ends before all versions of the key found, which are copied to
// savedKey and savedValue.
func (it *Iter) findPrev() bool {
	live, skipped := false, false
	for ok := it.merged.Valid(); ok; ok = it.step(&skipped) {
		k := it.merged.Key()
		if k.Seq() > it.seq {
			continue
		}
		if live && bytes.Compare(k.UserKey, it.savedKey) < 0 {
			break // every version of savedKey has been seen; the newest visible one won
		}
		if it.lower != nil && bytes.Compare(k.UserKey, it.lower) < 0 {
			break
		}
		// Not live here, or k would be savedKey, whose prefix is Prefix.
		if c := it.prefixOrder(k.UserKey); c < 0 {
			break // Split is monotone: every key before has a smaller prefix
		} else if c > 0 {
			continue
		}
		if k.Kind() == base.KindDelete {
			live = false
			continue
		}
		if sp, seq, deleted := it.deletedBy(k); deleted {
			live = false
			skipped = it.skipDeleted(sp, seq)
			continue
		}
		live = true
		it.savedKey = append(it.savedKey[:0], k.UserKey...)
		it.savedValue = append(it.savedValue[:0], it.merged.Value()...)
	}
	// An error ends the scan even with a version found: the entries it
	// kept from view, before the found one, may hold a newer version.
	if err := it.merged.Error(); err != nil || !live {
		it.setErr(err)
		live = false
	}
	it.valid = live
	if it.upper != nil && live && bytes.Compare(it.savedKey, it.upper) >= 0 {
		it.valid = false
	}
	return it.valid
}

// setErr records what stopped the iterator. Once the DB is closed, its
// tables are closed under the iterator: whatever error that gives, the
// cause the caller can act on is ErrClosed.
func (it *Iter) setErr(err error) {
	if err != nil && it.rs.db.closed.Load() {
		err = ErrClosed
	}
	it.err = err
}

func (it *Iter) usable() bool {
	if it.err == nil && it.rs != nil && it.rs.db.closed.Load() {
		it.err = ErrClosed
	}
	if it.closed || it.err != nil {
		it.valid = false
		return false
	}
	return true
}

// Valid reports whether the iterator is on a key: never once the DB has
// closed.
func (it *Iter) Valid() bool { return it.usable() && it.valid }

// Key returns the current key. REQUIRES: Valid().
func (it *Iter) Key() []byte {
	if it.forward {
		return it.merged.Key().UserKey
	}
	return it.savedKey
}

// Value returns the current value. REQUIRES: Valid().
func (it *Iter) Value() []byte {
	if it.forward {
		return it.merged.Value()
	}
	return it.savedValue
}

// Err returns the error that stopped the iterator, if any: ErrClosed
// once the DB has closed, though the iterator has not moved since.
func (it *Iter) Err() error {
	it.usable()
	return it.err
}

// Close releases the iterator's view. It returns the iterator's error;
// from then on the iterator is on no key, and Err and a second Close
// return ErrClosed.
func (it *Iter) Close() error {
	if it.closed {
		return ErrClosed
	}
	it.closed = true
	it.valid = false
	if it.merged != nil {
		if err := it.merged.Close(); err != nil && it.err == nil {
			it.setErr(err)
		}
		if it.err == nil && it.rs.db.closed.Load() {
			it.err = ErrClosed
		}
		it.rs.unref()
		it.parts.release(it)
		it.parts, it.merged, it.savedKey, it.savedValue = nil, nil, nil, nil
	}
	err := it.err
	it.err = ErrClosed
	return err
}

// All returns the iterator's keys and values in order, from the first key
// (within the bounds) on, as a Go sequence. The slices are valid only
// during the yield call. Check Err after the loop.
func (it *Iter) All() iter.Seq2[[]byte, []byte] {
	return func(yield func([]byte, []byte) bool) {
		for ok := it.First(); ok; ok = it.Next() {
			if !yield(it.Key(), it.Value()) {
				return
			}
		}
	}
}
