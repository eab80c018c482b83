package memtable

import (
	"errors"
	"fmt"
	"slices"

	"github.com/monbandb/monban/filter"
)

// ErrLevelTransition is returned by Rotate and Flushed for a transition
// that would break the mutable level's invariants: a nil or frozen next
// memtable, or a flush of anything but the oldest immutable memtable.
var ErrLevelTransition = errors.New("memtable: invalid mutable-level transition")

// Level is the mutable level: the active memtable plus the immutable ones
// waiting to flush, newest first, and ONE counting quotient filter over
// all the immutables. "Could this key be in the mutable level?" costs at
// most two filter probes however many memtables are queued.
//
// A Level is immutable: Rotate and Flushed return a new one and leave the
// receiver valid. The engine swaps *Level pointers under its own mutex;
// readers use whichever *Level they loaded, without locks. Only the active
// memtable changes underneath (it has its own lock).
//
// Invariant 5: combined holds exactly the multiset union of the filters of
// Immutables() (nil when there are none), so a key with an entry in any
// memtable of the level is admitted by MayContainHash.
type Level struct {
	active *Memtable
	imm    []*Memtable // newest first; never appended to in place
	// combined is never modified after the Level is built: transitions
	// clone it first. It may be the very filter of a frozen memtable.
	combined *filter.Quotient
}

// NewLevel returns a level whose only memtable is active.
func NewLevel(active *Memtable) *Level { return &Level{active: active} }

// Active returns the memtable taking writes.
func (l *Level) Active() *Memtable { return l.active }

// Immutables returns the frozen memtables waiting to flush, newest first.
// The caller must not modify the slice.
func (l *Level) Immutables() []*Memtable { return l.imm }

// CombinedFilter returns the filter over all immutables (nil if none), for
// statistics and tests. The caller must not modify it.
func (l *Level) CombinedFilter() *filter.Quotient { return l.combined }

// MayContainHash reports whether any memtable of the level may hold a user
// key with this filter.Hash: the active memtable's filter, then the
// combined one. false is certain.
func (l *Level) MayContainHash(h uint64) bool {
	if l.active.MayContainHash(h) {
		return true
	}
	return l.combined != nil && l.combined.MayContainHash(h)
}

// Rotate freezes the active memtable, which becomes the newest immutable,
// and makes next the active one. combined' = clone(combined) merged with
// the frozen memtable's filter, grown first if it would pass maxLoad. The
// cost is linear in the filter sizes (a flush's frequency, not a write's),
// and writers wait for the new active memtable meanwhile
// (BenchmarkLevelRotate; docs/benchmarks.md, "Rotating a memtable level").
//
// The active memtable is frozen even if Rotate fails (a filter that cannot
// grow past 2^32 slots): the engine treats that error as fatal.
func (l *Level) Rotate(next *Memtable) (*Level, error) {
	if next == nil || next == l.active || next.Frozen() {
		return nil, fmt.Errorf("%w: next memtable must be new and not frozen", ErrLevelTransition)
	}
	l.active.Freeze()
	f := l.active.Filter()
	var combined *filter.Quotient
	if l.combined == nil {
		// The frozen filter is never modified again, and a Level never
		// modifies its combined filter: sharing it is safe and O(1).
		combined = f
	} else {
		var err error
		if combined, err = mergeGrowing(l.combined, f); err != nil {
			return nil, err
		}
	}
	imm := make([]*Memtable, 0, len(l.imm)+1)
	imm = append(append(imm, l.active), l.imm...)
	return &Level{active: next, imm: imm, combined: combined}, nil
}

// mergeGrowing returns a clone of dst with src merged in, grown as often
// as needed to stay at or under maxLoad. Merge fails with ErrFull and
// leaves the clone unchanged when it cannot fit, so growing and retrying
// is safe.
func mergeGrowing(dst, src *filter.Quotient) (*filter.Quotient, error) {
	c := dst.Clone()
	for !fits(c, src.Len()) {
		if err := c.Grow(); err != nil {
			return nil, fmt.Errorf("memtable: growing combined filter: %w", err)
		}
	}
	for {
		err := c.Merge(src)
		if err == nil {
			return c, nil
		}
		if !errors.Is(err, filter.ErrFull) {
			return nil, fmt.Errorf("memtable: merging into combined filter: %w", err)
		}
		if err := c.Grow(); err != nil {
			return nil, fmt.Errorf("memtable: growing combined filter: %w", err)
		}
	}
}

// Flushed removes m, which must be the oldest immutable memtable, from the
// level once its SSTable is durable: combined' = clone(combined) minus m's
// filter. With one immutable left, combined' is simply that memtable's own
// filter, which also gives back the slots of a combined filter that grew
// while the queue was long.
func (l *Level) Flushed(m *Memtable) (*Level, error) {
	n := len(l.imm)
	if n == 0 || l.imm[n-1] != m {
		return nil, fmt.Errorf("%w: only the oldest immutable memtable can be flushed", ErrLevelTransition)
	}
	// A copy, not a reslice: the GC keeps a whole backing array live, so
	// l.imm's array would keep m's tree and filter on the heap for as
	// long as the new level lasts.
	var rest []*Memtable
	if n > 1 {
		rest = slices.Clone(l.imm[:n-1])
	}
	var combined *filter.Quotient
	switch len(rest) {
	case 0:
	case 1:
		combined = rest[0].Filter()
	default:
		combined = l.combined.Clone()
		if err := combined.Subtract(m.Filter()); err != nil {
			return nil, fmt.Errorf("memtable: subtracting flushed memtable from combined filter: %w", err)
		}
	}
	return &Level{active: l.active, imm: rest, combined: combined}, nil
}
