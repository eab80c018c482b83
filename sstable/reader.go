package sstable

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/golang/snappy"
	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
	"github.com/monbandb/monban/internal/offheap"
	"github.com/monbandb/monban/vfs"
)

// ReaderOptions configure a Reader.
type ReaderOptions struct {
	// Cache is the block cache for data blocks; nil reads every block from
	// the file (into pooled buffers all the same, see invariant 6).
	Cache *Cache
	// FileNum keys this table's blocks in Cache; it must be unique among
	// the tables sharing Cache.
	FileNum uint64
	// Name appears in errors and traces; default TableFileName(FileNum).
	Name string
	// IgnoreFilter makes Get behave as if the table had no filter block
	// (the filter is still loaded and MayContainHash still answers). It
	// exists to measure, on the same table, what the filter saves.
	IgnoreFilter bool
	// SkipFilters makes Open read neither the filter nor the range-filter
	// block, so damage confined to them goes unseen and the Reader answers
	// every filter question "maybe". It is for a reader that only iterates
	// and rebuilds what the filters hold from the data (Repair, which has
	// no Cache or MetaBudget), so that a damaged filter does not keep
	// sound data from being read.
	SkipFilters bool
	// ExpectSize and ExpectTableID are what the manifest records of the
	// table: its file size and Properties.TableID. Open fails with
	// corruption when the file disagrees (another table's file, or a
	// truncated one); a table without an id fails an ExpectTableID check.
	// 0 checks nothing. TableCache sets both per table from its TableRef.
	ExpectSize, ExpectTableID uint64
	// MetaBudget, if not nil, decides whether the Reader pins its index
	// and filter or reads them paged through Cache (budget.go); nil pins.
	MetaBudget *MetaBudget
}

// Reader reads one table. Open loads footer, index, filter and properties
// and keeps them in memory (pinned with the table, not in the block cache,
// which holds them only once the table cache has closed the table:
// meta.go).
// A Reader is safe for concurrent use; Close must not race with other calls
// (TableCache's reference counts guarantee that).
type Reader struct {
	f       vfs.File
	cache   *Cache
	fileNum uint64
	name    string

	// tail is the properties block and the footer as read, what a reopen
	// compares (meta.go); nil if anything lies between them.
	tail      []byte
	props     Properties
	ix        tableIndex
	dataEnd   uint64 // where the data blocks end
	filter    filter.CacheLine
	hasFilter bool
	rangeDels Spans // rangedel.go; decoded at Open, pinned or paged
	// ranges is the range filter (rangefilter.go), asked when useRanges:
	// the table has one and ReaderOptions.IgnoreFilter is not set.
	ranges    filter.Grafite
	useRanges bool
	// useFilter is hasFilter unless ReaderOptions.IgnoreFilter.
	useFilter bool
	// skipFilters: ReaderOptions.SkipFilters; hasFilter is then false and
	// ranges empty, whatever the table holds.
	skipFilters bool
	// indexPaged: the index partitions are read through the block cache,
	// one at a time; otherwise ix.parts holds them, pinned. filterPaged:
	// the same for the filter (pf), a page at a time, else filter holds
	// it. Both are paged, or neither, or (a low table, budget.go) only the
	// filter. claim is what the Reader holds of budget.
	indexPaged  bool
	filterPaged bool
	pf          pagedFilter
	budget      *MetaBudget
	claim       metaClaim

	stats   readCounters
	closed  atomic.Bool
	scratch sync.Pool // *blockIter, so concurrent Gets allocate nothing
}

