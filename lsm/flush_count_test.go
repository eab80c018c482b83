package lsm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestFlushCountFollowsMemtableSize: 500 puts of an 8-byte key and a
// 100-byte value, then Flush, write about entries*entrySize/MemtableSize
// memtables: 13.2 at 4 KiB, 0.8 at 64 KiB (plus the last, partial one
// Flush writes).
//
// Bounds: from expected/2.5 to expected*2.5 + 1. The memtable's size
// estimate charges each entry more than its 108 user bytes (the trailer
// and a share of the skiplist node, memtable's entryOverhead of 72: about
// 1.75x), and rotation happens at the first write past the limit; 2.5x
// admits both. What the bounds catch: a flush per write or per batch (500
// flushes), none until Flush (1 at 4 KiB), or a size in the wrong unit
// (KiB taken as bytes: 500; bytes as KiB: 1). That is 5..33 flushes at
// 4 KiB and 1..3 at 64 KiB (measured: 24 and 2).
func TestFlushCountFollowsMemtableSize(t *testing.T) {
	const entries, keySize, valueSize = 500, 8, 100
	for _, size := range []int64{4 << 10, 64 << 10} {
		t.Run(fmt.Sprintf("MemtableSize=%d", size), func(t *testing.T) {
			d := openMem(t, vfs.NewMem(), &Options{
				MemtableSize: size, L0CompactionThreshold: 1000, L0SlowdownWritesThreshold: 1000, L0StopWritesThreshold: 1000,
			})
			defer d.Close()
			value := strings.Repeat("v", valueSize)
			for i := range entries {
				if err := d.Put(fmt.Appendf(nil, "k%07d", i), []byte(value)); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
			expected := float64(entries*(keySize+valueSize)) / float64(size)
			lo, hi := max(1, int(expected/2.5)), int(expected*2.5)+1
			st := d.Stats()
			t.Logf("%d flushes, %d L0 tables; expected about %.1f, bounds %d..%d", st.Flushes, st.Levels[0].Files, expected, lo, hi)
			if st.Flushes < uint64(lo) || st.Flushes > uint64(hi) {
				t.Fatalf("%d flushes of %d puts of %d bytes with a %d-byte memtable; want %d..%d (about %.1f)",
					st.Flushes, entries, keySize+valueSize, size, lo, hi, expected)
			}
		})
	}
}
