package sstable

import (
	"bytes"
	"math"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/cache"
)

// tableMeta is what Open reads and verifies of a table besides its data
// blocks: the properties, the index and the filter. A Reader that the table cache closes to make room leaves a
// copy in the block cache (stashMeta), charged to the cache's budget, and
// a later Open of the same table that finds it there reads only the
// table's tail (its properties block, which holds the table id, and the
// footer: one read, the two are adjacent) to recognise the file by its
// bytes, and decodes and verifies nothing again:
// at 1,500 tables and a table cache of 1,000, reopening re-read and
// re-verified the whole index and filter on nearly every Get (issue 30).
//
// A tableMeta holds a reference of its own on the index and filter
// memory (internal/offheap, invariant 1), dropped when the cache lets go
// of it; a Reader made from it takes references of its own.
//
// A paged Reader (MetaBudget) leaves what it keeps: the top-level index
// and the filter's shape and page checksums. A pinned one's stays pinned
// when adopted: its memory counts in the budget while it lives, in the
// cache or not; so does the index of one that pinned its index alone.
type tableMeta struct {
	tail      []byte // Reader.tail: the properties block and the footer
	props     Properties
	ix        tableIndex
	dataEnd   uint64
	filter    filter.CacheLine
	hasFilter bool
	// indexPaged and filterPaged are the Reader's (reader.go).
	indexPaged, filterPaged bool
	pf                      pagedFilter
}

// metaOffset is the cache key offset of a table's tableMeta: no data
// block starts there, since a table is far smaller than 2^64 bytes.
const metaOffset = math.MaxUint64

// metaCharge is what a tableMeta costs on top of its index and filter:
// the struct and the properties' strings, generously.
const metaCharge = 1 << 10

// stashMeta leaves a copy of r's meta in its block cache for the next
// Open of the table; a table whose tail is not recorded (Reader.tail)
// leaves none. REQUIRES: r is open.
func (r *Reader) stashMeta() {
	if r.cache.Capacity() == 0 || r.tail == nil {
		return
	}
	m := &tableMeta{tail: r.tail, props: r.props, ix: r.ix, dataEnd: r.dataEnd, filter: r.filter.Ref(), hasFilter: r.hasFilter,
		indexPaged: r.indexPaged, filterPaged: r.filterPaged, pf: r.pf}
	m.ix.ref()
	charge := len(m.ix.top.data) + len(m.pf.crcs) + len(m.tail) + metaCharge
	if !m.indexPaged {
		charge += int(m.props.IndexBytes)
	}
	if !m.filterPaged {
		charge += int(m.props.FilterBytes)
	}
	h := cache.NewValue(m, charge, m.release)
	r.cache.Set(r.fileNum, metaOffset, &h, cache.High)
	h.Release()
}

func (m *tableMeta) release() {
	m.ix.release()
	m.filter.Release()
}

// adoptMeta makes r a reader of its table of size bytes from a tableMeta
// in the block cache, if one is there and the file's tail is the one the
// meta was read with, byte for byte. It reports whether it did; an error
// is a failed read.
func (r *Reader) adoptMeta(size uint64) (bool, error) {
	h, ok := r.cache.Get(r.fileNum, metaOffset)
	if !ok {
		return false, nil
	}
	defer h.Release()
	m, ok := h.Value().(*tableMeta)
	if !ok || m.props.FileSize != size || uint64(len(m.tail)) > size {
		return false, nil
	}
	tail := cache.Alloc(len(m.tail))
	defer tail.Release()
	if err := r.readAt(tail.Block(), size-uint64(len(m.tail))); err != nil {
		return false, err
	}
	r.stats.openBlocksRead.Add(1)
	r.stats.openBytesRead.Add(uint64(len(m.tail)))
	if !bytes.Equal(tail.Block(), m.tail) {
		return false, nil // another file: open it afresh, and let the checks refuse it
	}
	if m.filterPaged && r.cache.Capacity() == 0 {
		return false, nil // a paged reader needs the cache: open afresh, pinned
	}
	// A pinned meta's Buffers hold their bytes of the budget already, for
	// as long as the memory lives (metaClaim): adopting them costs none.
	mode := pinClaimed
	switch {
	case m.indexPaged:
		mode = pinNever
	case m.filterPaged:
		mode = pinClaimedIndex
	}
	claim := r.budget.admit(r.fileNum, int64(m.props.IndexBytes), int64(m.props.FilterBytes), mode)
	r.tail, r.props, r.ix, r.dataEnd, r.hasFilter = m.tail, m.props, m.ix, m.dataEnd, m.hasFilter
	r.indexPaged, r.filterPaged, r.pf, r.claim = m.indexPaged, m.filterPaged, m.pf, claim
	r.ix.ref()
	r.filter = m.filter.Ref()
	return true, nil
}
