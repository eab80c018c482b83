// Package offheap allocates long-lived byte buffers outside the Go heap:
// the memory an open table pins for its whole life, its filter and index
// blocks. The collector lets the heap grow to twice what is live before it
// collects (GOGC 100), so every pinned byte on the heap costs two bytes of
// resident memory; at 4M keys those blocks are most of what a DB keeps
// live while it fills (docs/design.md, "Memory").
//
// A Buffer's memory goes back to the system once the Buffer is unreachable
// (runtime.AddCleanup), so it lives as long as a heap slice would, with one
// difference: the collector does not count a slice of that memory as a
// reference to the Buffer. Hence the invariants:
//
//  1. Whoever uses a slice of a Buffer's memory keeps the *Buffer
//     reachable meanwhile: a type that holds such a slice holds the
//     *Buffer beside it, and each of its methods that reads the slice ends
//     with runtime.KeepAlive of the *Buffer. No slice of the memory is
//     stored where its *Buffer is not.
//  2. The memory neither moves nor changes size, and starts zeroed, also
//     when it is a collected Buffer's, reused (ChunkSize).
//  3. In race builds (how the tests run) freed memory is made
//     inaccessible and its addresses are never reused, so a slice used
//     after its Buffer was collected faults at once instead of reading
//     whatever was mapped there next.
//  4. Buffers smaller than MinSize, and all buffers where the system has no
//     anonymous mappings in this package (every OS but Linux), are
//     ordinary heap slices: a mapping costs whole pages and a system call.
package offheap

import "runtime"

// MinSize is the smallest buffer New maps outside the heap; smaller ones
// would waste too much of their last page (at most a fifth, from 16 KiB).
const MinSize = 16 << 10

// ChunkSize is the size of buffer whose memory is kept for reuse when its
// Buffer is collected, rather than returned to the system at once: a
// memtable arena's chunk.
const ChunkSize = 64 << 10

// Buffer owns n bytes of memory, inside or outside the Go heap.
type Buffer struct {
	b []byte
}

// New returns a zeroed buffer of n bytes.
func New(n int) *Buffer {
	if n < MinSize {
		return &Buffer{b: make([]byte, n)}
	}
	m, err := mapAnon(n)
	if err != nil {
		// Out of address space or mappings: the heap will do.
		return &Buffer{b: make([]byte, n)}
	}
	buf := &Buffer{b: m[:n:n]}
	runtime.AddCleanup(buf, unmap, m)
	return buf
}

// Bytes returns the buffer's memory. It is valid only while b is reachable
// (invariant 1).
func (b *Buffer) Bytes() []byte { return b.b }