// Open reads and verifies the table in f, which the Reader owns from now
// on (Close closes it, and so does a failed Open). Errors about the bytes,
// and a file that is not the table opts expects, wrap base.ErrCorruption
// and name the file.
func Open(f vfs.File, opts ReaderOptions) (*Reader, error) {
	r := &Reader{f: f, cache: opts.Cache, fileNum: opts.FileNum, name: opts.Name, budget: opts.MetaBudget, skipFilters: opts.SkipFilters}
	if r.name == "" {
		r.name = TableFileName(opts.FileNum)
	}
	fail := func(err error) (*Reader, error) {
		r.releaseMeta()
		return nil, errors.Join(err, f.Close())
	}
	size, err := f.Size()
	if err != nil {
		return fail(fmt.Errorf("sstable %s: %w", r.name, err))
	}
	if err := checkSize(r.name, uint64(size), opts.ExpectSize); err != nil {
		return fail(err)
	}
	if err := r.open(uint64(size)); err != nil {
		return fail(fmt.Errorf("sstable %s: %w", r.name, err))
	}
	if err := checkTableID(r.name, r.props.TableID, opts.ExpectTableID); err != nil {
		return fail(err)
	}
	if err := r.readRangeDels(); err != nil {
		return fail(fmt.Errorf("sstable %s: %w", r.name, err))
	}
	if err := r.readRangeFilter(); err != nil {
		return fail(fmt.Errorf("sstable %s: %w", r.name, err))
	}
	if err := r.checkKeyHashes(); err != nil {
		return fail(fmt.Errorf("sstable %s: %w", r.name, err))
	}
	r.useRanges = r.props.rangeFilterBlock != (handle{}) && !opts.IgnoreFilter && !opts.SkipFilters
	r.useFilter = r.hasFilter && !opts.IgnoreFilter
	return r, nil
}

func (r *Reader) open(size uint64) error {
	if err := checkFooterFits(size); err != nil {
		return err
	}
	if adopted, err := r.adoptMeta(size); adopted || err != nil {
		return err
	}
	fb := make([]byte, footerLen)
	if err := r.readAt(fb, size-footerLen); err != nil {
		return err
	}
	r.stats.openBlocksRead.Add(1)
	r.stats.openBytesRead.Add(footerLen)
	ft, err := decodeFooter(fb, size-footerLen)
	if err != nil {
		return err
	}
	// Data blocks end where the first meta block starts.
	r.dataEnd = ft.index.offset
	if ft.filter.length > 0 {
		r.dataEnd = min(r.dataEnd, ft.filter.offset)
	}
	if err := r.readProps(ft, fb, size); err != nil {
		return err
	}
	r.hasFilter = ft.filter.length > 0 && !r.skipFilters
	if err := checkFilterLayout(ft, &r.props); err != nil {
		return err
	}
	ix, fl := int64(r.props.IndexBytes), int64(r.props.FilterBytes)
	if ft.version == formatVersionOneIndex {
		r.claim = r.budget.admit(r.fileNum, ix, fl, pinAlways)
		return r.openOneIndex(ft)
	}
	if err := r.openTopIndex(ft); err != nil {
		return err
	}
	r.claim = r.budget.admit(r.fileNum, ix, fl, pinIfRoom)
	r.indexPaged, r.filterPaged = !r.claim.pinIndex, !r.claim.pinFilter
	if r.claim.pinIndex {
		if err := r.pinIndex(); err != nil {
			return err
		}
	}
	if r.claim.pinFilter {
		return r.pinFilter(ft)
	}
	if r.hasFilter {
		if r.pf, err = newPagedFilter(ft.filter, &r.props); err != nil {
			return err
		}
	}
	return nil
}

// openOneIndex reads a version 1 table's index: one block, pinned.
func (r *Reader) openOneIndex(ft footer) error {
	block, buf, err := r.readMeta(ft.index, "index")
	if err != nil {
		return err
	}
	x, err := newIndex(block, false, dataHandles(r.dataEnd))
	if err != nil {
		buf.Release()
		return fmt.Errorf("index block at %d: %w", ft.index.offset, err)
	}
	r.ix = oneIndex(x, buf)
	r.hookClaim(buf, int64(r.props.IndexBytes))
	if err := r.checkBlockCount(); err != nil {
		return err
	}
	return r.pinFilter(ft)
}

// openTopIndex reads a version 2 or 3 table's top-level index block, which
// stays in memory whether the table is pinned or paged.
func (r *Reader) openTopIndex(ft footer) error {
	block, buf, err := r.readMeta(ft.index, "index")
	if err != nil {
		return err
	}
	r.ix.keep = []*offheap.Buffer{buf}
	lo := uint64(0) // without a filter, after the data blocks, which end where the first partition starts
	if ft.filter.length > 0 {
		lo = ft.filter.end()
	}
	if r.ix.top, r.ix.starts, err = newTopIndex(block, ft.version >= formatVersionSeparators, lo, ft.index.offset, int(min(r.props.NumDataBlocks, maxBlockLen))); err != nil {
		return fmt.Errorf("index block at %d: %w", ft.index.offset, err)
	}
	if r.ix.numParts() > 0 {
		r.dataEnd = min(r.dataEnd, r.ix.partHandle(0).offset)
	}
	return r.checkBlockCount()
}

