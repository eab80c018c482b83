package merge

import (
	"errors"

	"github.com/monbandb/monban/internal/base"
)

// Iter merges sources into one base.InternalIterator. A binary heap over
// the positioned sources keeps each step O(log n): forward the heap is a
// min-heap, backward a max-heap, and a change of direction repositions every
// source around the current key.
type Iter struct {
	sources []base.InternalIterator
	heap    []int // indices into sources, heap-ordered by the current direction
	forward bool
	err     error
	// turnKey holds the current key while a change of direction moves the
	// source it aliases; reused from turn to turn.
	turnKey []byte
}

var _ base.InternalIterator = (*Iter)(nil)

// NewIter returns an iterator over sources, which it owns. Sources earlier
// in the list win ties (invariant 2).
func NewIter(sources ...base.InternalIterator) *Iter {
	m := new(Iter)
	m.Init(sources)
	return m
}

// Init makes m the iterator NewIter(sources...) would return, reusing its
// buffers, so that a caller keeping its iterators opens one without
// allocating. REQUIRES: m is new or closed.
func (m *Iter) Init(sources []base.InternalIterator) {
	heap := m.heap[:0]
	if cap(heap) < len(sources) {
		heap = make([]int, 0, len(sources))
	}
	*m = Iter{sources: sources, heap: heap, turnKey: m.turnKey[:0]}
}

// First moves to the smallest entry of all sources.
func (m *Iter) First() bool {
	return m.position(true, func(_ int, s base.InternalIterator) bool { return s.First() })
}

// Last moves to the largest entry of all sources.
func (m *Iter) Last() bool {
	return m.position(false, func(_ int, s base.InternalIterator) bool { return s.Last() })
}

// SeekGE moves to the first entry >= key.
func (m *Iter) SeekGE(key base.InternalKey) bool {
	return m.position(true, func(_ int, s base.InternalIterator) bool { return s.SeekGE(key) })
}

// SeekLT moves to the last entry < key.
func (m *Iter) SeekLT(key base.InternalKey) bool {
	return m.position(false, func(_ int, s base.InternalIterator) bool { return s.SeekLT(key) })
}

// position moves every source with move and rebuilds the heap for the
// given direction.
func (m *Iter) position(forward bool, move func(int, base.InternalIterator) bool) bool {
	m.forward = forward
	m.heap = m.heap[:0]
	m.err = nil
	for i, s := range m.sources {
		if move(i, s) {
			m.heap = append(m.heap, i)
		} else if err := s.Error(); err != nil {
			m.err = err
			m.heap = m.heap[:0]
			return false
		}
	}
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return m.Valid()
}

// A Skipper names the key a source may be sought to (Skip), or false.
type Skipper interface {
	SkipTo(source int) (base.InternalKey, bool)
}

// Skip moves sources on, in the current direction, past entries their
// caller knows are hidden (by a range tombstone, in lsm's iterator): each
// positioned source that to names a key for is sought to it (SeekGE
// forward, SeekLT backward), unless it is past it already. It reports
// whether any source moved, and so whether the current entry may be
// another.
func (m *Iter) Skip(to Skipper) (moved bool) {
	kept := m.heap[:0] // filtered in place: kept never overtakes the loop
	for _, i := range m.heap {
		s := m.sources[i]
		if key, ok := to.SkipTo(i); ok && (base.Compare(s.Key(), key) < 0) == m.forward {
			moved = true
			if !m.seek(s, key) {
				if err := s.Error(); err != nil {
					m.err = err
					m.heap = m.heap[:0]
					return true
				}
				continue
			}
		}
		kept = append(kept, i)
	}
	m.heap = kept
	for i := len(m.heap)/2 - 1; i >= 0; i-- {
		m.down(i)
	}
	return moved
}

// seek moves s to key in the current direction: its first entry >= key
// forward, its last < key backward.
func (m *Iter) seek(s base.InternalIterator, key base.InternalKey) bool {
	if m.forward {
		return s.SeekGE(key)
	}
	return s.SeekLT(key)
}

// Next moves to the next entry in key order.
func (m *Iter) Next() bool {
	if !m.Valid() {
		return false
	}
	if !m.forward {
		return m.turn(true)
	}
	return m.advanceTop(base.InternalIterator.Next)
}

// Prev moves to the previous entry in key order.
func (m *Iter) Prev() bool {
	if !m.Valid() {
		return false
	}
	if m.forward {
		return m.turn(false)
	}
	return m.advanceTop(base.InternalIterator.Prev)
}

// turn changes direction. Every source other than the current one t sits on
// the wrong side of the current entry (K from t), so it is repositioned
// just past that entry in the new direction; entries equal to K order by
// source index (invariant 2). Source t itself steps once.
func (m *Iter) turn(forward bool) bool {
	t := m.heap[0]
	cur := m.sources[t].Key()
	m.turnKey = append(m.turnKey[:0], cur.UserKey...)
	key := base.InternalKey{UserKey: m.turnKey, Trailer: cur.Trailer}
	return m.position(forward, func(i int, s base.InternalIterator) bool {
		switch {
		case i == t && forward:
			return s.Next()
		case i == t:
			return s.Prev()
		case forward:
			// After (K, t): keys > K, or K itself from a later source.
			if s.SeekGE(key) && i < t && base.Compare(s.Key(), key) == 0 {
				return s.Next()
			}
			return s.Valid()
		default:
			// Before (K, t): keys < K, or K itself from an earlier source.
			if i < t && s.SeekGE(key) && base.Compare(s.Key(), key) == 0 {
				return true
			}
			return s.SeekLT(key)
		}
	})
}

func (m *Iter) advanceTop(step func(base.InternalIterator) bool) bool {
	top := m.heap[0]
	if step(m.sources[top]) {
		m.down(0)
		return true
	}
	if err := m.sources[top].Error(); err != nil {
		m.err = err
		m.heap = m.heap[:0]
		return false
	}
	last := len(m.heap) - 1
	m.heap[0] = m.heap[last]
	m.heap = m.heap[:last]
	if last > 0 {
		m.down(0)
	}
	return m.Valid()
}

// before reports whether source a's entry comes out before source b's in
// the current direction.
func (m *Iter) before(a, b int) bool {
	c := base.Compare(m.sources[a].Key(), m.sources[b].Key())
	if c == 0 {
		c = a - b
	}
	if !m.forward {
		c = -c
	}
	return c < 0
}

func (m *Iter) down(i int) {
	n := len(m.heap)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		c := l
		if r := l + 1; r < n && m.before(m.heap[r], m.heap[l]) {
			c = r
		}
		if !m.before(m.heap[c], m.heap[i]) {
			return
		}
		m.heap[i], m.heap[c] = m.heap[c], m.heap[i]
		i = c
	}
}

// Valid reports whether the iterator is on an entry.
func (m *Iter) Valid() bool { return len(m.heap) > 0 && m.err == nil }

// Key returns the current entry's internal key. REQUIRES: Valid().
func (m *Iter) Key() base.InternalKey { return m.sources[m.heap[0]].Key() }

// Value returns the current entry's value. REQUIRES: Valid().
func (m *Iter) Value() []byte { return m.sources[m.heap[0]].Value() }

// Error returns the error that stopped the iterator, if any.
func (m *Iter) Error() error { return m.err }

// Close closes every source and returns their errors joined.
func (m *Iter) Close() error {
	var errs []error // allocated only for an error
	if m.err != nil {
		errs = append(errs, m.err)
	}
	for _, s := range m.sources {
		if err := s.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	m.heap = m.heap[:0]
	return errors.Join(errs...)
}
