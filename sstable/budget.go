package sstable

import "sync/atomic"

// MetaBudget caps the bytes of index and filter blocks that Readers pin:
// a Reader whose table's index and filter fit in what is left pins them
// for its life (today's fastest path: no lookup touches the block cache
// for them); one that does not reads them paged, a 4 KiB partition or
// filter page at a time through the block cache, where they compete with
// data blocks and may be evicted. A table of format version 1, or a
// Reader without a block cache, always pins. A nil *MetaBudget pins
// everything. Safe for concurrent use.
type MetaBudget struct {
	limit  int64
	pinned atomic.Int64
	paged  atomic.Int64
	// What paged Readers fetched: as ReadStats' Meta counters, summed
	// over every Reader of the budget.
	hits, reads, readBytes atomic.Uint64
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

// NewMetaBudget returns a budget of limit bytes; limit <= 0 pins nothing.
func NewMetaBudget(limit int64) *MetaBudget { return &MetaBudget{limit: limit} }

// Pinned is the bytes pinned now by open Readers; PagedTables the number
// of open Readers reading paged.
func (b *MetaBudget) Pinned() int64 {
	if b == nil {
		return 0
	}
	return b.pinned.Load()
}

// PagedTables is the number of open Readers that read their index and
// filter through the block cache.
func (b *MetaBudget) PagedTables() int64 {
	if b == nil {
		return 0
	}
	return b.paged.Load()
}

// reserve takes n bytes if they fit.
func (b *MetaBudget) reserve(n int64) bool {
	if b == nil {
		return true
	}
	for {
		used := b.pinned.Load()
		if used+n > b.limit {
			return false
		}
		if b.pinned.CompareAndSwap(used, used+n) {
			return true
		}
	}
}

// reserveAll takes n bytes whether or not they fit: for a table that can
// only be pinned (format version 1).
func (b *MetaBudget) reserveAll(n int64) {
	if b != nil {
		b.pinned.Add(n)
	}
}

// countHit and countRead add to a Reader's counters and its budget's.
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

// addPaged counts n more (or, negative, fewer) paged Readers.
func (b *MetaBudget) addPaged(n int64) {
	if b != nil {
		b.paged.Add(n)
	}
}

func (b *MetaBudget) release(n int64) {
	if b != nil {
		b.pinned.Add(-n)
	}
}
