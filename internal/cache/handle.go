package cache

import (
	"fmt"
	"math/bits"
	"runtime"
	"sync/atomic"
)

// value is one block buffer and its reference count: one reference per
// live Handle, plus the cache's own while the block is cached.
type value struct {
	buf  []byte       // len: the block; cap: its size class
	refs atomic.Int32 // 0 only while the buffer is free
	// gen counts the times the buffer was freed; a Handle remembers the
	// generation it was made in, so a copy used after the buffer was freed
	// is detected, whether or not it was reused since (invariant 6).
	gen atomic.Uint32
	// cached is set while a shard holds the cache's reference: the count
	// must not reach zero then, whoever releases too often.
	cached atomic.Bool
	// chunk is where buf was carved from (nil for a buffer too large for
	// every class, left to the collector), and net the safety net that
	// gives buf back to it if the value is collected while allocated.
	chunk *bufChunk
	net   runtime.Cleanup
	// obj, charge and free are set for a value of the cache's user
	// (NewValue) instead of a buffer: buf is nil, and free is called
	// once, by the last reference.
	obj    any
	charge int64
	free   func()
}

// Handle is one reference to a block: the block stays valid and unchanged
// until the handle is released, even if the cache evicts it meanwhile. A
// Handle is a small value, passed and stored without allocating; copies
// share the one reference, so exactly one of them is released. The zero
// Handle holds nothing.
type Handle struct {
	v   *value
	gen uint32
}

// Size classes of the buffers: sixteen per power of two from 64
// bytes to 64 MiB (the sstable package's largest block), so a buffer
// wastes at most 1/16 of its size (a block cut at 4096 bytes plus one
// entry takes 4352); larger buffers are allocated exactly and left to the
// garbage collector. Class c holds (17+c%16) << (c/16+2) bytes: 68, 72,
// ..., 128, 136, ..., 256, 272, ...
const (
	stepBits     = 4 // 1<<stepBits classes per power of two
	minClassBits = 6 // buffers of up to 2^6 bytes take class 0
	maxClassBits = 26
	numClasses   = (maxClassBits - minClassBits) << stepBits
)

// sizeClass returns the smallest class holding n bytes, or -1 when n is
// larger than every class.
func sizeClass(n int) int {
	if n <= 1<<minClassBits {
		return 0
	}
	if n > 1<<maxClassBits {
		return -1
	}
	k := bits.Len(uint(n - 1)) // 2^(k-1) < n <= 2^k, in steps of 2^(k-1-stepBits)
	return (k-minClassBits-1)<<stepBits + (n-1-1<<(k-1))>>(k-1-stepBits)
}

func classSize(c int) int {
	const steps = 1 << stepBits
	return (steps + 1 + c%steps) << (c/steps + minClassBits - stepBits)
}

// Alloc returns a handle on a buffer of n bytes, outside the Go heap
// (buffers.go). Its bytes are undefined; the caller may write them until
// it shares the block (Set, or another reader seeing it).
func Alloc(n int) Handle {
	var v *value
	if c := sizeClass(n); c >= 0 {
		v = allocBuffer(c)
	} else {
		v = &value{buf: make([]byte, n)}
	}
	v.buf = v.buf[:n]
	v.refs.Store(1)
	return Handle{v: v, gen: v.gen.Load()}
}

// NewValue returns a handle on obj, something of the caller's that holds
// charge bytes, to cache under a key like a block: the cache charges it
// charge (plus EntryOverhead), Value returns it, and the last reference
// to go calls free instead of pooling a buffer. obj is immutable while
// shared (invariant 2). It is how a table keeps its verified index and
// filter, which live outside the heap, within the cache's budget once the
// table is closed.
func NewValue(obj any, charge int, free func()) Handle {
	v := &value{obj: obj, charge: int64(charge), free: free}
	v.refs.Store(1)
	return Handle{v: v}
}

// Value returns the obj of a handle from NewValue (nil for a block), valid
// until Release. It panics on a handle whose value has been freed
// (invariant 6).
func (h *Handle) Value() any {
	if h.v.gen.Load() != h.gen {
		panic("cache: value used after its handle was released")
	}
	return h.v.obj
}

// Block returns the handle's block, valid until Release. It panics on a
// handle whose buffer has been freed (invariant 6).
func (h *Handle) Block() []byte {
	if h.v.gen.Load() != h.gen {
		panic("cache: block used after its handle was released")
	}
	return h.v.buf
}

// Truncate shortens the block to its first n bytes. REQUIRES: h is the
// only reference (the block is not shared yet), n <= len(h.Block()).
func (h *Handle) Truncate(n int) {
	if invariants && h.v.refs.Load() != 1 {
		panic("cache: Truncate of a shared block")
	}
	h.v.buf = h.v.buf[:n]
}

// Release drops h's reference and clears h, so releasing the same variable
// twice is harmless; releasing the zero Handle does nothing. The last
// reference returns the buffer to its class.
func (h *Handle) Release() {
	v := h.v
	if v == nil {
		return
	}
	if v.gen.Load() != h.gen {
		panic("cache: handle released after its block was freed")
	}
	*h = Handle{}
	v.unref()
}

// unref drops one reference, freeing the buffer with the last one.
func (v *value) unref() {
	switch n := v.refs.Add(-1); {
	case n > 0:
		return
	case n < 0 || v.cached.Load():
		panic(fmt.Sprintf("cache: block released more often than acquired (%d references left)", n))
	}
	if v.free != nil {
		v.gen.Add(1)
		v.free()
		return
	}
	if invariants {
		// A reader still holding a slice of the block reads this pattern
		// (and the race detector reports the write) instead of another
		// block's bytes.
		b := v.buf[:cap(v.buf)]
		for i := range b {
			b[i] = poison
		}
	}
	v.gen.Add(1)
	if v.chunk != nil {
		freeBuffer(v)
	}
}

// poison fills freed buffers in invariants builds.
const poison = 0xdb
