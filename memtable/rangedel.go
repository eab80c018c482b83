package memtable

import (
	"bytes"
	"fmt"

	"github.com/monbandb/monban/internal/keyspan"
)

// A memtable keeps its range tombstones in a keyspan.Set beside the tree,
// never in it: the tree and the filter hold point entries only, so a read
// of a memtable that never had a range tombstone pays one atomic load for
// them (keyspan, invariant 5), and the engine applies them (lsm/get.go)
// across sources as well as within this one.

// AddRangeDelete records a range tombstone: every user key k with
// start <= k < end deleted at seq. The keys are copied. start >= end is
// rejected, as an entry Add would reject.
func (m *Memtable) AddRangeDelete(seq SeqNum, start, end []byte) error {
	if seq == 0 || seq > MaxSeqNum {
		return fmt.Errorf("%w: range tombstone at sequence number %d", ErrInvalidEntry, seq)
	}
	if bytes.Compare(start, end) >= 0 {
		return fmt.Errorf("%w: range tombstone [%q, %q) is empty", ErrInvalidEntry, start, end)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.frozen.Load() {
		return ErrFrozen
	}
	m.rangeDels.Add(keyspan.Tombstone{Start: start, End: end, Seq: seq})
	m.snap = nil
	return nil
}

// RangeDels returns the memtable's range tombstones, fragmented: every
// one added before the call. They are immutable and valid for as long as
// the caller holds them; without any, the call is one atomic load.
func (m *Memtable) RangeDels() Spans { return m.rangeDels.Spans() }

// HasRangeDels reports whether any range tombstone was added.
func (m *Memtable) HasRangeDels() bool { return m.rangeDels.Len() > 0 }

// RangeTombstones returns the range tombstones as added, oldest first,
// unfragmented (keyspan.Set.Tombstones). The caller must not modify them.
func (m *Memtable) RangeTombstones() []Tombstone { return m.rangeDels.Tombstones() }
