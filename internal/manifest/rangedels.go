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
