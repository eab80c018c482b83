package lsm

import (
	"fmt"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/vfs"
)

// TestWALsArePreallocated: on the OS file system every WAL a DB writes
// holds, from its creation, the storage of a full memtable's log, in one
// request (preallocateWAL), the recycled ones too; and a WAL the DB has
// closed holds no more than its records need, so a DB at rest keeps none
// of that space.
func TestWALsArePreallocated(t *testing.T) {
	const memtable = 1 << 20
	dir := t.TempDir()
	probe, err := vfs.Default.Create(filepath.Join(dir, "probe"))
	if err != nil {
		t.Fatal(err)
	}
	err = probe.(vfs.Preallocator).Preallocate(memtable)
	probe.Close()
	if err != nil {
		t.Skipf("no preallocation on this file system: %v", err)
	}
	var ev walEvents
	d, err := Open(filepath.Join(dir, "db"), &Options{MemtableSize: memtable, EventListener: ev.listener()})
	if err != nil {
		t.Fatal(err)
	}
	allocated := func(num uint64) (bytes, rounded int64) {
		t.Helper()
		var st syscall.Stat_t
		if err := syscall.Stat(filepath.Join(dir, "db", manifest.MakeFilename(manifest.KindLog, num)), &st); err != nil {
			t.Fatal(err)
		}
		bs := int64(st.Blksize) // int32 on 386
		return st.Blocks * 512, (st.Size + bs - 1) / bs * bs
	}
	checkActive := func() {
		t.Helper()
		d.mu.Lock()
		num := d.mu.walNum
		d.mu.Unlock()
		if got, _ := allocated(num); got < memtable {
			t.Fatalf("WAL %d holds %d bytes of storage, want at least a memtable's %d", num, got, memtable)
		}
	}
	checkActive()
	value := make([]byte, 100)
	for i := range 40000 {
		if err := d.Put(fmt.Appendf(nil, "k%06d", i), value); err != nil {
			t.Fatal(err)
		}
		if i%5000 == 0 {
			checkActive()
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	checkActive()
	ev.mu.Lock()
	created, recycled := len(ev.created), 0
	for _, c := range ev.created {
		if c.RecycledFrom != 0 {
			recycled++
		}
	}
	ev.mu.Unlock()
	if created < 4 || recycled == 0 {
		t.Fatalf("%d WALs created, %d of them recycled: too few to test", created, recycled)
	}
	d.mu.Lock()
	num := d.mu.walNum
	d.mu.Unlock()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if got, rounded := allocated(num); got > rounded {
		t.Fatalf("closed WAL %d: %d bytes of storage, its length needs %d", num, got, rounded)
	}
}
