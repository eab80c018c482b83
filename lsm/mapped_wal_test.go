package lsm

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/vfs"
)

// TestMachineCrashAfterRotation: with Sync, every acknowledged commit
// survives a machine crash, however many WALs rotated before it. MemFS
// files are vfs.Mappers, so the WALs are written through windows: a
// rotated WAL was synced and then cut to its last record by Close, a cut
// that is not synced, so the crash brings back the zeros its last window
// reserved. Those zeros held no record; an Open that took them for the
// torn tail of a WAL older than the newest (corruption) failed here.
func TestMachineCrashAfterRotation(t *testing.T) {
	seed := modelSeed(t)
	rng := rand.New(rand.NewPCG(seed, 11))
	mem := vfs.NewMem()
	d := openMem(t, mem, &Options{Sync: true, MemtableSize: 16 << 10})
	defer d.Close()
	m := model{}
	crashes := 0
	for commit := 1; commit <= 1500; commit++ {
		var b Batch
		for range 1 + rng.IntN(4) {
			k := fmt.Sprintf("k%03d", rng.IntN(300))
			v := fmt.Sprintf("v%d-%s", commit, make([]byte, rng.IntN(200)))
			b.Put([]byte(k), []byte(v))
			m[k] = v
		}
		if err := d.Write(&b); err != nil {
			t.Fatal(err)
		}
		if rng.IntN(60) != 0 {
			continue
		}
		crashes++
		r, err := Open("/db", &Options{FS: mem.CrashClone()})
		if err != nil {
			t.Fatalf("seed %d commit %d: reopen after a machine crash: %v", seed, commit, err)
		}
		got := dbContents(t, r)
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(got, m) {
			t.Fatalf("seed %d commit %d: the crashed copy holds %d keys, the synced commits %d", seed, commit, len(got), len(m))
		}
	}
	if s := d.Stats(); s.Flushes < 5 || crashes < 10 {
		t.Fatalf("%d flushes and %d crashes: the test did not cross enough rotations", s.Flushes, crashes)
	}
}

// TestOlderWALMustEndAtItsRecords: a WAL that a newer one follows was
// synced before the newer one began, so at recovery it may end only at its
// last record, or in the zeros a mapped WAL reserves to a window boundary.
// Zeros anywhere else at its end are lost bytes: ErrCorruption, never a
// silent replay of less.
func TestOlderWALMustEndAtItsRecords(t *testing.T) {
	release := make(chan struct{})
	var held atomic.Bool
	mem := vfs.NewMem()
	d := openMem(t, mem, &Options{MemtableSize: 16 << 10, EventListener: &EventListener{FlushBegin: func(FlushInfo) {
		if !held.Swap(true) {
			<-release // the first flush waits: its WAL stays, a newer one follows
		}
	}}})
	m := model{}
	for i := 0; len(filesOf(t, mem, "/db", manifest.KindLog)) < 2; i++ {
		k, v := fmt.Sprintf("k%05d", i), fmt.Sprintf("v%d-%s", i, make([]byte, 100))
		if err := d.Put([]byte(k), []byte(v)); err != nil {
			t.Fatal(err)
		}
		m[k] = v
	}
	crashed := mem.ProcessCrashClone()
	close(release)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	older := "/db/" + filesOf(t, crashed, "/db", manifest.KindLog)[0]
	records := readFile(t, crashed, older)

	for _, tc := range []struct {
		name  string
		zeros int
		ok    bool
	}{
		{"as written", 0, true},
		{"zeros to the window's end", 256<<10 - len(records)%(256<<10), true},
		{"1000 zeros", 1000, false},
	} {
		fs := crashed.ProcessCrashClone()
		f, err := fs.Create(older)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(append(append([]byte{}, records...), make([]byte, tc.zeros)...)); err != nil {
			t.Fatal(err)
		}
		f.Close()
		r, err := Open("/db", &Options{FS: fs})
		if !tc.ok {
			if !errors.Is(err, ErrCorruption) {
				t.Errorf("%s: Open = %v, want ErrCorruption", tc.name, err)
			}
			if err == nil {
				r.Close()
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: Open: %v", tc.name, err)
		}
		if got := dbContents(t, r); !maps.Equal(got, m) {
			t.Errorf("%s: the DB holds %d keys, %d were written", tc.name, len(got), len(m))
		}
		r.Close()
	}
}
