package sstable

import (
	"fmt"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
)

// The range-filter block holds a filter.Grafite over the points
// (filter.GrafitePoint, the first 8 bytes) of the user keys of the
// table's point entries, of every kind: a deletion hides older values in
// deeper tables, so a table whose only key in a range is a deletion must
// not be ruled out for it. It is an ordinary block (trailer and CRC,
// never compressed) written after the range-deletion block and before the
// properties, which locate it (filter.range_block, a handle) and record
// its parameters (filter.range_bits, filter.range_len), so the footer is
// unchanged and a table without the properties — every table written
// before the block existed — has none (docs/format.md, "Range-filter
// block").
//
// The table's range tombstones are not in the filter: a reader gets them
// from RangeDels, which a DB iterator gathers from every table of its
// view whether or not the range filter lets it skip the table's points.
//
// Like the range-deletion block, the filter is decoded at Open and kept
// on the heap, pinned or paged alike: a bounded iterator asks it before
// the table's index, so a paged copy would cost the read it saves.

// writeRangeFilter writes the range-filter block, if the writer builds
// one, and records it in the properties.
func (w *Writer) writeRangeFilter() {
	if w.ranges == nil {
		return
	}
	p := &w.props
	// As the builder clamps it.
	p.RangeFilterBits = uint64(min(max(w.opts.RangeFilter.BitsPerKey, filter.GrafiteMinBitsPerKey), filter.GrafiteMaxBitsPerKey))
	p.RangeFilterLen = w.opts.RangeFilter.RangeLen
	if p.RangeFilterLen == 0 {
		p.RangeFilterLen = filter.DefaultGrafiteRangeLen
	}
	p.rangeFilterBlock = w.writeBlock(w.ranges.Finish(nil), false)
	p.RangeFilterBytes = p.rangeFilterBlock.length + blockTrailerLen
}

// readRangeFilter reads and decodes the range-filter block the properties
// name, after checking that it lies inside the file before the
// properties block (invariant 3); not at all under
// ReaderOptions.SkipFilters.
func (r *Reader) readRangeFilter() error {
	h := r.props.rangeFilterBlock
	if h == (handle{}) || r.skipFilters {
		return nil
	}
	if err := checkPropsHandle(h, r.props.FileSize, "range-filter"); err != nil {
		return err
	}
	block, buf, err := r.readMeta(h, "range-filter")
	if err != nil {
		return err
	}
	enc := append([]byte(nil), block...) // the Grafite aliases it for the Reader's life
	buf.Release()
	g, err := filter.OpenGrafite(enc)
	if err != nil {
		return fmt.Errorf("range-filter block at %d: %w: %w", h.offset, base.ErrCorruption, err)
	}
	if g.RangeLen() != r.props.RangeFilterLen {
		return fmt.Errorf("range-filter block of range length %d, properties say %d: %w", g.RangeLen(), r.props.RangeFilterLen, base.ErrCorruption)
	}
	r.ranges = g
	return nil
}

// MayContainRange reports whether the table may hold a point entry whose
// user key lies in [lower, upper) (nil bounds are open); false is
// certain. A table without a range-filter block, or read with
// ReaderOptions.IgnoreFilter, answers true. The table's range tombstones
// are not asked (RangeDels has them). Counted in ReadStats.RangeProbes
// and RangeNegatives.
func (r *Reader) MayContainRange(lower, upper []byte) bool {
	if !r.useRanges {
		return true
	}
	r.stats.rangeProbes.Add(1)
	if r.ranges.MayContainKeys(lower, upper) {
		return true
	}
	r.stats.rangeNegatives.Add(1)
	return false
}
