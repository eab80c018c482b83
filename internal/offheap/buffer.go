package offheap

import (
	"fmt"
	"runtime"
	"sync/atomic"
)

// Buffer owns n bytes of memory, inside or outside the Go heap, and counts
// its holders: New returns it with one reference, Ref adds one, and the
// last Release frees the memory (invariant 1).
type Buffer struct {
	b       []byte
	mapping []byte // the whole mapping, nil for a heap buffer
	refs    atomic.Int32
	net     runtime.Cleanup // the safety net, stopped by the last Release
	// freed holds what OnFree asked to run when the memory is freed; the
	// safety net's argument for a mapped Buffer, so it runs from there too.
	freed *onFree
}

// onFree is a Buffer's OnFree func, apart from the Buffer so that the
// safety net can hold it without keeping the Buffer reachable.
type onFree struct {
	mapping []byte
	f       func()
}

// New returns a zeroed buffer of n bytes, with one reference: the caller's.
func New(n int) *Buffer {
	buf := &Buffer{freed: &onFree{}}
	buf.refs.Store(1)
	if n < MinSize {
		buf.b = make([]byte, n)
		return buf
	}
	m, err := mapAnon(n)
	if err != nil {
		// Out of address space or mappings: the heap will do.
		buf.b = make([]byte, n)
		return buf
	}
	buf.b, buf.mapping, buf.freed.mapping = m[:n:n], m, m
	mapped.Add(int64(len(m)))
	buf.net = runtime.AddCleanup(buf, leaked, buf.freed)
	return buf
}

// OnFree makes f run once, when the memory is freed: at the last Release,
// or when the safety net frees a mapped Buffer its holders forgot (a heap
// Buffer's collection runs nothing). It is how a holder accounts for the
// memory for as long as it is really held, by whoever holds it last.
// REQUIRES: the caller holds the only reference, and calls it once.
func (b *Buffer) OnFree(f func()) { b.freed.f = f }

// Bytes returns the buffer's memory. It is valid only while the caller
// holds a reference (invariant 1).
func (b *Buffer) Bytes() []byte { return b.b }

// Ref adds a reference for a new holder and returns b. It panics if b has
// none left: its memory may already be another Buffer's.
func (b *Buffer) Ref() *Buffer {
	if b.refs.Add(1) <= 1 {
		panic("offheap: Ref of a released Buffer")
	}
	return b
}

// Release drops a reference; the last one frees the memory, at once: a
// ChunkSize mapping goes to the spare stack, any other back to the system
// (in race builds, both become inaccessible, invariant 3). Releasing more
// often than New and Ref gave references panics. Release of nil does
// nothing, so that holders of an optional buffer need no check.
func (b *Buffer) Release() {
	if b == nil {
		return
	}
	switch n := b.refs.Add(-1); {
	case n > 0:
		return
	case n < 0:
		panic(fmt.Sprintf("offheap: Buffer released %d times more than referenced", -n))
	}
	if b.mapping != nil { // a heap buffer's memory is the collector's
		b.net.Stop()
		mapped.Add(-int64(len(b.mapping)))
		free(b.mapping)
	}
	if f := b.freed.f; f != nil {
		f()
	}
}

// leaked is the safety net: the cleanup of a Buffer the collector found
// unreachable with references left, a holder's bug. It counts the Buffer
// and returns its memory.
func leaked(o *onFree) {
	leaks.Add(1)
	mapped.Add(-int64(len(o.mapping)))
	free(o.mapping)
	if o.f != nil {
		o.f()
	}
}

var (
	mapped atomic.Int64  // bytes of the mappings Buffers hold
	leaks  atomic.Uint64 // Buffers the safety net freed
)

// Counters are the package's memory counters.
type Counters struct {
	// Mapped is the bytes mapped outside the heap for Buffers not yet
	// freed. The spare stack's mappings (at most 4 MiB) are not counted.
	Mapped int64
	// Leaked counts Buffers the collector found unreachable before their
	// last Release, whose memory the safety net then freed: each is a
	// holder that forgot to release, and whose memory waited for a
	// garbage collection.
	Leaked uint64
}

// Stats returns the counters now.
func Stats() Counters { return Counters{Mapped: mapped.Load(), Leaked: leaks.Load()} }