func (r *Reader) checkBlockCount() error {
	if n := r.ix.numBlocks(); uint64(n) != r.props.NumDataBlocks || (n == 0) != (r.props.NumEntries == 0) {
		return fmt.Errorf("index has %d blocks, properties say %d blocks of %d entries: %w",
			n, r.props.NumDataBlocks, r.props.NumEntries, base.ErrCorruption)
	}
	return nil
}

// pinIndex reads a version 2 or 3 table's index partitions, in one read
// of the span they fill, and keeps them for the Reader's life.
func (r *Reader) pinIndex() error {
	if np := r.ix.numParts(); np > 0 {
		first, last := r.ix.partHandle(0), r.ix.partHandle(np-1)
		span := offheap.New(int(last.end() - first.offset))
		r.ix.keep = append(r.ix.keep, span)
		r.hookClaim(span, int64(r.props.IndexBytes))
		if err := r.readAt(span.Bytes(), first.offset); err != nil {
			return fmt.Errorf("index partitions at %d: %w", first.offset, err)
		}
		r.stats.openBlocksRead.Add(1)
		r.stats.openBytesRead.Add(uint64(len(span.Bytes())))
		r.ix.parts = make([]index, np)
		for p := range np {
			h := r.ix.partHandle(p)
			block, typ, err := verifyBlock(span.Bytes()[h.offset-first.offset:], h, r.props.seal(h.offset))
			if err == nil && typ != compressionNone {
				err = fmt.Errorf("compressed: %w", base.ErrCorruption)
			}
			if err == nil {
				r.ix.parts[p], err = r.checkPartition(p, block)
			}
			if err != nil {
				return fmt.Errorf("index partition %d at %d: %w", p, h.offset, err)
			}
		}
	}
	return nil
}

// pinFilter reads and keeps the filter block, if the table has one.
func (r *Reader) pinFilter(ft footer) error {
	if !r.hasFilter {
		return nil
	}
	fblock, fbuf, err := r.readMeta(ft.filter, "filter")
	if err != nil {
		return err
	}
	r.hookClaim(fbuf, int64(r.props.FilterBytes))
	if r.filter, err = filter.OpenCacheLineIn(fbuf, fblock); err != nil {
		fbuf.Release()
		return fmt.Errorf("filter block at %d: %w: %w", ft.filter.offset, base.ErrCorruption, err)
	}
	return nil
}

// readProps reads and decodes the properties block. When it lies just
// before the footer fb of a file of size bytes, as the writer puts it, it is read with the footer
// into the table's tail, which a reopen compares rather than decodes
// (meta.go).
func (r *Reader) readProps(ft footer, fb []byte, size uint64) error {
	tailLen := ft.props.length + blockTrailerLen
	if ft.props.offset+tailLen != size-footerLen {
		block, buf, err := r.readMeta(ft.props, "properties")
		if err != nil {
			return err
		}
		r.props, err = decodeProperties(block)
		buf.Release() // decodeProperties copies what it keeps
		if err != nil {
			return fmt.Errorf("properties block: %w", err)
		}
		r.props.FileSize, r.props.formatVersion = size, ft.version
		return nil
	}
	tail := make([]byte, tailLen, tailLen+footerLen)
	if err := r.readAt(tail, ft.props.offset); err != nil {
		return fmt.Errorf("properties block at %d: %w", ft.props.offset, err)
	}
	r.stats.openBlocksRead.Add(1)
	r.stats.openBytesRead.Add(tailLen)
	var err error
	if r.props, err = decodePropsBlock(tail, ft.props); err != nil {
		return err
	}
	r.props.FileSize, r.props.formatVersion = size, ft.version
	r.tail = append(tail, fb...)
	return nil
}

