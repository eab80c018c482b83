package lsm

import (
	"fmt"
	"runtime/debug"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestFlushedMemtablesFreedWithoutGC: a flushed memtable's off-heap arena
// is unmapped when the last read state that reaches it lets go, not when
// the collector next runs (which it may not do for a long time in a
// process that allocates little on the heap: the collector does not see
// the arenas). With the collector off, mapped bytes stay within a few
// memtables while a fill flushes eighty.
func TestFlushedMemtablesFreedWithoutGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	const memtableSize = 256 << 10
	d := openMem(t, vfs.NewMem(), &Options{MemtableSize: memtableSize, BlockCacheSize: 1 << 20})
	defer d.Close()
	base := d.Stats().OffHeapMapped
	value := make([]byte, 1000)
	var peak int64
	for i := range 20_000 {
		if err := d.Put(fmt.Appendf(nil, "k%08d", i*7919%20_000), value); err != nil {
			t.Fatal(err)
		}
		if i%100 == 0 {
			peak = max(peak, d.Stats().OffHeapMapped-base)
		}
	}
	s := d.Stats()
	// Up to three memtables (the active one and two queued), their last
	// chunks, the block cache, the pinned meta, and a compaction's and a
	// table writer's buffers.
	bound := 4*memtableSize + 1<<20 + s.MetaPinnedBytes + 2<<20
	if s.Flushes < 50 || peak > bound {
		t.Fatalf("%d flushes; off-heap mapped peaked %d bytes above the start, want at most %d", s.Flushes, peak, bound)
	}
}
