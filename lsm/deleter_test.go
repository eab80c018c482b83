package lsm

import (
	"errors"
	"fmt"
	"sync"
	"syscall"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestDeleterSyncDirFailureSurfaces fails the directory sync that makes
// the deleter's unlinks durable. Like every failed directory sync, it
// must be reported (docs/reliability.md, TestFaults: the DB turns
// read-only with a sticky error), and the tables whose unlinks it did
// not make durable must not be reported deleted: a crash may bring them
// back. Before, the deleter logged the failure and went on, so TestFaults'
// syncdir kind failed whenever its fault landed on the deleter's sync.
func TestDeleterSyncDirFailureSurfaces(t *testing.T) {
	ffs := vfs.NewFault(vfs.NewMem())
	var mu sync.Mutex
	var deleted []uint64
	opts := &Options{FS: ffs, L0CompactionThreshold: 100, EventListener: &EventListener{
		TableDeleted: func(info TableFileInfo) {
			mu.Lock()
			deleted = append(deleted, info.FileNum)
			mu.Unlock()
		},
	}}
	d, err := Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := range 3 {
		if err := d.Put(fmt.Appendf(nil, "k%d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	// An iterator holds the version whose tables the compaction makes
	// obsolete, so the deleter removes them only when it closes.
	it := d.NewIter(nil)
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	d.waitIdle()
	ffs.Inject(vfs.Fault{Op: vfs.OpSyncDir, Nth: 1, Err: syscall.EIO})
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	d.deleteNow(false)
	if ffs.Injected() != 1 {
		t.Fatalf("the deleter made %d failed directory syncs, want 1", ffs.Injected())
	}
	if err := d.Stats().BackgroundError; !errors.Is(err, syscall.EIO) {
		t.Errorf("after the deleter's directory sync failed, BackgroundError = %v, want the EIO", err)
	}
	if err := d.Put([]byte("after"), []byte("v")); !errors.Is(err, syscall.EIO) {
		t.Errorf("a write after the failed directory sync: %v, want the EIO", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(deleted) != 0 {
		t.Errorf("tables %v reported deleted, though their unlinks were not made durable", deleted)
	}
}
