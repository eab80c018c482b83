package filter

import (
	"bytes"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/monbandb/monban/internal/offheap"
)

// TestBuilderChunksMatchOneSlice: a builder whose hashes span many chunks,
// with repeats on chunk boundaries, encodes exactly what the encoder makes
// of the same distinct hashes in one slice, and gives every chunk's memory
// back at Finish.
func TestBuilderChunksMatchOneSlice(t *testing.T) {
	before := offheap.Stats().Mapped
	for _, n := range []int{0, 1, firstChunk - 1, firstChunk, firstChunk + 1, 3*maxChunk + 17} {
		rng := rand.New(rand.NewPCG(uint64(n), 1))
		b := NewCacheLineBuilder(10)
		var want []uint64
		for range n {
			h := rng.Uint64()
			b.AddHash(h)
			b.AddHash(h) // a repeat, also where a chunk just filled up
			want = append(want, h)
		}
		if b.Len() != n {
			t.Fatalf("n=%d: Len %d", n, b.Len())
		}
		if n > maxChunk && offheap.Stats().Mapped == before && runtime.GOOS == "linux" {
			t.Fatalf("n=%d: %d hashes held on the heap", n, n)
		}
		lines := uint64((n*10 + lineBits - 1) / lineBits)
		if got, exp := b.Finish(nil), appendCacheLine(nil, lines, cacheLineProbesFor(10), want); !bytes.Equal(got, exp) {
			t.Fatalf("n=%d: the chunked builder encodes another filter than one slice of its hashes", n)
		}
		if b.Len() != 0 {
			t.Fatalf("n=%d: Len %d after Finish", n, b.Len())
		}
		if left := offheap.Stats().Mapped - before; left != 0 {
			t.Fatalf("n=%d: %d bytes still mapped after Finish", n, left)
		}
	}
}
