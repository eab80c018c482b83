package manifest

import (
	"fmt"
	"runtime"
	"sync/atomic"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/keyspan"
)

// NumLevels is the number of levels of the tree: L0, whose tables may
// overlap, and L1..L6, each a sorted run of non-overlapping tables.
const NumLevels = 7

// FileMetadata describes one SSTable as the manifest records it. Everything
// but the fields marked in-memory is persisted by a NewFile record
// (docs/format.md, "Manifest").
//
// A FileMetadata is shared by every Version that contains the table, so
// its persisted fields never change once it is in a Version; the in-memory
// fields follow the locking rule written beside them.
type FileMetadata struct {
	FileNum uint64
	// Size is the length of the table file in bytes.
	Size uint64
	// Smallest and Largest bound the table's internal keys, inclusive.
	// Invariant: Compare(Smallest, Largest) <= 0.
	Smallest, Largest base.InternalKey
	// SmallestSeq and LargestSeq bound the sequence numbers of the table's
	// entries. L0 is ordered by LargestSeq, newest first.
	SmallestSeq, LargestSeq base.SeqNum
	// NumEntries counts the table's entries; NumDeletions those of them
	// that are tombstones. The picker weighs a table by CompensatedSize,
	// so that tables whose tombstones would reclaim space go down sooner.
	NumEntries, NumDeletions uint64
	// TableID is the table file's identity: a random nonzero value the
	// engine draws when it writes the table and also stores in the table's
	// properties, so that Open can tell a replaced or swapped .sst from the
	// one the manifest names (a number says where, not what). 0 means
	// unknown: a table recorded before ids existed (NewFile tag 7).
	TableID uint64

	// filter (in-memory) is the table's Bloom filter from the first reader
	// of the table opened (SetFilter), so that the absent-key proofs of
	// deletes and merges probe it without the table cache's lock, with a
	// reference of its own on the filter's memory (offheap, invariant 1),
	// so it stays valid after the table cache closes the reader. The
	// reference is dropped when the table leaves the last live Version
	// (VersionSet.release, Close included), or else when the metadata is
	// collected (metadata replaced by a move). nil until a reader was
	// opened.
	filter atomic.Pointer[heldFilter]
	// rangeDels (in-memory) are the table's range tombstones, recorded
	// from its first reader as the filter is (rangedels.go).
	rangeDels atomic.Pointer[keyspan.Spans]
	// rangeDelBytes (in-memory) estimates the bytes of the tables below f
	// that its range tombstones cover, once rangeDelsEstimated is set
	// (rangedels.go, SetRangeDelBytes).
	rangeDelBytes      atomic.Uint64
	rangeDelsEstimated atomic.Bool
}

// heldFilter is a FileMetadata's filter and its one Release, which either
// of two paths may make.
type heldFilter struct {
	filter.CacheLine
	released atomic.Bool
}

func (h *heldFilter) release() {
	if !h.released.Swap(true) {
		h.CacheLine.Release()
	}
}

// Filter returns the table's Bloom filter, or nil if no reader of the
// table has been opened since Open (the proofs then ask the table cache).
// It is valid while the caller holds a Version holding f.
func (f *FileMetadata) Filter() *filter.CacheLine {
	if h := f.filter.Load(); h != nil {
		return &h.CacheLine
	}
	return nil
}

// SetFilter records the table's filter (sstable.Reader.Filter), taking a
// reference on its memory; the caller holds the reader meanwhile. The
// first call wins, and every call passes the same table's filter. It
// allocates only the first time: every read of the table calls it.
func (f *FileMetadata) SetFilter(c filter.CacheLine) {
	if f.filter.Load() != nil {
		return
	}
	h := &heldFilter{CacheLine: c.Ref()}
	if !f.filter.CompareAndSwap(nil, h) {
		h.CacheLine.Release()
		return
	}
	runtime.AddCleanup(f, (*heldFilter).release, h)
}

// releaseFilter drops the filter's reference once no live Version holds
// f, so no proof can probe it any more.
func (f *FileMetadata) releaseFilter() {
	if h := f.filter.Swap(nil); h != nil {
		h.release()
	}
}

// CompensatedSize is the table's size inflated by its tombstones: each
// point tombstone is counted as the average entry size again, because
// compacting it down removes that much data below (RocksDB weighs
// deletions the same way), and its range tombstones by the bytes below
// they were estimated to cover (RangeDelBytes). It is computed, not
// stored, so the rule can change freely.
func (f *FileMetadata) CompensatedSize() uint64 {
	n := f.Size + f.RangeDelBytes()
	if f.NumEntries == 0 {
		return n
	}
	return n + f.NumDeletions*(f.Size/f.NumEntries)
}

// ContainsUserKey reports whether ukey lies inside the table's user-key
// range, bounds included.
func (f *FileMetadata) ContainsUserKey(ukey []byte) bool {
	return compareUser(f.Smallest.UserKey, ukey) <= 0 && compareUser(ukey, f.Largest.UserKey) <= 0
}

func (f *FileMetadata) String() string {
	return fmt.Sprintf("%06d:[%v-%v] seq[%d-%d] %dB", f.FileNum, f.Smallest, f.Largest, f.SmallestSeq, f.LargestSeq, f.Size)
}

// validate checks what a single table's metadata must satisfy whatever
// level it sits in. The error does not wrap a sentinel; callers add
// ErrCorruption (decoding) or ErrInvalidEdit (LogAndApply).
func (f *FileMetadata) validate() error {
	switch {
	case f.FileNum == 0:
		return fmt.Errorf("table has file number 0")
	case base.Compare(f.Smallest, f.Largest) > 0:
		return fmt.Errorf("table %06d: smallest key %v is after largest %v", f.FileNum, f.Smallest, f.Largest)
	case f.SmallestSeq > f.LargestSeq:
		return fmt.Errorf("table %06d: smallest seq %d above largest %d", f.FileNum, f.SmallestSeq, f.LargestSeq)
	case f.LargestSeq > base.MaxSeqNum:
		return fmt.Errorf("table %06d: seq %d beyond the 56-bit range", f.FileNum, f.LargestSeq)
	case f.NumDeletions > f.NumEntries:
		return fmt.Errorf("table %06d: %d deletions among %d entries", f.FileNum, f.NumDeletions, f.NumEntries)
	}
	return nil
}
