package vfs

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"testing"
)

// faultWorkload performs one operation of every kind, in Op order.
func faultWorkload(fsys FS) error {
	steps := []func() error{
		func() error { // create, write, sync, size, close
			f, err := fsys.Create("/db/a")
			if err != nil {
				return err
			}
			_, err = f.Write([]byte("0123456789"))
			if err == nil {
				err = f.Sync()
			}
			if err == nil {
				_, err = f.Size()
			}
			return errors.Join(err, f.Close())
		},
		func() error { // open, read, close
			f, err := fsys.Open("/db/a")
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.ReadAt(make([]byte, 4), 0)
			return err
		},
		func() error { return fsys.Rename("/db/a", "/db/b") },
		func() error { _, err := fsys.List("/db"); return err },
		func() error { return fsys.MkdirAll("/db/sub") },
		func() error {
			l, err := fsys.Lock("/db/LOCK")
			if err != nil {
				return err
			}
			return l.Close()
		},
		func() error { return fsys.SyncDir("/db") },
		func() error { return fsys.Remove("/db/b") },
		func() error { // reuse, close
			f, err := fsys.(Reuser).Reuse("/db/LOCK", "/db/c")
			if err != nil {
				return err
			}
			return f.Close()
		},
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

func newFaultMem(t *testing.T) (*FaultFS, *MemFS) {
	m := NewMem()
	if err := m.MkdirAll("/db"); err != nil {
		t.Fatal(err)
	}
	return NewFault(m), m
}

func TestFaultCounts(t *testing.T) {
	ff, _ := newFaultMem(t)
	if err := faultWorkload(ff); err != nil {
		t.Fatal(err)
	}
	var total int64
	for op := OpAny + 1; op < numOps; op++ {
		want := int64(1)
		if op == OpClose {
			want = 3
		}
		if got := ff.Count(op); got != want {
			t.Errorf("Count(%s) = %d, want %d", op, got, want)
		}
		total += ff.Count(op)
	}
	if got := ff.Count(OpAny); got != total {
		t.Errorf("Count(any) = %d, sum of kinds %d", got, total)
	}
}

// TestFaultNth fails the first operation of each kind in turn: the
// workload stops with ErrInjected at it, and the failure had no effect.
func TestFaultNth(t *testing.T) {
	for op := OpAny + 1; op < numOps; op++ {
		t.Run(op.String(), func(t *testing.T) {
			ff, _ := newFaultMem(t)
			ff.FailNth(op, 1)
			err := faultWorkload(ff)
			if !errors.Is(err, ErrInjected) {
				t.Fatalf("workload: %v, want ErrInjected", err)
			}
			var pe *fs.PathError
			if !errors.As(err, &pe) || pe.Op != op.String() {
				t.Fatalf("error %v does not name the operation %s", err, op)
			}
			// The fault fired once: the workload now runs to the end.
			if err := faultWorkload(ff); err != nil {
				t.Fatalf("second run: %v", err)
			}
		})
	}
}

func TestFaultNoEffect(t *testing.T) {
	ff, m := newFaultMem(t)
	writeFile(t, m, "/db/a", []byte("x"))
	ff.FailNth(OpRename, 1)
	ff.FailNth(OpRemove, 1)
	ff.FailNth(OpCreate, 1)
	if ff.Rename("/db/a", "/db/b") == nil || ff.Remove("/db/a") == nil {
		t.Fatal("no fault")
	}
	if _, err := ff.Create("/db/c"); err == nil {
		t.Fatal("no fault")
	}
	if got := mustList(t, m, "/db"); !slices.Equal(got, []string{"a"}) {
		t.Fatalf("failed operations changed the fs: %q", got)
	}
}

// TestFaultNthCountsFromNow: n counts from the call, so a test can set up
// first and inject into what follows.
func TestFaultNthCountsFromNow(t *testing.T) {
	ff, _ := newFaultMem(t)
	for i := 0; i < 3; i++ {
		ff.List("/db")
	}
	ff.FailNth(OpList, 2)
	if _, err := ff.List("/db"); err != nil {
		t.Fatalf("first list after FailNth(2): %v", err)
	}
	if _, err := ff.List("/db"); !errors.Is(err, ErrInjected) {
		t.Fatalf("second list after FailNth(2): %v", err)
	}
	if _, err := ff.List("/db"); err != nil {
		t.Fatalf("third list: %v", err)
	}
}

func TestFaultDiskDies(t *testing.T) {
	ff, _ := newFaultMem(t)
	f, err := ff.Create("/db/a")
	if err != nil {
		t.Fatal(err)
	}
	ff.FailFromNth(OpAny, 3)
	if _, err := f.Write([]byte("a")); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("b")); !errors.Is(err, ErrInjected) {
		t.Fatalf("third op: %v", err)
	}
	for i := 0; i < 3; i++ {
		if _, err := ff.List("/"); !errors.Is(err, ErrInjected) {
			t.Fatalf("dead disk listed: %v", err)
		}
	}
	if err := f.Close(); !errors.Is(err, ErrInjected) {
		t.Fatalf("close on a dead disk: %v", err)
	}
	ff.Heal()
	if _, err := ff.List("/"); err != nil {
		t.Fatalf("healed disk: %v", err)
	}
	if err := f.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("a file closed while the disk was dead is still open: %v", err)
	}
}

