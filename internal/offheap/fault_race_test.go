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

// TestFreedMemoryFaults checks invariant 3: in race builds, a slice kept
// past its Buffer's collection faults instead of reading other memory.
func TestFreedMemoryFaults(t *testing.T) {
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
