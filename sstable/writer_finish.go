package sstable

import (
	"errors"
	"fmt"
	"math"

	"github.com/monbandb/monban/filter"
)

// Finish writes the remaining data block, then the filter, index and
// properties blocks and the footer; it syncs and closes the file and returns
// the table's properties.
func (w *Writer) Finish() (Properties, error) {
	if w.finished {
		return Properties{}, ErrClosed
	}
	w.finished = true
	defer w.release()
	if w.err != nil {
		return Properties{}, errors.Join(w.err, w.f.Close())
	}
	w.flushDataBlock()
	if w.hasUnindexed {
		w.indexBlock(nil)
	}
	p := &w.props
	if w.props.NumEntries > 0 {
		k, _ := decodeInternalKeyCopy(w.lastKey)
		p.Largest = k
	}

	var ft footer
	ft.version = formatVersion
	if w.filter != nil {
		p.FilterLayout = FilterLayoutCacheLine
		if w.opts.Split != nil {
			p.FilterSplit = w.opts.Split.Name
		}
		// As the builder clamps it, to the thousandth the property keeps.
		p.FilterBitsPerKey = math.Round(min(w.opts.BloomBitsPerKey, filter.MaxCacheLineBitsPerKey)*1000) / 1000
		enc := w.filter.Finish(nil)
		if f, err := filter.OpenCacheLine(enc); err == nil {
			p.FilterLines, p.FilterProbes = uint64(f.Lines()), uint64(f.Probes())
		}
		p.FilterPageCRCs = appendPageCRCs(nil, enc)
		// Stored raw: a Bloom filter's bits are incompressible.
		ft.filter = w.writeBlock(enc, false)
		p.FilterBytes = ft.filter.length + blockTrailerLen
	}
	ft.index = w.writeIndex()
	p.IndexBytes = uint64(w.partsSize) + ft.index.length + blockTrailerLen
	w.writeRangeDels()
	w.writeRangeFilter()
	w.writeKeyHashes()
	ft.props = w.writeBlockSealed(p.encode(), false, 0)
	w.write(ft.encode())
	p.FileSize = w.offset

	if w.err == nil {
		if err := w.bw.Flush(); err != nil {
			w.err = fmt.Errorf("sstable: flush: %w", err)
		}
	}
	if w.err == nil {
		if err := w.f.Sync(); err != nil {
			w.err = fmt.Errorf("sstable: sync: %w", err)
		}
	}
	if err := w.f.Close(); err != nil && w.err == nil {
		w.err = fmt.Errorf("sstable: close: %w", err)
	}
	if w.err != nil {
		return Properties{}, w.err
	}
	return *p, nil
}

// writeIndex writes the index partitions, then the top-level block that
// indexes them, and returns the top-level block's handle (the footer's
// index handle). Partitions are stored uncompressed, as every meta block
// is, so that a paged table reads one in place.
func (w *Writer) writeIndex() handle {
	w.cutIndexPartition()
	top := blockBuilder{restartInterval: 1}
	var buf []byte
	for _, part := range w.parts {
		h := w.writeBlock(part.block, false)
		buf = appendPartEntry(buf[:0], h, part.whole, part.first)
		top.add(part.lastKey, buf)
	}
	return w.writeBlock(top.finish(), false)
}

// Abort abandons the table and closes the file; the caller removes it.
func (w *Writer) Abort() error {
	if w.finished {
		return ErrClosed
	}
	w.finished = true
	w.release()
	return w.f.Close()
}
