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

// TestChunkMakesValuesForBuffersInUse: a chunk gives a buffer its value when
// first allocated and reuses a free one before carving another, so the
// values on the heap follow the buffers in use at once, not the chunk's
// thousand buffers of the smallest class.
func TestChunkMakesValuesForBuffersInUse(t *testing.T) {
	var bc bufClass // a class of the test's own: no other test's chunks
	const c = 0     // the smallest buffers, the most per chunk
	held := make([]*value, 3)
	for i := range held {
		held[i] = bc.alloc(c)
	}
	ch := held[0].chunk
	values := func() int {
		bc.mu.Lock()
		defer bc.mu.Unlock()
		return len(ch.free) + len(held)
	}
	if got := values(); got != len(held) || ch.n < 100 {
		t.Fatalf("a chunk of %d buffers made %d values for %d in use", ch.n, got, len(held))
	}
	for range 10 {
		freeBuffer(held[1])
		held[1] = bc.alloc(c)
		if held[1].chunk != ch {
			t.Fatalf("a freed buffer's chunk was passed over")
		}
	}
	if got := values(); got != len(held) {
		t.Fatalf("after frees and allocations with %d in use, the chunk holds %d values", len(held), got)
	}
	for _, v := range held {
		freeBuffer(v)
	}
	bc.mu.Lock()
	defer bc.mu.Unlock()
	if bc.spare != ch || len(bc.partial) != 0 {
		t.Fatalf("the wholly free chunk is not the class's spare (spare %p, chunk %p, %d partial)", bc.spare, ch, len(bc.partial))
	}
	spareBytes.Add(-int64(len(ch.mem.Bytes())))
	for _, v := range ch.free {
		v.net.Stop()
	}
	ch.mem.Release()
}
