package lsm

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/monbandb/monban/internal/offheap"
	"github.com/monbandb/monban/vfs"
)

// TestCloseFreesWithoutGC: Close returns the off-heap memory the DB held
// (pinned indexes and filters, the filters its table metadata keeps for
// the delete proofs, memtable arenas, cached blocks) without waiting for
// the Go collector, which does not know that memory exists: a process
// that reopens a large DB must not hold two DBs' filters until a
// collection happens to run. The collector is off throughout, so only
// releases can bring the bytes back.
func TestCloseFreesWithoutGC(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("buffers are heap slices on " + runtime.GOOS)
	}
	fs := vfs.NewMem()
	opts := &Options{MemtableSize: 256 << 10, BlockCacheSize: 256 << 10}
	const n = 300_000
	d := openMem(t, fs, opts)
	var b Batch
	for i := range n {
		b.Put(fmt.Appendf(nil, "k%07d", i*7919%n), make([]byte, 100))
		if b.Len() == 1000 {
			if err := d.Write(&b); err != nil {
				t.Fatal(err)
			}
			b.Reset()
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.GC()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	before := offheap.Stats().Mapped

	d = openMem(t, fs, opts)
	for i := 0; i < n; i += 97 { // open every table, setting its metadata's filter
		mustGet(t, d, fmt.Sprintf("k%07d", i), string(make([]byte, 100)))
	}
	if err := d.Delete([]byte("k0000001")); err != nil { // a delete proof probes the metadata's filters
		t.Fatal(err)
	}
	open := offheap.Stats().Mapped
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	after := offheap.Stats().Mapped
	// The block cache keeps a spare chunk per buffer size class for the
	// process (internal/cache), a few 64 KiB; the filters alone are more
	// than 300 KiB.
	if held := after - before; held > 256<<10 {
		t.Fatalf("off-heap bytes mapped: %d before Open, %d open, %d after Close: %d still held", before, open, after, held)
	}
}

// TestCloseFreesTheMemtables: Close let go of the read state's references
// on the memtables, not of the DB's own on those still in its level (the
// active one, and any a flush had not taken), so their arenas stayed
// mapped until the collector found the memtables (a black-box attack:
// 3 MiB of a 3 MiB memtable still mapped after Close).
func TestCloseFreesTheMemtables(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("buffers are heap slices on " + runtime.GOOS)
	}
	runtime.GC()
	runtime.GC()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	before := offheap.Stats().Mapped
	d := openMem(t, vfs.NewMem(), &Options{MemtableSize: 8 << 20})
	var b Batch
	for i := range 30_000 {
		b.Put(fmt.Appendf(nil, "k%07d", i), make([]byte, 100))
		if b.Len() == 1000 {
			if err := d.Write(&b); err != nil {
				t.Fatal(err)
			}
			b.Reset()
		}
	}
	open := offheap.Stats().Mapped
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	// As above: the block cache's spare chunks stay for the process.
	if held := offheap.Stats().Mapped - before; held > 256<<10 {
		t.Fatalf("off-heap bytes mapped: %d before Open, %d open, %d still held after Close", before, open, held)
	}
}