// readMeta reads a block at open time, counted apart from the read path,
// into memory pinned for the Reader's life: the index keys and the filter
// alias it. A block of offheap.MinSize or more lies outside the Go heap;
// either way the returned Buffer owns it, with one reference that passes
// to the caller: whatever keeps a slice of the block holds a reference
// (internal/offheap, invariant 1), and the last to let go frees it.
func (r *Reader) readMeta(h handle, what string) ([]byte, *offheap.Buffer, error) {
	var raw, dec *offheap.Buffer
	fail := func(err error) ([]byte, *offheap.Buffer, error) {
		raw.Release()
		dec.Release()
		return nil, nil, fmt.Errorf("%s block at %d: %w", what, h.offset, err)
	}
	raw = offheap.New(int(h.length) + blockTrailerLen)
	if err := r.readAt(raw.Bytes(), h.offset); err != nil {
		return fail(err)
	}
	r.stats.openBlocksRead.Add(1)
	r.stats.openBytesRead.Add(h.length + blockTrailerLen)
	stored, typ, err := verifyBlock(raw.Bytes(), h, r.props.seal(h.offset))
	if err != nil {
		return fail(err)
	}
	if typ == compressionNone {
		return stored, raw, nil
	}
	dlen, err := decodedLen(stored)
	if err != nil {
		return fail(err)
	}
	dec = offheap.New(dlen)
	if err := decompress(dec.Bytes(), stored); err != nil {
		return fail(err)
	}
	raw.Release()
	return dec.Bytes(), dec, nil
}

// WithFile returns a Reader of the same table that reads through f,
// another handle on r's file, with no block cache and counters of its own:
// what a compaction reads its inputs with, each block once and in order
// (its iterators read ahead, readahead.go), without evicting the blocks that
// reads are using. It shares r's index, filter and properties, with
// references of its own on their memory, so it reads no meta block and
// stays valid after r is closed, until its own Close. It owns f from now
// on, and closes it on failure: a file of another size is not r's table.
func (r *Reader) WithFile(f vfs.File) (*Reader, error) {
	size, err := f.Size()
	if err == nil && uint64(size) != r.props.FileSize {
		err = fmt.Errorf("%d bytes, the open table has %d: %w", size, r.props.FileSize, base.ErrCorruption)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("sstable %s: %w", r.name, err), f.Close())
	}
	v := &Reader{f: f, fileNum: r.fileNum, name: r.name, tail: r.tail, props: r.props, ix: r.ix, dataEnd: r.dataEnd,
		filter: r.filter.Ref(), hasFilter: r.hasFilter, useFilter: r.useFilter, indexPaged: r.indexPaged, filterPaged: r.filterPaged, pf: r.pf}
	v.rangeDels = r.rangeDels
	v.ranges, v.useRanges = r.ranges, r.useRanges
	v.ix.ref()
	return v, nil
}

// decodePropsBlock verifies and decodes the properties block at h, read
// with its trailer into b: the one block that is never sealed.
func decodePropsBlock(b []byte, h handle) (Properties, error) {
	block, typ, err := verifyBlock(b, h, 0)
	if err == nil && typ != compressionNone {
		var dlen int
		if dlen, err = decodedLen(block); err == nil {
			dec := make([]byte, dlen)
			err = decompress(dec, block)
			block = dec
		}
	}
	if err != nil {
		return Properties{}, fmt.Errorf("properties block at %d: %w", h.offset, err)
	}
	p, err := decodeProperties(block)
	if err != nil {
		return Properties{}, fmt.Errorf("properties block: %w", err)
	}
	return p, nil
}

// checkFilterLayout: the footer locates a filter block exactly when the
// properties describe one.
func checkFilterLayout(ft footer, p *Properties) error {
	if has := ft.filter.length > 0; has != (p.FilterLayout == FilterLayoutCacheLine) {
		return fmt.Errorf("filter block present=%t, layout %q: %w", has, p.FilterLayout, base.ErrCorruption)
	}
	return nil
}

func (r *Reader) readAt(b []byte, off uint64) error { return readFullAt(r.f, b, off) }

