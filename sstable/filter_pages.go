package sstable

import (
	"encoding/binary"
	"fmt"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
)

// filterPageSize is the unit in which a paged table reads its filter: a
// probe tests one 64-byte line, so it needs only the page holding it, and
// the properties block keeps a CRC-32C of every page (filter.page_crcs),
// so that no byte of a page is trusted before its own checksum matches
// (invariant 2) without reading the whole filter block.
const filterPageSize = 4096

// pagedFilter is what a paged table keeps of its filter: where its block
// lies, its shape, and the pages' checksums.
type pagedFilter struct {
	block handle
	shape filter.CacheLineShape
	crcs  []byte // 4 bytes per page, little-endian
}

// appendPageCRCs appends the checksum of every filterPageSize bytes of
// enc, the last page possibly shorter.
func appendPageCRCs(dst, enc []byte) []byte {
	for off := 0; off < len(enc); off += filterPageSize {
		dst = binary.LittleEndian.AppendUint32(dst, checksum(enc[off:min(off+filterPageSize, len(enc))], compressionNone))
	}
	return dst
}

// newPagedFilter checks what the properties say of the filter block at h.
func newPagedFilter(h handle, p *Properties) (pagedFilter, error) {
	shape, err := filter.ShapeFor(p.FilterLines, p.FilterProbes, h.length)
	if err != nil {
		return pagedFilter{}, fmt.Errorf("filter properties: %w: %w", base.ErrCorruption, err)
	}
	if pages := (h.length + filterPageSize - 1) / filterPageSize; uint64(len(p.FilterPageCRCs)) != 4*pages {
		return pagedFilter{}, fmt.Errorf("filter of %d pages with %d bytes of page checksums: %w", pages, len(p.FilterPageCRCs), base.ErrCorruption)
	}
	return pagedFilter{block: h, shape: shape, crcs: p.FilterPageCRCs}, nil
}

// filterPage returns a handle on filter page i, from the block cache or the
// file; with cachedOnly, it reads nothing and reports false on a miss.
func (r *Reader) filterPage(i int, cachedOnly bool) (cache.Handle, bool, error) {
	f := &r.pf
	off := f.block.offset + uint64(i)*filterPageSize
	if b, ok := r.cache.Get(r.fileNum, off); ok {
		r.countMetaHit()
		return b, true, nil
	}
	if cachedOnly {
		return cache.Handle{}, false, nil
	}
	n := min(filterPageSize, f.block.length-uint64(i)*filterPageSize)
	b := cache.Alloc(int(n))
	err := r.readAt(b.Block(), off)
	if err == nil && checksum(b.Block(), compressionNone) != binary.LittleEndian.Uint32(f.crcs[4*i:]) {
		err = fmt.Errorf("checksum mismatch: %w", base.ErrCorruption)
	}
	if err != nil {
		b.Release()
		return cache.Handle{}, false, fmt.Errorf("sstable %s: filter page %d at %d: %w", r.name, i, off, err)
	}
	r.countMetaRead(n)
	r.cache.Set(r.fileNum, off, &b, cache.High)
	return b, true, nil
}

// pagedMayContain probes a paged table's filter for hash h, reading the
// page of its line if it must (and, cachedOnly, answering "maybe" rather
// than read).
func (r *Reader) pagedMayContain(h uint64, cachedOnly bool) (bool, error) {
	f := &r.pf
	if f.shape.Lines == 0 {
		return false, nil // built from no keys
	}
	off := f.shape.LineOffset(h)
	b, ok, err := r.filterPage(off/filterPageSize, cachedOnly)
	if !ok {
		return true, err
	}
	defer b.Release()
	return f.shape.LineMayContain(b.Block()[off%filterPageSize:], h), nil
}
