package lsm

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"testing"

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
