package compaction

import (
	"bytes"
	"fmt"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/keyspan"
)

// DropReason says why an entry did not make it into a flush or
// compaction's output.
type DropReason uint8

const (
	// DropShadowed: a newer version of the key, or a range tombstone over
	// it, in the same snapshot stripe hides the entry from every reader
	// and snapshot.
	DropShadowed DropReason = iota
	// DropBottom: a tombstone with nothing older below it, because no
	// table below its output covers its key: the bottom of the tree, for
	// that key.
	DropBottom
	// DropFilterProof: a tombstone with nothing older below it, because the
	// in-memory filters of every older table whose range covers the key say
	// the key is absent.
	DropFilterProof
	numDropReasons
)

func (r DropReason) String() string {
	return [...]string{"shadowed", "bottom level", "filter proof"}[r]
}

// Drops counts dropped entries by reason; Drops[DropShadowed] counts
// shadowed entries of both kinds, the others tombstones.
type Drops [numDropReasons]uint64

func (d Drops) String() string {
	return fmt.Sprintf("%d shadowed, %d tombstones at the bottom, %d by filter proof", d[DropShadowed], d[DropBottom], d[DropFilterProof])
}

// Elider decides whether a tombstone that is the oldest surviving version
// of ukey in the output may go: it reports whether nothing older than the
// inputs can hold ukey, and the reason (DropBottom or DropFilterProof). It
// must not read disk.
type Elider func(ukey []byte) (bool, DropReason)

// Iter turns a merged, sorted stream of internal entries into what a flush
// or compaction writes. Per user key, versions come newest first; the
// snapshots (ascending) cut them into stripes, and within a stripe only the
// newest version is visible to anyone, so only it is kept (invariant 1).
// The oldest kept version, if it is a tombstone that hides nothing (the
// elider's proof), is dropped too (invariant 2).
type Iter struct {
	input     base.InternalIterator
	snapshots []base.SeqNum
	elide     Elider

	// pending holds the kept versions of the current user key, newest first.
	// The input moves on before they are emitted, so the user key is copied
	// to ukey and the values to vals, buffers reused from key to key: the
	// merge allocates nothing per entry once they have grown.
	pending []entry
	pos     int
	ukey    []byte
	vals    []byte
	drops   Drops
	err     error
	// rangeDels are the inputs' range tombstones (rangedel.go).
	rangeDels keyspan.Spans
}

type entry struct {
	trailer          uint64
	valStart, valEnd int // in vals
}

// NewIter returns an iterator over what survives of input. snapshots must
// be sorted ascending. elide may be nil: tombstones are then kept.
func NewIter(input base.InternalIterator, snapshots []base.SeqNum, elide Elider) *Iter {
	return &Iter{input: input, snapshots: snapshots, elide: elide}
}

// First positions the iterator on the first surviving entry.
func (c *Iter) First() bool {
	c.pending, c.pos = c.pending[:0], 0
	if !c.input.First() {
		c.err = c.input.Error()
		return false
	}
	return c.fill()
}

// Next moves to the next surviving entry.
func (c *Iter) Next() bool {
	if c.pos+1 < len(c.pending) {
		c.pos++
		return true
	}
	c.pending, c.pos = c.pending[:0], 0
	if !c.input.Valid() {
		return false
	}
	return c.fill()
}

// fill gathers the surviving versions of the next user key that has any,
// leaving the input on the first entry of the following key.
func (c *Iter) fill() bool {
	for c.input.Valid() && len(c.pending) == 0 {
		c.ukey = append(c.ukey[:0], c.input.Key().UserKey...)
		c.vals = c.vals[:0]
		lastStripe := -1
		for ; c.input.Valid() && bytes.Equal(c.input.Key().UserKey, c.ukey); c.input.Next() {
			k := c.input.Key()
			s := c.stripe(k.Seq())
			if s == lastStripe {
				c.drops[DropShadowed]++
				continue
			}
			lastStripe = s
			if c.rangeDeleted(k) {
				c.drops[DropShadowed]++
				continue
			}
			start := len(c.vals)
			c.vals = append(c.vals, c.input.Value()...)
			c.pending = append(c.pending, entry{trailer: k.Trailer, valStart: start, valEnd: len(c.vals)})
		}
		if err := c.input.Error(); err != nil {
			c.err = err
			c.pending = c.pending[:0]
			return false
		}
		c.elideOldestTombstones(c.ukey)
	}
	return len(c.pending) > 0
}

// elideOldestTombstones drops tombstones from the old end of pending while
// they hide nothing: the elider proves nothing older exists below, and every
// older version in the output has already gone.
func (c *Iter) elideOldestTombstones(ukey []byte) {
	n := len(c.pending)
	if n == 0 || base.Kind(c.pending[n-1].trailer) != base.KindDelete || c.elide == nil {
		return
	}
	ok, reason := c.elide(ukey)
	for ok && n > 0 && base.Kind(c.pending[n-1].trailer) == base.KindDelete {
		c.drops[reason]++
		n--
	}
	c.pending = c.pending[:n]
}

// stripe returns the index of the snapshot stripe holding seq: the number
// of snapshots below seq. Versions in one stripe are seen by the same
// snapshots, so only the newest of them is ever read.
func (c *Iter) stripe(seq base.SeqNum) int { return stripeOf(c.snapshots, seq) }

// Valid reports whether the iterator is on an entry.
func (c *Iter) Valid() bool { return c.pos < len(c.pending) }

// Key returns the current entry's key; it stays valid until the next call
// to Next.
func (c *Iter) Key() base.InternalKey {
	return base.InternalKey{UserKey: c.ukey, Trailer: c.pending[c.pos].trailer}
}

// Value returns the current entry's value, valid until the next call to
// Next.
func (c *Iter) Value() []byte {
	e := c.pending[c.pos]
	return c.vals[e.valStart:e.valEnd:e.valEnd]
}

// Error returns the input's error, if it stopped the iteration.
func (c *Iter) Error() error { return c.err }

// Close closes the input.
func (c *Iter) Close() error { return c.input.Close() }

// Drops returns the entries dropped so far, by reason.
func (c *Iter) Drops() Drops { return c.drops }
