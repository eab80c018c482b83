package lsm

import (
	"errors"
	"os"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestFailedOpenClosesItsWAL: an Open whose manifest edit fails after it
// has created its new WAL (the disk fails the manifest's sync) must close
// that WAL's file like every other it opened. It left it open: a process
// retrying Open on a failing disk ran out of descriptors.
func TestFailedOpenClosesItsWAL(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Put([]byte("k"), []byte("v"), Sync); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	fds := func() int {
		t.Helper()
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skipf("no /proc/self/fd: %v", err)
		}
		return len(ents)
	}
	before := fds()
	for range 3 {
		ffs := vfs.NewFault(vfs.Default)
		ffs.Inject(vfs.Fault{Op: vfs.OpSync, Match: vfs.MatchBase("MANIFEST-*"), Nth: 1})
		if _, err := Open(dir, &Options{FS: ffs}); !errors.Is(err, vfs.ErrInjected) {
			t.Fatalf("Open with the manifest's sync failing: %v; want ErrInjected", err)
		}
	}
	if after := fds(); after != before {
		t.Errorf("open descriptors: %d before three failed Opens, %d after", before, after)
	}
	d, err = Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if v, err := d.Get([]byte("k")); err != nil || string(v) != "v" {
		t.Fatalf("Get after the failed Opens: %q, %v", v, err)
	}
}
