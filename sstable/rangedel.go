package sstable

import (
	"fmt"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/keyspan"
)

// The range-deletion block holds a table's range tombstones, fragmented:
// keyspan.Encode's bytes in an ordinary block (trailer and CRC, never
// compressed), written after the top-level index and before the
// properties. The properties locate it (rangedel.block, a handle) and
// count its spans (rangedel.spans), so the footer is unchanged and a
// table without the properties, which every older table is, has no range
// tombstones (docs/format.md, "Range-deletion block").
//
// The block is small next to the data it deletes, and a read of any key
// in the table's range must consult it, so a Reader decodes it at Open and
// keeps it beside its index and filter, pinned or paged alike.

// SetRangeDels gives the table its range tombstones. The Writer keeps
// spans as they are (they are immutable) and writes them in Finish; a
// later call replaces an earlier one. The table's point entries and its
// spans are independent: the caller decides which spans belong in the
// table (keyspan.Truncate at its boundaries).
func (w *Writer) SetRangeDels(spans Spans) { w.rangeDels = spans }

// writeRangeDels writes the range-deletion block, if the table has spans,
// and records it in the properties.
func (w *Writer) writeRangeDels() {
	n := w.rangeDels.Len()
	if n == 0 {
		return
	}
	p := &w.props
	p.RangeDelSpans = uint64(n)
	p.rangeDelBlock = w.writeBlock(keyspan.Encode(nil, w.rangeDels), false)
	for sp := range w.rangeDels.All() {
		// Spans count toward the table's sequence numbers: an L0 table is
		// ordered by its largest, and one may hold nothing but spans.
		lo, hi := sp.Seqs[len(sp.Seqs)-1], sp.Seqs[0]
		if p.NumEntries == 0 && p.LargestSeq == 0 {
			p.SmallestSeq, p.LargestSeq = lo, hi
		}
		p.SmallestSeq, p.LargestSeq = min(p.SmallestSeq, lo), max(p.LargestSeq, hi)
	}
}

// RangeDels returns the table's range tombstones (none for a table
// without a range-deletion block). They stay valid after Close.
func (r *Reader) RangeDels() Spans { return r.rangeDels }

// readRangeDels reads and decodes the range-deletion block the properties
// name, after checking that it lies inside the file before the
// properties block (invariant 3).
func (r *Reader) readRangeDels() error {
	p := &r.props
	h := p.rangeDelBlock
	if p.RangeDelSpans == 0 && h == (handle{}) {
		return nil
	}
	if err := checkPropsHandle(h, p.FileSize, "range-deletion"); err != nil {
		return err
	}
	block, buf, err := r.readMeta(h, "range-deletion")
	if err != nil {
		return err
	}
	spans, err := keyspan.Decode(block) // copies what it keeps
	buf.Release()
	if err != nil {
		return fmt.Errorf("range-deletion block at %d: %w", h.offset, err)
	}
	if uint64(spans.Len()) != p.RangeDelSpans {
		return fmt.Errorf("range-deletion block holds %d spans, properties say %d: %w", spans.Len(), p.RangeDelSpans, base.ErrCorruption)
	}
	r.rangeDels = spans
	return nil
}
