package vfs

import (
	"errors"
	"io/fs"
	"slices"
	"syscall"
	"testing"
)

// TestInjectOneShotMatch: a one-shot fault restricted by name fails the
// nth matching operation only; operations on other names are not counted
// towards n, and the disk is healthy afterwards.
func TestInjectOneShotMatch(t *testing.T) {
	ff, _ := newFaultMem(t)
	ff.Inject(Fault{Op: OpCreate, Match: MatchBase("*.sst"), Nth: 2, Err: syscall.EIO})
	var failed []string
	for _, name := range []string{"1.log", "1.sst", "2.log", "2.sst", "3.sst", "CURRENT"} {
		f, err := ff.Create("/db/" + name)
		if err != nil {
			if !errors.Is(err, ErrInjected) || !errors.Is(err, syscall.EIO) {
				t.Fatalf("Create(%s): %v, want ErrInjected and EIO", name, err)
			}
			failed = append(failed, name)
			continue
		}
		f.Close()
	}
	if !slices.Equal(failed, []string{"2.sst"}) {
		t.Fatalf("failed %q, want [2.sst]", failed)
	}
	if got := ff.Injected(); got != 1 {
		t.Fatalf("Injected() = %d, want 1", got)
	}
}

// TestInjectTypedErrors: the injected error wraps the chosen errno, names
// the operation and path, and a sticky fault's dead disk keeps the errno.
func TestInjectTypedErrors(t *testing.T) {
	ff, _ := newFaultMem(t)
	f, _ := ff.Create("/db/a.log")
	ff.Inject(Fault{Op: OpWrite, Nth: 1, Err: syscall.ENOSPC, Sticky: true})
	_, err := f.Write([]byte("x"))
	var pe *fs.PathError
	if !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, ErrInjected) || !errors.As(err, &pe) || pe.Op != "write" || pe.Path != "/db/a.log" {
		t.Fatalf("write: %v; want a write PathError on /db/a.log wrapping ENOSPC and ErrInjected", err)
	}
	if err := ff.SyncDir("/db"); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("dead disk: %v, want ENOSPC", err)
	}
	if errors.Is(err, syscall.EIO) {
		t.Fatal("ENOSPC error is also EIO")
	}
	if got := ff.Injected(); got != 1 {
		t.Fatalf("Injected() = %d, want 1 (the dead disk's refusals are not counted)", got)
	}
	ff.Heal()
	if _, err := f.Write([]byte("x")); err != nil {
		t.Fatalf("healed: %v", err)
	}
	// Without Err, the error is ErrInjected alone.
	ff.FailNth(OpSync, 1)
	if err := f.Sync(); !errors.Is(err, ErrInjected) || errors.Is(err, syscall.EIO) {
		t.Fatalf("plain fault: %v", err)
	}
}

// TestInjectProbability: each matching operation fails with probability
// P, the same ones again for the same seed, and only matching ones.
func TestInjectProbability(t *testing.T) {
	run := func(seed uint64) (fails []int) {
		ff, _ := newFaultMem(t)
		ff.Inject(Fault{Op: OpList, P: 0.1, Seed: seed})
		for i := range 2000 {
			if _, err := ff.List("/db"); err != nil {
				fails = append(fails, i)
			}
			if err := ff.SyncDir("/db"); err != nil {
				t.Fatalf("SyncDir failed under a List fault: %v", err)
			}
		}
		if got := ff.Injected(); got != int64(len(fails)) {
			t.Fatalf("Injected() = %d, %d failures seen", got, len(fails))
		}
		return fails
	}
	a, b, c := run(1), run(1), run(2)
	if !slices.Equal(a, b) {
		t.Fatal("the same seed failed other operations")
	}
	if slices.Equal(a, c) {
		t.Fatal("seeds 1 and 2 failed the same operations")
	}
	// 2000 draws at p = 0.1: 200 expected, standard deviation 13.4.
	if len(a) < 140 || len(a) > 260 {
		t.Fatalf("%d of 2000 failed at p = 0.1", len(a))
	}
	ff, _ := newFaultMem(t)
	ff.Inject(Fault{Op: OpAny, P: 1, Match: MatchBase("db")})
	if _, err := ff.Create("/db/x"); err != nil {
		t.Fatalf("Create of a name the fault does not match: %v", err)
	}
	if err := ff.SyncDir("/db"); !errors.Is(err, ErrInjected) {
		t.Fatalf("SyncDir(/db) at p = 1: %v", err)
	}
	ff.Heal()
	if err := ff.SyncDir("/db"); err != nil {
		t.Fatalf("healed: %v", err)
	}
}

func TestMatchBase(t *testing.T) {
	m := MatchBase("MANIFEST-*", "CURRENT*")
	for name, want := range map[string]bool{
		"/db/MANIFEST-000003": true, "/db/CURRENT": true, "/db/CURRENT.tmp": true,
		"/db/000003.sst": false, "/db": false, "MANIFEST": false,
	} {
		if m(name) != want {
			t.Errorf("MatchBase(MANIFEST-*, CURRENT*)(%q) = %v", name, !want)
		}
	}
}