// readFullAt fills b from f at off; a short read is corruption (the file
// is shorter than its footer says).
func readFullAt(f vfs.File, b []byte, off uint64) error {
	n, err := f.ReadAt(b, int64(off))
	if n == len(b) {
		return nil // io.ReaderAt may report io.EOF along with a full read
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = fmt.Errorf("short read of %d bytes at %d: %w", len(b), off, base.ErrCorruption)
	}
	return err
}

// verifyBlock checks the checksum of the block at h read into b (its
// stored bytes, then the trailer), sealed with seal (format.go,
// blockSeal), and returns the stored bytes and their compression type,
// which is none or snappy.
func verifyBlock(b []byte, h handle, seal uint32) (stored []byte, typ byte, err error) {
	stored, typ = b[:h.length:h.length], b[h.length]
	if got, want := checksum(stored, typ)^seal, leUint32(b[h.length+1:]); got != want {
		return nil, 0, fmt.Errorf("checksum %#08x, stored %#08x: %w", got, want, base.ErrCorruption)
	}
	if typ != compressionNone && typ != compressionSnappy {
		return nil, 0, fmt.Errorf("unknown compression type %d: %w", typ, base.ErrCorruption)
	}
	return stored, typ, nil
}

// decodedLen is the length a snappy block decompresses to, at most
// maxBlockLen.
func decodedLen(stored []byte) (int, error) {
	dlen, err := snappy.DecodedLen(stored)
	if err != nil || dlen > maxBlockLen {
		return 0, fmt.Errorf("snappy block of %d bytes claims %d: %w", len(stored), dlen, base.ErrCorruption)
	}
	return dlen, nil
}

// decompress decodes the snappy block stored into dst, whose length is
// decodedLen(stored).
func decompress(dst, stored []byte) error {
	if out, err := snappy.Decode(dst, stored); err != nil || len(out) != len(dst) {
		return fmt.Errorf("snappy: %v: %w", err, base.ErrCorruption)
	}
	return nil
}

// readBlock reads, verifies and decompresses the block at h into a buffer
// from the block-buffer pools (internal/cache), so that a read allocates
// nothing in steady state; the caller owns the returned handle.
func (r *Reader) readBlock(h handle) (cache.Handle, error) {
	raw := cache.Alloc(int(h.length) + blockTrailerLen) // h.length <= maxBlockLen: checked at open
	if err := r.readAt(raw.Block(), h.offset); err != nil {
		raw.Release()
		return cache.Handle{}, err
	}
	return r.decodeBlock(raw, h)
}

// decodeBlock verifies and decompresses raw, the block at h as read with
// its trailer, taking over raw: the handle it returns is raw itself or a
// buffer of the decompressed block.
func (r *Reader) decodeBlock(raw cache.Handle, h handle) (cache.Handle, error) {
	stored, typ, err := verifyBlock(raw.Block(), h, r.props.seal(h.offset))
	if err != nil {
		raw.Release()
		return cache.Handle{}, err
	}
	if typ == compressionNone {
		raw.Truncate(len(stored))
		return raw, nil
	}
	defer raw.Release()
	dlen, err := decodedLen(stored)
	if err != nil {
		return cache.Handle{}, err
	}
	dec := cache.Alloc(dlen)
	if err := decompress(dec.Block(), stored); err != nil {
		dec.Release()
		return cache.Handle{}, err
	}
	return dec, nil
}

func leUint32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// dataBlock returns a handle on data block i at h, from the block cache
// or else the file (then caching it), and which of the two (BlockNone on
// error); the caller counts it. An iterator passes its readahead, which
// reads the file for it (readahead.go); a Get passes nil. The caller
// reads the block in place and releases the handle once no slice of it
// is in use (internal/cache, invariant 5).
func (r *Reader) dataBlock(i int, h handle, ra *readahead) (b cache.Handle, from BlockSource, err error) {
	if b, ok := r.cache.Get(r.fileNum, h.offset); ok {
		return b, BlockFromCache, nil
	}
	if ra != nil {
		b, err = ra.read(r, i, h)
	} else {
		b, err = r.readBlock(h)
	}
	if err != nil {
		return cache.Handle{}, BlockNone, fmt.Errorf("sstable %s: data block %d at %d: %w", r.name, i, h.offset, err)
	}
	r.cache.Set(r.fileNum, h.offset, &b, cache.Low)
	return b, BlockFromFile, nil
}

