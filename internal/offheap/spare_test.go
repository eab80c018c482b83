//go:build linux && !race

package offheap

import (
	"runtime"
	"testing"
	"time"
	"unsafe"
)

// TestSpareChunkComesBackZeroed: a collected ChunkSize buffer's mapping is
// what the next New(ChunkSize) returns, cleared (invariant 2).
func TestSpareChunkComesBackZeroed(t *testing.T) {
	dirty := func() uintptr {
		m := New(ChunkSize).Bytes()
		for i := range m {
			m[i] = 0xff
		}
		return uintptr(unsafe.Pointer(&m[0]))
	}
	addr := dirty() // its Buffer is unreachable now
	onTop := func() bool {
		spare.Lock()
		defer spare.Unlock()
		k := len(spare.maps)
		return k > 0 && uintptr(unsafe.Pointer(&spare.maps[k-1][0])) == addr
	}
	deadline := time.Now().Add(5 * time.Second)
	for !onTop() {
		if time.Now().After(deadline) {
			t.Fatal("the collected chunk never became a spare")
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	b := New(ChunkSize)
	m := b.Bytes()
	if got := uintptr(unsafe.Pointer(&m[0])); got != addr {
		t.Fatalf("New(ChunkSize) mapped %#x afresh; the spare was %#x", got, addr)
	}
	for i, c := range m {
		if c != 0 {
			t.Fatalf("byte %d of a reused chunk is %#x, not zero", i, c)
		}
	}
	runtime.KeepAlive(b)
}
