package memtable

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/google/btree"
	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/keyspan"
)

var (
	// ErrFrozen is returned by Add on a memtable after Freeze.
	ErrFrozen = errors.New("memtable: frozen")
	// ErrInvalidEntry is returned by Add for an entry the memtable cannot
	// hold: an unknown kind, a sequence number above MaxSeqNum, or an
	// exact duplicate (same user key, sequence number and kind) of an entry
	// already present.
	ErrInvalidEntry = errors.New("memtable: invalid entry")
)

// Result says what the memtable knows about a user key at a snapshot.
type Result uint8

const (
	// FilteredOut: the filter said no; the tree was not searched.
	FilteredOut Result = iota
	// Absent: the filter said maybe, the tree has no version visible at
	// the snapshot (a filter false positive, or only newer versions).
	Absent
	// Found: the newest visible version is a set; the value is returned.
	Found
	// Deleted: the newest visible version is a tombstone. The search for
	// the key ends here: older levels must not be consulted.
	Deleted
)

func (r Result) String() string {
	switch r {
	case FilteredOut:
		return "filtered-out"
	case Absent:
		return "absent"
	case Found:
		return "found"
	case Deleted:
		return "deleted"
	}
	return fmt.Sprintf("Result(%d)", uint8(r))
}

// Options configure a memtable.
type Options struct {
	// ExpectedEntries sizes the first filter so that it need not grow
	// while the memtable fills (for two fingerprints per entry with a
	// Split). 0 picks a small filter; it grows as needed.
	ExpectedEntries int
	// Split, if not nil, puts each entry's prefix in the filter beside its
	// key (filter.PrefixHash; invariant 2), so that MayContainPrefix can
	// rule the memtable out for a prefix. A Split with an empty Name is
	// never matched: MayContainPrefix then answers true.
	Split *filter.Split
	// DisableFilter makes Get skip the filter probe and always search the
	// tree. It exists to measure what the filter saves (BenchmarkGetAbsent,
	// kvbench); the filter is still maintained, so MayContainHash and the
	// mutable level are unaffected.
	DisableFilter bool
	// OffHeap keeps the key and value bytes outside the Go heap
	// (internal/offheap), where the collector does not count them twice
	// toward its heap goal. A value Get returns is then valid only while
	// the Memtable is reachable, and an Iter's keys and values while the
	// Iter is, not for as long as the slices are: a caller that keeps them
	// longer, or hands them out, copies them (the DB does).
	OffHeap bool
}

// btreeDegree: nodes of up to 63 entries of 32 bytes, ~2 KiB; a binary
// search in a node touches ~6 cache lines, and the tree stays shallow
// (4 levels at 1M entries).
const btreeDegree = 32

// Memtable is a sorted in-memory table of internal entries with a quotient
// filter over its user keys. See the package documentation for the
// concurrency rules.
type Memtable struct {
	mu     sync.RWMutex
	tree   *btree.BTreeG[entry]
	filter *filter.Quotient
	// snap is a copy-on-write clone of tree taken by NewIter and shared by
	// every iterator opened until the next write; nil after a write.
	snap    *btree.BTreeG[entry]
	arena   arena
	entries int64 // live entries, for ApproximateSize
	frozen  atomic.Bool
	// noFilter mirrors Options.DisableFilter.
	noFilter bool
	// rangeDels are the range tombstones (rangedel.go), apart from tree.
	rangeDels keyspan.Set
	// split is Options.Split; lastPrefix is the PrefixHash of the last
	// Add's prefix, already in the filter when hasLastPrefix.
	split         *filter.Split
	lastPrefix    uint64
	hasLastPrefix bool
	// refs counts the holders (New's caller, and one per Ref); the last
	// Unref frees the off-heap arena, and cleanup, which would free it
	// when the Memtable is collected, is stopped then.
	refs    atomic.Int32
	cleanup runtime.Cleanup
}

