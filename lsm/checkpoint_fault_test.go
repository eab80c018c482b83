package lsm

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math/rand/v2"
	"slices"
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
	mem, ff, d, want := checkpointSource(t)
	defer d.Close()
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

// checkpointSource returns a DB on a FaultFS over a MemFS, of 400 keys
// written 600 times (synced) across a compaction and flushes, at rest, and
// what it holds.
func checkpointSource(t *testing.T) (*vfs.MemFS, *vfs.FaultFS, *DB, model) {
	mem := vfs.NewMem()
	ff := vfs.NewFault(mem)
	d := openMem(t, ff, &Options{MemtableSize: 4 << 10})
	want := model{}
	for i := range 600 {
		k, v := fmt.Sprintf("k%04d", i%400), fmt.Sprintf("v%d", i)
		if err := d.Put([]byte(k), []byte(v), Sync); err != nil {
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
	return mem, ff, d, want
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

// TestCheckpointCrashKeepingDirChanges crashes the machine before every
// file-system operation of a Checkpoint, each time in four ways that keep
// a random part of the directory changes no SyncDir made durable yet
// (vfs.MemFS.CrashCloneKeeping: names created, renamed or removed, kept
// in any order). CURRENT is the checkpoint's commit: an Open of the
// checkpoint (ErrorIfNotExists) must find exactly the state checkpointed
// where CURRENT is there, and refuse it, or find that state, where not;
// the DB it was taken from must hold its own.
func TestCheckpointCrashKeepingDirChanges(t *testing.T) {
	seed := modelSeed(t)
	rng := rand.New(rand.NewPCG(seed, 3))
	mem, ff, d, want := checkpointSource(t)
	defer d.Close()
	var crashes []*vfs.MemFS
	ff.SetTrace(func(_ int64, _ vfs.Op, name string, _ error) {
		if strings.HasPrefix(name, "/ck") {
			for _, p := range []float64{0.25, 0.5, 0.75, 1} {
				crashes = append(crashes, mem.CrashCloneKeeping(func(int) bool { return rng.Float64() < p }))
			}
		}
	})
	if err := d.Checkpoint("/ck"); err != nil {
		t.Fatal(err)
	}
	ff.SetTrace(nil)
	var whole, refused int
	for i, crashed := range crashes {
		names, _ := crashed.List("/ck")
		committed := slices.Contains(names, "CURRENT")
		ck, err := Open("/ck", &Options{FS: crashed.ProcessCrashClone(), ErrorIfNotExists: true})
		switch {
		case err != nil && committed:
			t.Fatalf("seed %d: crash %d of %d (before operation %d of the Checkpoint): the checkpoint has its CURRENT, yet Open: %v",
				seed, i, len(crashes), i/4+1, err)
		case err != nil:
			refused++
		default:
			got := dbContents(t, ck)
			ck.Close()
			if !maps.Equal(got, want) {
				t.Fatalf("seed %d: crash %d of %d (before operation %d of the Checkpoint): the checkpoint opened holding\n%s",
					seed, i, len(crashes), i/4+1, diffModels(got, want))
			}
			whole++
		}
		src, err := Open("/db", &Options{FS: crashed})
		if err != nil {
			t.Fatalf("seed %d: crash %d: the DB checkpointed: %v", seed, i, err)
		}
		if got := dbContents(t, src); !maps.Equal(got, want) {
			t.Fatalf("seed %d: crash %d: the DB checkpointed holds\n%s", seed, i, diffModels(got, want))
		}
		src.Close()
	}
	t.Logf("seed %d: %d crashes during a Checkpoint: %d checkpoints refused, %d whole", seed, len(crashes), refused, whole)
	if whole == 0 || refused == 0 {
		t.Fatalf("seed %d: %d whole, %d refused: the crashes missed one outcome", seed, whole, refused)
	}
}
