package lsm

import (
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
