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
	// A write that is also malformed gets the sticky error too, the
	// error every write gets, not what is wrong with its arguments.
	for name, err := range map[string]error{
		"Put(oversized key)": d.Put(make([]byte, MaxKeySize+1), nil),
		"DeleteRange(b, a)":  d.DeleteRange([]byte("b"), []byte("a")),
		"CompactRange(b, a)": d.CompactRange([]byte("b"), []byte("a")),
	} {
		if !errors.Is(err, syscall.EIO) {
			t.Errorf("%s after the failure: %v, want the sticky EIO", name, err)
		}
	}
	d.Close()
	ff.Heal()
	d = openMem(t, ff, nil)
	defer d.Close()
	if got := dbContents(t, d); len(diffModels(got, acked)) > 0 {
		t.Fatalf("after reopen:\n%s", diffModels(got, acked))
	}
}

// TestFaultWALStartIsSticky: a rotation that cannot start the next WAL
// (its Create, or the directory sync that makes its name durable, fails)
// fails the Flush or the write that rotates, and then every later write,
// with Stats.BackgroundError: the README's "a failed flush ... makes the
// DB read-only; nothing is retried". The rotation used to leave the DB
// writable and try again at the next one. A reopen on the healed disk has
// every acknowledged write, and nothing of a failed one.
func TestFaultWALStartIsSticky(t *testing.T) {
	for _, tc := range []struct {
		name  string
		op    vfs.Op
		flush bool // a Flush rotates; else a Put into a full memtable
	}{
		{"create/flush", vfs.OpCreate, true},
		{"syncdir/flush", vfs.OpSyncDir, true},
		{"create/put", vfs.OpCreate, false},
		{"syncdir/put", vfs.OpSyncDir, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ff := vfs.NewFault(vfs.NewMem())
			d := openMem(t, ff, &Options{MemtableSize: 4 << 10})
			acked := model{}
			put := func(i int) error {
				k, v := fmt.Sprintf("k%04d", i), fmt.Sprintf("v%0100d", i)
				err := d.Put([]byte(k), []byte(v))
				if err == nil {
					acked[k] = v
				}
				return err
			}
			if err := put(0); err != nil {
				t.Fatal(err)
			}
			match := vfs.MatchBase("*")
			if tc.op == vfs.OpCreate {
				match = vfs.MatchBase("*.log")
			}
			ff.Inject(vfs.Fault{Op: tc.op, Match: match, Nth: 1, Err: syscall.EIO})
			var failed error
			i := 1
			if tc.flush {
				failed = d.Flush()
			}
			for ; failed == nil && i < 1000; i++ {
				failed = put(i)
			}
			if !errors.Is(failed, syscall.EIO) {
				t.Fatalf("the rotation's failure: %v, want the injected EIO", failed)
			}
			ff.Heal()
			bg := d.Stats().BackgroundError
			if bg == nil {
				t.Fatalf("the rotation failed (%v), but Stats.BackgroundError is nil", failed)
			}
			if err := put(i); !errors.Is(err, bg) {
				t.Fatalf("a Put after the failed rotation: %v, want Stats.BackgroundError %v", err, bg)
			}
			if err := d.Flush(); !errors.Is(err, bg) {
				t.Fatalf("a Flush after the failed rotation: %v, want Stats.BackgroundError %v", err, bg)
			}
			d.Close()
			d = openMem(t, ff, nil)
			defer d.Close()
			if got := dbContents(t, d); len(diffModels(got, acked)) > 0 {
				t.Fatalf("after reopen:\n%s", diffModels(got, acked))
			}
		})
	}
}
