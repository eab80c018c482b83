package lsm

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/monbandb/monban/internal/offheap"
	"github.com/monbandb/monban/vfs"
)

// TestClosedDBFreesItsMemory: Open and Close of a DB, again and again in
// one process, leave no off-heap memory behind once the closed DBs are
// collected. The filters a table's metadata keeps for the delete proofs
// were once held for good: the budget their Buffers report to referred
// back to the DB, so a closed DB stayed reachable through its own
// filters' cleanups, and each cycle left its pinned filters mapped.
func TestClosedDBFreesItsMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("buffers are heap slices on " + runtime.GOOS)
	}
	fs := vfs.NewMem()
	opts := &Options{MemtableSize: 64 << 10, BlockCacheSize: 256 << 10}
	d := openMem(t, fs, opts)
	for i := range 20_000 {
		if err := d.Put(fmt.Appendf(nil, "k%06d", i*7919%20_000), make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	settle := func() int64 {
		for range 4 {
			runtime.GC()
			time.Sleep(20 * time.Millisecond)
		}
		return offheap.Stats().Mapped
	}
	var mapped []int64
	for range 6 {
		d := openMem(t, fs, opts)
		for i := 0; i < 20_000; i += 97 { // open every table, setting its metadata's filter
			mustGet(t, d, fmt.Sprintf("k%06d", i), string(make([]byte, 100)))
		}
		if d.Stats().MetaPinnedBytes == 0 {
			t.Fatal("nothing pinned: the test checks nothing")
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		mapped = append(mapped, settle())
	}
	if grew := mapped[len(mapped)-1] - mapped[1]; grew > 64<<10 {
		t.Fatalf("off-heap bytes mapped after each Close and collection: %v; %d more after four cycles", mapped, grew)
	}
}