// New returns an empty memtable.
func New(opts Options) *Memtable {
	expected := opts.ExpectedEntries
	if opts.Split != nil {
		expected *= 2 // a prefix per entry at most
	}
	m := &Memtable{
		tree:     btree.NewG(btreeDegree, less),
		filter:   newFilter(expected),
		noFilter: opts.DisableFilter,
		arena:    arena{offHeap: opts.OffHeap},
		split:    opts.Split,
	}
	m.refs.Store(1)
	if opts.OffHeap {
		m.arena.held = new(heldChunks)
		m.cleanup = runtime.AddCleanup(m, (*heldChunks).release, m.arena.held)
	}
	return m
}

// Ref adds a holder, who must Unref once done. It panics on a Memtable
// whose last holder let go: its arena may be gone.
func (m *Memtable) Ref() {
	if m.refs.Add(1) <= 1 {
		panic("memtable: Ref of a released Memtable")
	}
}

// Unref drops a holder. The last one frees an off-heap arena at once,
// rather than when the collector finds the Memtable unreachable: the
// collector does not see the arena, so a process that allocates little
// on the heap would otherwise keep every flushed memtable's arena until
// its next collection. After it, nothing may read the Memtable, nor any
// value or key it returned. A Memtable never let go of is freed when
// collected, as before.
func (m *Memtable) Unref() {
	switch n := m.refs.Add(-1); {
	case n > 0:
		return
	case n < 0:
		panic("memtable: Unref of a released Memtable")
	}
	if m.arena.held != nil {
		m.cleanup.Stop()
		m.arena.held.release()
	}
}

// Len returns the number of entries (versions, not user keys).
func (m *Memtable) Len() int {
	defer m.runlock(m.rlock())
	return m.tree.Len()
}

// Empty reports whether the memtable holds no entry and no range
// tombstone.
func (m *Memtable) Empty() bool { return m.Len() == 0 && !m.HasRangeDels() }

// ApproximateSize returns the bytes the memtable holds: its range
// tombstones (keyspan.Set.Size), key and value bytes
// (including those of removed entries and rejected duplicates, which stay
// in the arena until the memtable is dropped, and the chunk tails the arena
// gave up on), entryOverhead per live entry, and the filter. It grows with
// every Add from the first one: the arena's chunk in use counts only as far
// as it is filled. The engine compares it with its flush threshold.
func (m *Memtable) ApproximateSize() int64 {
	defer m.runlock(m.rlock())
	return m.arena.used + m.entries*entryOverhead + int64(m.filter.SizeBytes()) + m.rangeDels.Size()
}

// Freeze makes the memtable immutable: Add returns ErrFrozen
// from now on, Filter may be read without locks, and reads stop taking the
// lock. Freeze is idempotent.
func (m *Memtable) Freeze() {
	m.mu.Lock()
	m.frozen.Store(true)
	m.mu.Unlock()
}

// Frozen reports whether Freeze has been called.
func (m *Memtable) Frozen() bool { return m.frozen.Load() }

// Filter returns the memtable's quotient filter, for the mutable level to
// merge. It is only valid once the memtable is frozen: before that the
// writer may insert into it or replace it (growth) at any moment. The
// caller must not modify it.
func (m *Memtable) Filter() *filter.Quotient {
	defer m.runlock(m.rlock())
	return m.filter
}

// rlock takes the read lock unless the memtable is frozen, and reports
// whether it did; pass that to runlock. A frozen memtable is never written
// again, and the atomic frozen flag was stored after its last write, so a
// reader that sees it set needs no lock (invariant 4). The flag must not be
// re-read at unlock time: a reader can wait for the read lock while Freeze
// holds the write lock and then find the flag set.
func (m *Memtable) rlock() bool {
	if m.frozen.Load() {
		return false
	}
	m.mu.RLock()
	return true
}

func (m *Memtable) runlock(locked bool) {
	if locked {
		m.mu.RUnlock()
	}
}