// Properties returns the table's properties; the caller must not modify
// them.
func (r *Reader) Properties() *Properties { return &r.props }

// Stats returns a snapshot of the table's read counters.
func (r *Reader) Stats() ReadStats { return r.stats.snapshot() }

// Filter returns the table's Bloom filter, and false if the Reader reads
// it paged (it is not in memory to return): the zero CacheLine, which
// answers "maybe" to everything, for a table without one. It aliases
// memory the Reader frees at Close: a caller that keeps it longer takes a
// reference of its own (CacheLine.Ref) while it holds the Reader, and
// releases it when done.
func (r *Reader) Filter() (filter.CacheLine, bool) { return r.filter, !r.filterPaged || !r.hasFilter }

// MayContainHash asks the filter without touching the disk, and counts
// nothing: a paged table's filter answers only from a page in the block
// cache, "maybe" otherwise. A table without a filter answers true.
func (r *Reader) MayContainHash(h uint64) bool {
	if !r.hasFilter {
		return true
	}
	if r.filterPaged {
		may, _ := r.pagedMayContain(h, true)
		return may
	}
	return r.filter.MayContainHash(h)
}

// MayContainPrefix reports whether the table may hold a user key k whose
// prefix under split is p (k[:split.Len(k)] = p); prefixHash is
// filter.PrefixHash(p), computed once by the caller for all tables. false
// is certain. A table whose filter does not hold split's prefixes answers
// true: one without a filter, one built with no split or with a Split of
// another Name (Properties.FilterSplit), or one read with
// ReaderOptions.IgnoreFilter. A paged table reads the page of the prefix's
// line when the block cache lacks it; a page it fails to read answers
// true, leaving the error to the index or data-block read that follows.
// Counted in ReadStats.PrefixProbes and PrefixNegatives.
func (r *Reader) MayContainPrefix(split *filter.Split, prefixHash uint64) bool {
	if !r.useFilter || !split.HasName(r.props.FilterSplit) {
		return true
	}
	r.stats.prefixProbes.Add(1)
	may, _ := r.mayContain(prefixHash) // a failed page read answers true
	if !may {
		r.stats.prefixNegatives.Add(1)
	}
	return may
}

// mayContain is the filter's answer for a Get: a paged table's reads the
// page of h's line if the block cache lacks it; true for a Reader that
// does not use its filter, and with any error.
func (r *Reader) mayContain(h uint64) (bool, error) {
	switch {
	case !r.useFilter:
		return true, nil
	case r.filterPaged:
		return r.pagedMayContain(h, false)
	}
	return r.filter.MayContainHash(h), nil
}

// Paged reports whether the Reader reads its index and filter through
// the block cache rather than holding them (MetaBudget); a Reader that
// pins its index and pages its filter (a low table's, budget.go) is not
// Paged, but FilterPaged.
func (r *Reader) Paged() bool { return r.indexPaged }

// FilterPaged reports whether the Reader reads its filter through the
// block cache: every paged Reader, and one that pins its index alone.
func (r *Reader) FilterPaged() bool { return r.filterPaged }

// Close closes the file and releases the index and filter memory, which
// is freed once no other holder (a reader made by WithFile, a filter's
// Ref) has it. Blocks already handed out stay valid until their handles
// are released.
func (r *Reader) Close() error {
	if r.closed.Swap(true) {
		return ErrClosed
	}
	r.releaseMeta()
	return r.f.Close()
}

// releaseMeta drops the Reader's references on its index and filter
// memory (none before Open set them) and forgets both, so that a use after
// Close finds an empty table instead of freed memory.
func (r *Reader) releaseMeta() {
	r.ix.release()
	r.filter.Release()
	r.ix, r.filter, r.pf = tableIndex{}, filter.CacheLine{}, pagedFilter{}
	r.budget.leave(r.claim)
	r.claim, r.indexPaged, r.filterPaged, r.hasFilter, r.useFilter = metaClaim{}, false, false, false, false
}

// TableFileName is the name of table fileNum: "000123.sst".
func TableFileName(fileNum uint64) string { return fmt.Sprintf("%06d.sst", fileNum) }
