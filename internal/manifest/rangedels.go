package manifest

import "github.com/monbandb/monban/internal/keyspan"

// A table's range tombstones are not in the manifest: the table's
// range-deletion block holds them, and its reader decodes them at open.
// The metadata keeps them once a reader was opened, as it keeps the
// filter, so that a read meeting the table asks for them with one atomic
// load and no table-cache lookup, and keeps them past the reader's close
// (they are small and on the Go heap; no reference counting is needed).

// noRangeDels is what a table without range tombstones records: shared,
// so that recording it allocates nothing.
var noRangeDels = new(keyspan.Spans)

// RangeDels returns the table's range tombstones, and false if no reader
// of the table has been opened since Open (they are then unknown: the
// caller opens one).
func (f *FileMetadata) RangeDels() (keyspan.Spans, bool) {
	if s := f.rangeDels.Load(); s != nil {
		return *s, true
	}
	return keyspan.Spans{}, false
}

// SetRangeDels records the table's range tombstones (sstable.Reader's).
// The first call wins; every call passes the same table's.
func (f *FileMetadata) SetRangeDels(s keyspan.Spans) {
	if f.rangeDels.Load() != nil {
		return
	}
	p := noRangeDels
	if s.Len() > 0 {
		held := s // a copy, so that only this branch allocates
		p = &held
	}
	f.rangeDels.CompareAndSwap(nil, p)
}

// RangeDelBytes returns the estimate SetRangeDelBytes recorded of the
// bytes below the table that its range tombstones cover: 0 until then.
// The picker adds it to the table's size (CompensatedSize), so that a
// tombstone over much data goes down, and the data with it, without
// waiting for a manual compaction.
func (f *FileMetadata) RangeDelBytes() uint64 { return f.rangeDelBytes.Load() }

// RangeDelsEstimated reports whether SetRangeDelBytes was called.
func (f *FileMetadata) RangeDelsEstimated() bool { return f.rangeDelsEstimated.Load() }

// SetRangeDelBytes records the estimate of RangeDelBytes. It is made once
// per metadata, against the Version the table was first estimated in, and
// not redone as the levels below change, as Pebble's table stats are not:
// data below moves further down, still below the table, or is dropped by
// merges, so the estimate only errs toward pushing the tombstones down
// sooner; a move takes the table to a level that held nothing of its
// range, which counted nothing. Two goroutines estimating the same table
// at once store values alike.
func (f *FileMetadata) SetRangeDelBytes(n uint64) {
	f.rangeDelBytes.Store(n)
	f.rangeDelsEstimated.Store(true)
}