func TestFaultTornWrite(t *testing.T) {
	ff, m := newFaultMem(t)
	ff.SetTornWrites(true)
	f, _ := ff.Create("/db/log")
	ff.FailFromNth(OpWrite, 2)
	f.Write([]byte("whole"))
	n, err := f.Write([]byte("0123456789"))
	if n != 5 || !errors.Is(err, ErrInjected) {
		t.Fatalf("torn write = %d, %v; want 5, ErrInjected", n, err)
	}
	// The dead disk's later writes are refused whole, not torn.
	if n, _ := f.Write([]byte("0123456789")); n != 0 {
		t.Fatalf("write on a dead disk wrote %d bytes", n)
	}
	if got := readFile(t, m, "/db/log"); string(got) != "whole01234" {
		t.Fatalf("file holds %q", got)
	}
}

func TestFaultCrash(t *testing.T) {
	ff, _ := newFaultMem(t)
	f, _ := ff.Create("/db/log")
	f.Write([]byte("durable"))
	f.Sync()
	f.Write([]byte(" lost"))
	ff.SyncDir("/db")
	ff.SyncDir("/")
	after, err := ff.Crash()
	if err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, after, "/db/log"); string(got) != "durable" {
		t.Fatalf("after the crash the log holds %q", got)
	}
	if _, err := f.Write([]byte("x")); !errors.Is(err, ErrInjected) {
		t.Fatalf("write after the crash: %v", err)
	}
	ff.Heal() // a crash is final
	if _, err := ff.List("/db"); !errors.Is(err, ErrInjected) {
		t.Fatalf("list after the crash: %v", err)
	}
	if _, err := NewFault(Default).Crash(); err == nil {
		t.Fatal("crashing the OS file system succeeded")
	}
	// Nor through another FaultFS: it returned no MemFS and no error (a
	// black-box attack), and the outer one was dead.
	outer := NewFault(NewFault(Default))
	if m, err := outer.Crash(); err == nil || m != nil {
		t.Fatalf("crashing the OS file system through two FaultFSs: %v, %v", m, err)
	}
	if _, err := outer.List(t.TempDir()); err != nil {
		t.Fatalf("a refused Crash killed the disk: %v", err)
	}
	// Nested: a FaultFS over a FaultFS over a MemFS crashes too.
	inner, _ := newFaultMem(t)
	if _, err := NewFault(inner).Crash(); err != nil {
		t.Fatal(err)
	}
}

func TestFaultTrace(t *testing.T) {
	ff, _ := newFaultMem(t)
	var log []string
	ff.SetTrace(func(n int64, op Op, name string, err error) {
		if n != int64(len(log)+1) {
			t.Errorf("trace numbers %d after %d operations", n, len(log))
		}
		log = append(log, fmt.Sprintf("%s %s %t", op, name, errors.Is(err, ErrInjected)))
	})
	ff.FailNth(OpRename, 1)
	faultWorkload(ff)
	want := []string{"create /db/a false", "write /db/a false", "sync /db/a false",
		"size /db/a false", "close /db/a false", "open /db/a false", "read /db/a false",
		"close /db/a false", "rename /db/a true"}
	if !slices.Equal(log, want) {
		t.Fatalf("trace\n%q\nwant\n%q", log, want)
	}
}

// TestFaultReuse: a failed Reuse leaves both names as they were; a reused
// file's Writes are faulted and torn as Create's; over an FS that is not
// a Reuser, Reuse fails with errors.ErrUnsupported, uncounted.
func TestFaultReuse(t *testing.T) {
	ff, m := newFaultMem(t)
	writeFile(t, m, "/db/a", []byte("old"))
	writeFile(t, m, "/db/b", []byte("bee"))
	ff.FailNth(OpReuse, 1)
	_, err := ff.Reuse("/db/a", "/db/b")
	var pe *fs.PathError
	if !errors.Is(err, ErrInjected) || !errors.As(err, &pe) || pe.Op != "reuse" {
		t.Fatalf("Reuse: %v, want an injected reuse error", err)
	}
	if got := mustList(t, m, "/db"); !slices.Equal(got, []string{"a", "b"}) || string(readFile(t, m, "/db/b")) != "bee" {
		t.Fatalf("a failed Reuse changed the fs: %q, b holds %q", got, readFile(t, m, "/db/b"))
	}
	f, err := ff.Reuse("/db/a", "/db/b")
	if err != nil {
		t.Fatal(err)
	}
	if got := ff.Count(OpReuse); got != 2 {
		t.Fatalf("Count(reuse) = %d, want 2", got)
	}
	ff.SetTornWrites(true)
	ff.FailNth(OpWrite, 1)
	if n, err := f.Write([]byte("0123")); n != 2 || !errors.Is(err, ErrInjected) {
		t.Fatalf("torn write to a reused file = %d, %v; want 2, ErrInjected", n, err)
	}
	if got := readFile(t, m, "/db/b"); string(got) != "01d" {
		t.Fatalf("after a torn write the reused file holds %q, want 01d", got)
	}
	f.Close()

	plain := NewFault(struct{ FS }{m})
	if _, err := plain.Reuse("/db/b", "/db/c"); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Reuse over an FS that is not a Reuser: %v, want errors.ErrUnsupported", err)
	}
	if got := plain.Count(OpAny); got != 0 {
		t.Fatalf("an unsupported Reuse was counted: Count(any) = %d", got)
	}
	if got := mustList(t, m, "/db"); !slices.Equal(got, []string{"b"}) {
		t.Fatalf("an unsupported Reuse changed the fs: %q", got)
	}
}
