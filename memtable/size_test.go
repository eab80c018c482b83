package memtable

import (
	"fmt"
	"testing"

	"github.com/monbandb/monban/internal/base"
)

// The engine rotates a memtable once ApproximateSize reaches
// Options.MemtableSize, so the size must follow what the entries hold from
// the first Add, whatever the arena's chunk size (issue 11: a 64 KiB chunk
// counted in full made every memtable of <= 64 KiB one entry long).

// TestApproximateSizeSmall: after n small Adds, ApproximateSize is at least
// the entries' bytes (keys, values, entryOverhead each) plus the filter, and
// at most 1/8 above that (the chunk tails the arena gave up on).
func TestApproximateSizeSmall(t *testing.T) {
	for _, n := range []int{1, 10, 100, 1000} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			m := New(Options{})
			var held int64
			for i := range n {
				key := fmt.Appendf(nil, "key%06d", i)
				value := fmt.Appendf(nil, "value-%d", i*i)
				if err := m.Add(base.SeqNum(i+1), base.KindSet, key, value); err != nil {
					t.Fatal(err)
				}
				held += int64(len(key)+len(value)) + entryOverhead
			}
			want := held + int64(m.filter.SizeBytes())
			if got := m.ApproximateSize(); got < want || got > want+want/8 {
				t.Fatalf("ApproximateSize = %d, want %d..%d (entries %d + filter %d)",
					got, want, want+want/8, held, m.filter.SizeBytes())
			}
		})
	}
}

// TestFillToSize: a memtable filled until ApproximateSize() >= size, as the
// engine fills one, holds about size / (key + value + entryOverhead)
// entries: never more (each entry costs at least that), and at least 3/4 of
// it (the filter and the arena's chunk tails take the rest).
func TestFillToSize(t *testing.T) {
	const keyLen, valueLen = 16, 100
	for _, size := range []int64{4 << 10, 64 << 10} {
		t.Run(fmt.Sprintf("size=%dKiB", size>>10), func(t *testing.T) {
			m := New(Options{})
			value := make([]byte, valueLen)
			var key []byte
			n := 0
			for ; m.ApproximateSize() < size; n++ {
				key = benchKey(key, uint64(n))
				if err := m.Add(base.SeqNum(n+1), base.KindSet, key, value); err != nil {
					t.Fatal(err)
				}
			}
			ideal := float64(size) / (keyLen + valueLen + entryOverhead)
			if float64(n) < 0.75*ideal || float64(n) > ideal+1 {
				t.Fatalf("%d entries at ApproximateSize %d, want %.0f..%.0f", n, m.ApproximateSize(), 0.75*ideal, ideal+1)
			}
		})
	}
}

// TestArenaChunks: chunks double from arenaFirstChunk to arenaChunk, a
// buffer larger than the current chunk size gets a chunk of its own size,
// and used exceeds the bytes handed out only by the tails given up on (less
// than one buffer per chunk).
func TestArenaChunks(t *testing.T) {
	var a arena
	var sizes []int
	var handed int64
	for handed < 1<<20 {
		b := a.alloc(100)
		handed += int64(len(b))
		if len(sizes) == 0 || sizes[len(sizes)-1] != a.last {
			sizes = append(sizes, a.last)
		}
	}
	want := []int{4 << 10, 8 << 10, 16 << 10, 32 << 10, 64 << 10}
	if fmt.Sprint(sizes) != fmt.Sprint(want) {
		t.Fatalf("chunk sizes %v, want %v", sizes, want)
	}
	chunks := int64(4 + (1<<20-60<<10)/(64<<10) + 1)
	if waste := a.used - handed; waste < 0 || waste >= chunks*100 {
		t.Fatalf("used %d for %d handed out: %d beyond, want < %d", a.used, handed, waste, chunks*100)
	}

	var b arena
	if buf := b.alloc(arenaLarge); len(buf) != arenaLarge || len(b.chunk) != 0 || b.used != arenaLarge {
		t.Fatalf("first alloc of %d: len %d, tail %d, used %d", arenaLarge, len(buf), len(b.chunk), b.used)
	}
}
