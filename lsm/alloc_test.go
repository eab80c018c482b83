package lsm

import (
	"fmt"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestReadAllocs holds the DB's read paths to their allocation budgets on
// a tree of several tables in L0 and below, its blocks in the cache: a Get
// of a present key allocates its value only, a Get of an absent key
// nothing, and a scan of 1000 entries a handful of times, not once per
// entry. (A per-call allocation on the path to a table reader once made
// every Get allocate once per table it asked.)
func TestReadAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items at random")
	}
	d := openMem(t, vfs.NewMem(), &Options{MemtableSize: 64 << 10, L0CompactionThreshold: 8, L0SlowdownWritesThreshold: 16, L0StopWritesThreshold: 20})
	defer d.Close()
	for i := range 6000 {
		if err := d.Put(fmt.Appendf(nil, "k%05d", 2*i), []byte("value")); err != nil {
			t.Fatal(err)
		}
		if i%2000 == 1999 {
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	d.waitIdle()
	present, absent := []byte("k02000"), []byte("k02001")
	d.Get(present) // warm the cache
	for _, tc := range []struct {
		name  string
		read  func()
		limit float64
	}{
		{"get present", func() { d.Get(present) }, 1},
		{"get absent", func() { d.Get(absent) }, 0},
		{"scan 1000", func() {
			it := d.NewIter(nil)
			n := 0
			for ok := it.First(); ok && n < 1000; ok = it.Next() {
				n++
			}
			it.Close()
		}, 10},
	} {
		if got := testing.AllocsPerRun(200, tc.read); got > tc.limit {
			t.Errorf("%s: %.1f allocations, budget %.0f", tc.name, got, tc.limit)
		}
	}
}
