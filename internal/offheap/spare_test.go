//go:build linux && !race

package offheap

import (
	"syscall"
	"testing"
	"unsafe"
)

// TestSpareChunkComesBackZeroed: a spare ChunkSize mapping is what the
// next New(ChunkSize) returns, cleared (invariant 2). The test puts a
// dirty mapping on the spare stack itself rather than waiting for a
// freed Buffer's Release to, and every ChunkSize Buffer of this package's
// tests is released on the test's goroutine, so nothing can cover it.
func TestSpareChunkComesBackZeroed(t *testing.T) {
	m, err := mapAnon(ChunkSize)
	if err != nil {
		t.Fatal(err)
	}
	for i := range m {
		m[i] = 0xff
	}
	for s := spare.take(); s != nil; s = spare.take() { // make room: put refuses beyond maxSpare
		_ = syscall.Munmap(s)
	}
	if !spare.put(m) {
		t.Fatal("an empty spare stack refused a chunk")
	}
	b := New(ChunkSize)
	got := b.Bytes()
	if &got[0] != &m[0] {
		t.Fatalf("New(ChunkSize) mapped %p afresh; the spare was %p", unsafe.Pointer(&got[0]), unsafe.Pointer(&m[0]))
	}
	for i, c := range got {
		if c != 0 {
			t.Fatalf("byte %d of a reused chunk is %#x, not zero", i, c)
		}
	}
	b.Release()
}

// TestSpareStackIsBounded: at most maxSpare mappings wait; put refuses
// the next, which unmap then returns to the system.
func TestSpareStackIsBounded(t *testing.T) {
	var s spareStack
	chunk := make([]byte, ChunkSize)
	for i := range maxSpare {
		if !s.put(chunk) {
			t.Fatalf("put %d of %d refused", i+1, maxSpare)
		}
	}
	if s.put(chunk) {
		t.Fatalf("put %d accepted: the stack is bounded at %d", maxSpare+1, maxSpare)
	}
	for i := range maxSpare {
		if s.take() == nil {
			t.Fatalf("take %d found the stack empty", i+1)
		}
	}
	if s.take() != nil {
		t.Fatal("take of an empty stack returned a mapping")
	}
}
