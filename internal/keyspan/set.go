package keyspan

import (
	"sync"
	"sync/atomic"
	"unsafe"
)

// Set is the memtable's collection of range tombstones: written by one
// writer at a time, read by any number of goroutines through Spans.
//
// Each Add publishes a new immutable version through one atomic pointer;
// the version fragments its tombstones the first time a reader asks, and
// keeps the result for every later reader. A reader therefore sees either
// no version (the Set is empty: one atomic load, and done), or a version
// whose Spans are fully built before any reader gets them (sync.Once).
// The zero Set is empty and ready to use.
type Set struct {
	cur atomic.Pointer[setVersion]
}

type setVersion struct {
	// tombstones is every tombstone added so far, oldest first. Versions
	// share one backing array: Add only appends past the length of every
	// published version, so no element a reader can see is ever written.
	tombstones []Tombstone
	size       int64

	once  sync.Once
	spans Spans
}

// tombstoneOverhead is what a Tombstone costs beyond its key bytes: its two
// slice headers and sequence number in the Set's array.
const tombstoneOverhead = int64(unsafe.Sizeof(Tombstone{}))

// Add adds t, copying its keys. Calls must be serialised (the memtable's
// write lock does it); they may run concurrently with readers.
func (s *Set) Add(t Tombstone) {
	keys := make([]byte, 0, len(t.Start)+len(t.End))
	keys = append(append(keys, t.Start...), t.End...)
	t.Start, t.End = keys[:len(t.Start):len(t.Start)], keys[len(t.Start):]

	next := &setVersion{size: int64(len(keys)) + tombstoneOverhead}
	if old := s.cur.Load(); old != nil {
		next.tombstones, next.size = old.tombstones, old.size+next.size
	}
	next.tombstones = append(next.tombstones, t)
	s.cur.Store(next)
}

// Spans returns the fragmented view of every tombstone added before the
// call (and possibly of some added concurrently). It is immutable and
// stays valid for as long as the caller holds it. Fragmenting happens at
// most once per Add, in the first reader to ask after it.
func (s *Set) Spans() Spans {
	v := s.cur.Load()
	if v == nil {
		return Spans{}
	}
	v.once.Do(func() { v.spans = Fragment(v.tombstones) })
	return v.spans
}

// Len returns the number of tombstones added.
func (s *Set) Len() int {
	if v := s.cur.Load(); v != nil {
		return len(v.tombstones)
	}
	return 0
}

// Size returns the approximate bytes the added tombstones hold: their keys
// and tombstoneOverhead each. It does not count the fragmented view, which
// readers build on demand (and which can be quadratic in Len; Fragment).
func (s *Set) Size() int64 {
	if v := s.cur.Load(); v != nil {
		return v.size
	}
	return 0
}

// Tombstones returns every tombstone added before the call, oldest first,
// as added (not fragmented): what a checkpoint writes back as WAL records.
// The slice and its keys are immutable; the caller must not modify them.
func (s *Set) Tombstones() []Tombstone {
	if v := s.cur.Load(); v != nil {
		return v.tombstones
	}
	return nil
}
