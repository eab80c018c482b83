package lsm

import (
	"errors"
	"fmt"
	"syscall"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestFaultRotationSyncIsSticky: without Options.Sync, the first WAL sync
// is the one a memtable rotation does before starting the next WAL. When
// it fails, the WAL writer refuses all further work (after a failed fsync
// the kernel may have dropped the dirty pages), so every later write
// fails: the DB is read-only, and must say so — Stats.BackgroundError set,
// every write returning it, a Delete the filters prove unnecessary too —
// rather than fail each write with a rotation error while claiming health.
// A reopen on the healed disk has every acknowledged write.
func TestFaultRotationSyncIsSticky(t *testing.T) {
	ff := vfs.NewFault(vfs.NewMem())
	d := openMem(t, ff, &Options{MemtableSize: 4 << 10})
	ff.Inject(vfs.Fault{Op: vfs.OpSync, Match: vfs.MatchBase("*.log"), Nth: 1, Err: syscall.EIO})
	acked := model{}
	var failed error
	for i := range 100 {
		k, v := fmt.Sprintf("k%04d", i), fmt.Sprintf("v%0100d", i)
		err := d.Put([]byte(k), []byte(v))
		if err == nil {
			if failed != nil {
				t.Fatalf("Put %d succeeded after Put failed with %v", i, failed)
			}
			acked[k] = v
			continue
		}
		if !errors.Is(err, syscall.EIO) {
			t.Fatalf("Put %d: %v, want the injected EIO", i, err)
		}
		if failed == nil {
			failed = err
			continue
		}
		if bg := d.Stats().BackgroundError; bg == nil || !errors.Is(err, bg) {
			t.Fatalf("Put %d failed again (%v) on a healed disk, but Stats.BackgroundError is %v: "+
				"the DB is read-only without saying so", i, err, bg)
		}
	}
	if failed == nil {
		t.Fatal("no Put met the failed rotation sync")
	}
	if err := d.Delete([]byte("never-written")); err == nil {
		t.Fatal("Delete of an absent key returned nil on a DB whose every write fails")
	}
	d.Close()
	ff.Heal()
	d = openMem(t, ff, nil)
	defer d.Close()
	if got := dbContents(t, d); len(diffModels(got, acked)) > 0 {
		t.Fatalf("after reopen:\n%s", diffModels(got, acked))
	}
}
