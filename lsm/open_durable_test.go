package lsm

import (
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestOpenCreatesDurableDirectories: a DB that Open creates, parents and
// all, survives a machine crash with every synced write. A directory is a
// name in its parent, durable only once the parent is synced: without
// that, the crash took the whole new tree and the write acknowledged in it.
func TestOpenCreatesDurableDirectories(t *testing.T) {
	for _, dir := range []string{"/db", "/a/db", "/a/b/c/db"} {
		mem := vfs.NewMem()
		d, err := Open(dir, &Options{FS: mem})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Put([]byte("k"), []byte("v"), Sync); err != nil {
			t.Fatal(err)
		}
		crashed := mem.CrashClone()
		d.Close()
		r, err := Open(dir, &Options{FS: crashed, ErrorIfNotExists: true})
		if err != nil {
			t.Fatalf("%s: reopen after a crash: %v", dir, err)
		}
		if v, err := r.Get([]byte("k")); err != nil || string(v) != "v" {
			t.Errorf("%s: synced Put after a crash: %q, %v", dir, v, err)
		}
		r.Close()
	}
}

// TestCheckpointDirectoriesDurable: a checkpoint Checkpoint reports done
// survives a machine crash, in directories it created as well.
func TestCheckpointDirectoriesDurable(t *testing.T) {
	mem := vfs.NewMem()
	d, err := Open("/db", &Options{FS: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Put([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := d.Checkpoint("/backups/today/cp"); err != nil {
		t.Fatal(err)
	}
	r, err := Open("/backups/today/cp", &Options{FS: mem.CrashClone(), ReadOnly: true})
	if err != nil {
		t.Fatalf("open the checkpoint after a crash: %v", err)
	}
	defer r.Close()
	if v, err := r.Get([]byte("k")); err != nil || string(v) != "v" {
		t.Errorf("checkpoint after a crash: %q, %v", v, err)
	}
}
