package lsm

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestProcessCrashKeepsAPrefix kills the process (vfs.MemFS.ProcessCrashClone:
// everything written survives, nothing is closed) at random moments of a
// stream of puts, deletes and batches, and reopens the copy. Without
// BufferedWAL the copy holds every acknowledged commit; with it, the first
// k commits for some k — never a torn batch, never a later commit without
// an earlier one — and at least every commit before the last Flush.
func TestProcessCrashKeepsAPrefix(t *testing.T) {
	for _, buffered := range []bool{false, true} {
		t.Run(fmt.Sprintf("buffered=%v", buffered), func(t *testing.T) {
			seed := modelSeed(t)
			rng := rand.New(rand.NewPCG(seed, 9))
			mem := vfs.NewMem()
			d := openMem(t, mem, &Options{BufferedWAL: buffered, MemtableSize: 16 << 10})
			defer d.Close()
			m := model{}
			history := []model{m.clone()} // history[k]: after the first k commits
			flushed := 0                  // commits before the last Flush
			var shortfalls int
			for commit := 1; commit <= 2000; commit++ {
				var b Batch
				for range 1 + rng.IntN(4) {
					k := fmt.Sprintf("k%02d", rng.IntN(60))
					if rng.IntN(4) == 0 {
						b.Delete([]byte(k))
						delete(m, k)
					} else {
						v := fmt.Sprintf("v%d", commit)
						b.Put([]byte(k), []byte(v))
						m[k] = v
					}
				}
				if err := d.Write(&b); err != nil {
					t.Fatal(err)
				}
				history = append(history, m.clone())
				if rng.IntN(300) == 0 {
					if err := d.Flush(); err != nil {
						t.Fatal(err)
					}
					flushed = commit
				}
				if rng.IntN(100) != 0 {
					continue
				}
				crashed := mem.ProcessCrashClone()
				r, err := Open("/db", &Options{FS: crashed})
				if err != nil {
					t.Fatalf("seed %d commit %d: reopen after a process crash: %v", seed, commit, err)
				}
				got := dbContents(t, r)
				r.Close()
				k := -1
				for i := commit; i >= flushed; i-- {
					if maps.Equal(got, history[i]) {
						k = i
						break
					}
				}
				switch {
				case k < 0:
					t.Fatalf("seed %d commit %d: the copy (%d keys) is no prefix of the commits from %d on", seed, commit, len(got), flushed)
				case !buffered && k != commit:
					t.Fatalf("seed %d commit %d: the copy holds %d commits; every acknowledged one must survive", seed, commit, k)
				case k < commit:
					shortfalls++
				}
			}
			t.Logf("crash copies short of the last commit: %d", shortfalls)
		})
	}
}

// TestBufferedWALWriteFailureKeepsAPrefix: under BufferedWAL a background
// write to the WAL that fails turns the DB read-only, and the commits it
// held, acknowledged already, are lost as a crash would lose them: a
// reopen holds the first k commits for some k, never a later one without
// the earlier ones (Options.BufferedWAL, README "Durability").
func TestBufferedWALWriteFailureKeepsAPrefix(t *testing.T) {
	ff := vfs.NewFault(vfs.NewMem())
	d := openMem(t, ff, &Options{BufferedWAL: true})
	key := func(i int) string { return fmt.Sprintf("k%05d", i) }
	ff.Inject(vfs.Fault{Op: vfs.OpWrite, Match: vfs.MatchBase("*.log"), Nth: 3})
	acked := 0
	for ; acked < 100000; acked++ {
		if err := d.Put([]byte(key(acked)), []byte("v")); err != nil {
			break
		}
	}
	if acked == 100000 {
		t.Fatal("no Put met the failed WAL write")
	}
	if bg := d.Stats().BackgroundError; bg == nil || !errors.Is(d.Put([]byte("after"), nil), bg) {
		t.Fatalf("a failed WAL write left the DB writable: BackgroundError %v", bg)
	}
	d.Close()
	ff.Heal()
	d = openMem(t, ff, nil)
	defer d.Close()
	got := dbContents(t, d)
	for i := range len(got) {
		if _, ok := got[key(i)]; !ok {
			t.Fatalf("after reopen: %d keys, but not the first %d commits: %s missing", len(got), len(got), key(i))
		}
	}
	t.Logf("%d commits acknowledged, the first %d kept", acked, len(got))
}
