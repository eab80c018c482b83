package memtable

import (
	"errors"
	"slices"

	"github.com/google/btree"
	"github.com/monbandb/monban/internal/base"
)

// errClosedIter is returned by Iter.Error after Close.
var errClosedIter = errors.New("memtable: iterator closed")

// iterBatch is how many entries one tree descent copies into the
// iterator's window. google/btree has no cursor, only callbacks; a window
// turns one O(log n) descent into iterBatch steps of Next or Prev.
const iterBatch = 32

// Iter walks a point-in-time view of a memtable: it implements
// base.InternalIterator over a copy-on-write clone of the tree, so it sees
// exactly the entries present when NewIter was called, takes no lock, and
// never blocks or is blocked by the writer. Keys and values alias the
// memtable and stay valid after the iterator moves (they are never
// rewritten), which is stronger than the interface requires.
//
// An Iter is not safe for concurrent use; open one per goroutine.
type Iter struct {
	tree *btree.BTreeG[entry]
	// m keeps the memtable, and so its arena, reachable: the entries
	// point into it (Options.OffHeap).
	m *Memtable
	// win holds up to iterBatch consecutive entries in ascending order;
	// win[pos] is the current entry when pos is in range.
	win    []entry
	pos    int
	state  iterState
	closed bool
}

type iterState uint8

const (
	beforeFirst iterState = iota // new, or Prev ran off the front: Next goes to First
	valid
	afterLast // Next ran off the end: Prev goes to Last
)

var _ base.InternalIterator = (*Iter)(nil)

// NewIter returns an iterator over the entries present now. Writes made
// after it returns are not seen.
func (m *Memtable) NewIter() *Iter {
	return &Iter{tree: m.snapshot(), m: m, win: make([]entry, 0, iterBatch)}
}

// snapshot returns a tree no writer will modify. A frozen memtable's tree
// is never written again. An active one is cloned (O(1); the writer then
// copies the nodes it touches), and the clone is shared by every iterator
// opened before the next write.
func (m *Memtable) snapshot() *btree.BTreeG[entry] {
	if m.frozen.Load() {
		return m.tree
	}
	m.mu.RLock()
	s := m.snap
	m.mu.RUnlock()
	if s != nil {
		return s
	}
	// Clone writes the original's copy-on-write context: writer lock.
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.snap == nil {
		m.snap = m.tree.Clone()
	}
	return m.snap
}

// fillAsc fills the window with up to iterBatch entries >= from (> from
// when strict) and positions on the first.
func (it *Iter) fillAsc(from entry, strict bool) bool {
	if it.closed {
		return false
	}
	it.win = it.win[:0]
	it.tree.AscendGreaterOrEqual(from, func(e entry) bool {
		if strict && !less(from, e) {
			return true // skip the entry equal to from
		}
		it.win = append(it.win, e)
		return len(it.win) < iterBatch
	})
	return it.settle(0, afterLast)
}

// fillDesc fills the window with up to iterBatch entries <= from (< from
// when strict) and positions on the last.
func (it *Iter) fillDesc(from entry, strict bool) bool {
	if it.closed {
		return false
	}
	it.win = it.win[:0]
	it.tree.DescendLessOrEqual(from, func(e entry) bool {
		if strict && !less(e, from) {
			return true
		}
		it.win = append(it.win, e)
		return len(it.win) < iterBatch
	})
	slices.Reverse(it.win)
	return it.settle(len(it.win)-1, beforeFirst)
}

func (it *Iter) settle(pos int, ifEmpty iterState) bool {
	if len(it.win) == 0 {
		it.state = ifEmpty
		return false
	}
	it.pos, it.state = pos, valid
	return true
}

func (it *Iter) fillFirst() bool {
	if it.closed {
		return false
	}
	it.win = it.win[:0]
	it.tree.Ascend(func(e entry) bool {
		it.win = append(it.win, e)
		return len(it.win) < iterBatch
	})
	return it.settle(0, afterLast)
}

func (it *Iter) fillLast() bool {
	if it.closed {
		return false
	}
	it.win = it.win[:0]
	it.tree.Descend(func(e entry) bool {
		it.win = append(it.win, e)
		return len(it.win) < iterBatch
	})
	slices.Reverse(it.win)
	return it.settle(len(it.win)-1, beforeFirst)
}

// SeekGE moves to the first entry whose internal key is >= key.
func (it *Iter) SeekGE(key InternalKey) bool { return it.fillAsc(pivot(key), false) }

// SeekLT moves to the last entry whose internal key is < key.
func (it *Iter) SeekLT(key InternalKey) bool { return it.fillDesc(pivot(key), true) }

// First moves to the smallest entry.
func (it *Iter) First() bool { return it.fillFirst() }

// Last moves to the largest entry.
func (it *Iter) Last() bool { return it.fillLast() }

// Next moves to the following entry. A new iterator, or one that Prev
// ran off the front, moves to the first entry.
func (it *Iter) Next() bool {
	switch it.state {
	case valid:
		if it.pos+1 < len(it.win) {
			it.pos++
			return true
		}
		return it.fillAsc(it.win[it.pos], true)
	case beforeFirst:
		return it.First()
	}
	return false
}

// Prev moves to the preceding entry. An iterator that Next ran off the end
// moves to the last entry; a new one stays invalid.
func (it *Iter) Prev() bool {
	switch it.state {
	case valid:
		if it.pos > 0 {
			it.pos--
			return true
		}
		return it.fillDesc(it.win[it.pos], true)
	case afterLast:
		return it.Last()
	}
	return false
}

// Valid reports whether the iterator is on an entry.
func (it *Iter) Valid() bool { return it.state == valid }

// Key returns the current entry's internal key. REQUIRES: Valid().
func (it *Iter) Key() InternalKey { return it.win[it.pos].internalKey() }

// Value returns the current entry's value. REQUIRES: Valid().
func (it *Iter) Value() []byte { return it.win[it.pos].value() }

// Error is nil unless the iterator was used after Close. A memtable
// iterator does no I/O and cannot otherwise fail.
func (it *Iter) Error() error {
	if it.closed {
		return errClosedIter
	}
	return nil
}

// Close releases the view; the memtable's old nodes become garbage once
// no iterator or clone holds them. Positioning methods return false after
// Close.
func (it *Iter) Close() error {
	it.closed = true
	it.tree, it.m = nil, nil
	it.win = nil
	it.state = beforeFirst
	return nil
}
