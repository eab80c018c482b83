package sstable

import (
	"sync"
	"sync/atomic"

	"github.com/monbandb/monban/internal/offheap"
)

// MetaBudget caps the bytes of index and filter blocks that Readers pin:
// a Reader whose table's index and filter fit in what is left pins them
// for its life (the fastest path: no lookup touches the block cache for
// them); one that does not reads them paged, a 4 KiB partition or filter
// page at a time through the block cache, where they compete with data
// blocks and may be evicted, or, for a Reader without a block cache, are
// read from the file at every use. A table of format version 1 always
// pins. A nil *MetaBudget pins everything.
// Safe for concurrent use.
//
// Tables the budget's low func names (lsm: those of the last level) pin
// only within what the others leave: the bytes of every other table open,
// pinned or not, are kept free for them. A last-level table's filter is
// probed by a share of the lookups that reach its level, an upper one's by
// a far larger share per byte (a level's lookups over a tenth of the
// tables, or fewer), so it is the upper levels' that pinning serves best.
//
// Low tables pin every index before any filter: a low table pins its
// filter only if, beside its index, room remains for the indexes of the
// low tables whose index is not pinned yet (their number from low, each
// the size of the largest low index seen), and otherwise pins its index
// alone if that fits. Most lookups that reach the last level find their
// key there, so its filter rarely says no, while every such hit searches
// the index: per byte the index saves far more reads (a version 3 index
// is about 0.25 bytes per key, the filter 1.25 at 10 bits per key). Were
// the low tables admitted first come, first served, those opened first
// would pin both and the rest neither. An upper table is not split: most
// lookups that reach it are of keys that live deeper, which its filter
// turns away without touching the index, so its index alone would save
// little.
type MetaBudget struct {
	limit int64
	// low is the owner's, and refers back to it; Close drops it, since
	// the Buffers whose bytes the budget counts keep the budget for as
	// long as they live.
	low atomic.Pointer[LowTables]

	mu sync.Mutex
	// pinned and lowPinned are the bytes pinned, by all Readers and by
	// low ones; highOpen is the meta of the open Readers that are not low,
	// pinned or paged; paged counts the Readers that page both their index
	// and filter, filterPaged those that pin their index and page their
	// filter.
	pinned, lowPinned, highOpen, paged, filterPaged int64
	// lowIndexed counts the open low Readers that pin their index;
	// lowIndexMax is the largest index of a low Reader ever admitted,
	// which sizes the indexes still to come: over the average, so that
	// tables of uneven sizes still find room.
	lowIndexed, lowIndexMax int64

	// What paged Readers fetched: as ReadStats' Meta counters, summed
	// over every Reader of the budget.
	hits, reads, readBytes atomic.Uint64
}

// LowTables reports whether table fileNum is of low priority, and how
// many low tables there are (lsm: the last level's).
type LowTables func(fileNum uint64) (low bool, tables int)

// NewMetaBudget returns a budget of limit bytes (limit <= 0 pins nothing);
// low, if not nil, names the tables of low priority.
func NewMetaBudget(limit int64, low LowTables) *MetaBudget {
	b := &MetaBudget{limit: limit}
	if low != nil {
		b.low.Store(&low)
	}
	return b
}

// Close drops the low func; tables admitted afterwards are all of one
// priority. A pinned Buffer's OnFree holds the budget, and so whatever
// low refers to (lsm: the DB), until the Buffer is freed, and the
// metadata keeping a table's filter is freed only once it is collected:
// with low held, a closed DB stayed reachable from its own filters'
// cleanups, and they never ran.
func (b *MetaBudget) Close() {
	if b != nil {
		b.low.Store(nil)
	}
}

// Pinned is the bytes pinned now by open Readers.
func (b *MetaBudget) Pinned() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.pinned
}

// PagedTables is the number of open Readers that read their index and
// filter through the block cache.
func (b *MetaBudget) PagedTables() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.paged
}

// PagedFilterTables is the number of open Readers that pin their index
// but read their filter through the block cache (low tables, above);
// they are not among PagedTables.
func (b *MetaBudget) PagedFilterTables() int64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.filterPaged
}

// MetaReads are the index partitions and filter pages the budget's paged
// Readers found in the block cache (hits) and read from their files
// (reads, bytes).
func (b *MetaBudget) MetaReads() (hits, reads, bytes uint64) {
	if b == nil {
		return 0, 0, 0
	}
	return b.hits.Load(), b.reads.Load(), b.readBytes.Load()
}

