package cache

import (
	"runtime"
	"testing"
	"time"

	"github.com/monbandb/monban/internal/offheap"
)

// TestBuffersUnmappedWhenFree checks that block buffers are mapped outside
// the heap and that the mappings go back once every buffer of them is
// free, the class's spare chunk aside: a cache that was full and is
// emptied must not keep its memory.
func TestBuffersUnmappedWhenFree(t *testing.T) {
	before := offheap.Stats().Mapped - SpareBytes()
	const n = 2000 // 2000 blocks of 4 KiB: about 130 chunks
	hs := make([]Handle, n)
	for i := range hs {
		hs[i] = Alloc(4096)
		hs[i].Block()[0] = byte(i)
	}
	held := offheap.Stats().Mapped - before
	if runtime.GOOS == "linux" && held < n*4096 {
		t.Fatalf("%d buffers of 4 KiB hold %d mapped bytes, want them outside the heap", n, held)
	}
	for i := range hs {
		if hs[i].Block()[0] != byte(i) {
			t.Fatalf("buffer %d overwritten by another's write", i)
		}
		hs[i].Release()
	}
	if left := offheap.Stats().Mapped - SpareBytes() - before; left != 0 {
		t.Fatalf("%d bytes still mapped after every buffer was released", left)
	}
}

// TestLeakedBufferComesBack checks the safety net: a buffer whose handle
// is dropped without Release goes back to its chunk when the collector
// finds it, and is counted, so the chunk can empty and be unmapped.
func TestLeakedBufferComesBack(t *testing.T) {
	before, mapped := Leaked(), offheap.Stats().Mapped-SpareBytes()
	func() {
		hs := make([]Handle, 100)
		for i := range hs {
			hs[i] = Alloc(1000)
		}
		// dropped here, unreleased
	}()
	deadline := time.Now().Add(10 * time.Second)
	for Leaked()-before < 100 {
		if time.Now().After(deadline) {
			t.Fatalf("%d of 100 forgotten buffers reclaimed", Leaked()-before)
		}
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if left := offheap.Stats().Mapped - SpareBytes() - mapped; left != 0 {
		t.Fatalf("%d bytes still mapped after the forgotten buffers came back", left)
	}
	h := Alloc(1000) // the class still works after the reclaim
	h.Release()
}
