//go:build race && linux

package offheap

import (
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

var sink byte

// faults reports whether reading b[0] faults.
func faults(b []byte) (faulted bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() { faulted = recover() != nil }()
	sink = b[0]
	return false
}

// TestReleasedMemoryFaults checks invariant 3: in race builds, a slice
// used after its Buffer's last Release faults at once, also for a chunk
// the spare stack would have kept.
func TestReleasedMemoryFaults(t *testing.T) {
	for _, n := range []int{2 * MinSize, ChunkSize} {
		b := New(n)
		stale := b.Bytes()
		b.Ref()
		b.Release()
		if faults(stale) {
			t.Fatalf("New(%d): reading the memory with a reference left faulted", n)
		}
		b.Release()
		if !faults(stale) {
			t.Fatalf("New(%d): reading the memory after the last Release did not fault", n)
		}
	}
}

// TestCollectedMemoryFaults: the safety net frees the same way, so a slice
// kept past its Buffer's collection faults too.
func TestCollectedMemoryFaults(t *testing.T) {
	stale := New(2 * MinSize).Bytes() // the Buffer is unreachable at once
	deadline := time.Now().Add(5 * time.Second)
	for !faults(stale) {
		if time.Now().After(deadline) {
			t.Fatal("reading the memory of a collected Buffer did not fault")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
}