// metaClaim is what a Reader holds of its budget. The bytes a pinned
// Reader reserves are handed to the Buffers its index and filter lie in
// (Reader.hookClaim), and return to the budget when that memory is freed,
// whoever held it last: a filter kept past the Reader's Close (lsm keeps
// one per live table for the absent-key proofs), meta stashed in the block
// cache, a compaction's reader. Only what no Buffer took returns at Close.
type metaClaim struct {
	open     int64 // the meta counted in highOpen while the Reader is open (0 for a low one)
	unhooked int64 // reserved bytes no Buffer has taken yet
	// pinIndex and pinFilter: what the Reader pins. Both, neither, or
	// (a low table) the index alone.
	pinIndex, pinFilter bool
	low                 bool
	held                bool // counted in a budget
}

// pinMode is what a Reader may do with its meta.
type pinMode uint8

const (
	pinIfRoom       pinMode = iota
	pinAlways               // a version 1 table, which cannot be paged
	pinNever                // adopting a paged Reader's meta (meta.go)
	pinClaimed              // adopting a pinned Reader's meta, whose Buffers hold their bytes already
	pinClaimedIndex         // adopting the meta of a Reader that pinned its index alone
)

// admit decides what a Reader of table fileNum, whose index and filter
// take index and filter bytes, pins, and reserves the bytes.
func (b *MetaBudget) admit(fileNum uint64, index, filter int64, mode pinMode) metaClaim {
	if b == nil {
		return metaClaim{pinIndex: mode != pinNever, pinFilter: mode != pinNever && mode != pinClaimedIndex}
	}
	n := index + filter
	c := metaClaim{held: true}
	lowTables := 0
	if low := b.low.Load(); low != nil {
		c.low, lowTables = (*low)(fileNum)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if !c.low {
		c.open = n
		b.highOpen += n
	}
	room := b.limit - b.pinned
	if c.low {
		room = min(room, b.limit-b.highOpen-b.lowPinned)
		b.lowIndexMax = max(b.lowIndexMax, index)
	}
	switch mode {
	case pinIfRoom:
		c.pinIndex, c.pinFilter = n <= room, n <= room
		if c.low && filter > 0 && index <= room {
			others := max(0, int64(lowTables)-b.lowIndexed-1) * b.lowIndexMax
			c.pinIndex, c.pinFilter = true, n+others <= room
			if !c.pinFilter {
				n = index
			}
		}
	case pinAlways, pinClaimed:
		c.pinIndex, c.pinFilter = true, true
	case pinClaimedIndex:
		c.pinIndex = true
	}
	if c.low && c.pinIndex {
		b.lowIndexed++
	}
	switch {
	case !c.pinIndex:
		b.paged++
	case !c.pinFilter:
		b.filterPaged++
	}
	if c.pinIndex && mode == pinIfRoom || mode == pinAlways {
		c.unhooked = n
		b.addPinned(n, c.low)
	}
	return c
}

// addPinned adds n (or, negative, takes it away) to the pinned bytes.
// b.mu is held.
func (b *MetaBudget) addPinned(n int64, low bool) {
	b.pinned += n
	if low {
		b.lowPinned += n
	}
}

func (b *MetaBudget) unpin(n int64, low bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.addPinned(-n, low)
}

// leave gives back what the Reader still holds at Close: its place among
// the open Readers, and any reserved bytes no Buffer took.
func (b *MetaBudget) leave(c metaClaim) {
	if !c.held {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.highOpen -= c.open
	b.addPinned(-c.unhooked, c.low)
	if c.low && c.pinIndex {
		b.lowIndexed--
	}
	switch {
	case !c.pinIndex:
		b.paged--
	case !c.pinFilter:
		b.filterPaged--
	}
}

// hookClaim hands up to n of the Reader's reserved bytes to buf, which
// gives them back to the budget when its memory is freed. REQUIRES: the
// Reader holds buf's only reference.
func (r *Reader) hookClaim(buf *offheap.Buffer, n int64) {
	c := &r.claim
	if !c.held || c.unhooked == 0 || buf == nil {
		return
	}
	n = min(n, c.unhooked)
	c.unhooked -= n
	b, low := r.budget, c.low
	buf.OnFree(func() { b.unpin(n, low) })
}

// countMetaHit and countMetaRead add to a Reader's counters and its
// budget's.
func (r *Reader) countMetaHit() {
	r.stats.metaCacheHits.Add(1)
	if r.budget != nil {
		r.budget.hits.Add(1)
	}
}

func (r *Reader) countMetaRead(n uint64) {
	r.stats.metaBlocksRead.Add(1)
	r.stats.metaBytesRead.Add(n)
	if r.budget != nil {
		r.budget.reads.Add(1)
		r.budget.readBytes.Add(n)
	}
}
