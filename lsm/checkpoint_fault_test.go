package lsm

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"strings"
	"syscall"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestCheckpointFaults fails each file-system operation of a Checkpoint in
// turn (EIO), into a directory it makes and into an empty one that is
// there. A Checkpoint that returns nil made a checkpoint; one that fails
// removes what it wrote, leaving no directory it made and nothing in one
// that was there, LOCK included (it left its LOCK, a black-box attack
// found), unless the fault failed that removal. Either way, an Open of that
// directory (ErrorIfNotExists: no new DB made there), as the process
// left it or after a machine crash, refuses it or holds exactly the state
// checkpointed: never a part of it.
func TestCheckpointFaults(t *testing.T) {
	mem := vfs.NewMem()
	ff := vfs.NewFault(mem)
	d := openMem(t, ff, &Options{MemtableSize: 4 << 10})
	defer d.Close()
	want := model{}
	for i := range 600 {
		k, v := fmt.Sprintf("k%04d", i%400), fmt.Sprintf("v%d", i)
		if err := d.Put([]byte(k), []byte(v)); err != nil {
			t.Fatal(err)
		}
		want[k] = v
		if i == 250 {
			if err := d.Compact(); err != nil {
				t.Fatal(err)
			}
		}
	}
	d.waitIdle()
	var failedOp vfs.Op
	ff.SetTrace(func(_ int64, op vfs.Op, _ string, err error) {
		if errors.Is(err, vfs.ErrInjected) {
			failedOp = op
		}
	})
	for _, existing := range []bool{false, true} {
		checkpointFaults(t, d, mem, ff, want, existing, &failedOp)
	}
}

func checkpointFaults(t *testing.T, d *DB, mem *vfs.MemFS, ff *vfs.FaultFS, want model, existing bool, failedOp *vfs.Op) {
	for n := int64(1); ; n++ {
		dir := fmt.Sprintf("/ck%03d-%v", n, existing)
		if existing {
			if err := mem.MkdirAll(dir); err != nil {
				t.Fatal(err)
			}
		}
		before := ff.Injected() // a count since ff was made
		ff.Inject(vfs.Fault{Nth: n, Err: syscall.EIO, Match: func(name string) bool { return strings.HasPrefix(name, dir) }})
		err := d.Checkpoint(dir)
		fired := ff.Injected() > before
		ff.Heal()
		if !fired {
			if err != nil {
				t.Fatalf("fault #%d did not fire, yet Checkpoint: %v", n, err)
			}
			if n == 1 {
				t.Fatal("Checkpoint made no file-system call")
			}
			t.Logf("existing %v: %d operations failed in turn", existing, n-1)
			return
		}
		names, lerr := mem.List(dir)
		if left := existing && len(names) > 0 || !existing && !errors.Is(lerr, fs.ErrNotExist); err != nil && left && *failedOp != vfs.OpRemove {
			t.Fatalf("fault #%d (%v): Checkpoint failed (%v), leaving %s holding %v (%v)", n, *failedOp, err, dir, names, lerr)
		}
		for _, c := range []struct {
			what string
			fs   vfs.FS
		}{{"as left", mem.ProcessCrashClone()}, {"after a crash", mem.CrashClone()}} {
			ck, oerr := Open(dir, &Options{FS: c.fs, ErrorIfNotExists: true})
			if oerr != nil {
				if err == nil && c.what == "as left" {
					t.Fatalf("fault #%d: Checkpoint returned nil, yet Open: %v", n, oerr)
				}
				continue
			}
			got := dbContents(t, ck)
			ck.Close()
			if !maps.Equal(got, want) {
				t.Fatalf("fault #%d (Checkpoint: %v), opened %s:\n%s", n, err, c.what, diffModels(got, want))
			}
		}
		if err != nil {
			// A failed Checkpoint leaves dir for another to use.
			if rerr := d.Checkpoint(dir); rerr != nil {
				t.Fatalf("fault #%d: Checkpoint failed (%v), and again into the same directory: %v", n, err, rerr)
			}
			ck, err := Open(dir, &Options{FS: mem, ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			got := dbContents(t, ck)
			ck.Close()
			if !maps.Equal(got, want) {
				t.Fatalf("fault #%d: the Checkpoint retried:\n%s", n, diffModels(got, want))
			}
		}
		removeAll(t, mem, dir) // so that the clones stay the DB's size
	}
}

// removeAll removes dir and the files in it.
func removeAll(t *testing.T, fsys vfs.FS, dir string) {
	t.Helper()
	names, err := fsys.List(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if err := fsys.Remove(dir + "/" + name); err != nil {
			t.Fatal(err)
		}
	}
	if err := fsys.Remove(dir); err != nil {
		t.Fatal(err)
	}
}
