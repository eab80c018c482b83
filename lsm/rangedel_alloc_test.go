package lsm

import (
	"fmt"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestReadAllocsBesideRangeTombstones is TestReadAllocs for a DB that
// holds range tombstones, none over the keys read: a Get that passes more
// sources than a cover holds in place (rangedel_read.go) before it finds
// its key, or finds none, allocates no more than in a DB without them.
func TestReadAllocsBesideRangeTombstones(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items at random")
	}
	const tables = 10
	opts := &Options{L0CompactionThreshold: 100, L0SlowdownWritesThreshold: 100, L0StopWritesThreshold: 100}
	d := openMem(t, vfs.NewMem(), opts)
	defer d.Close()
	if err := d.Put([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	for i := range tables {
		// Keys on either side of k, so that every table's range covers
		// it, and a tombstone beside it.
		for _, k := range []string{"a", "z"} {
			if err := d.Put(fmt.Appendf(nil, "%s%02d", k, i), []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.DeleteRange(fmt.Appendf(nil, "b%02d", i), fmt.Appendf(nil, "c%02d", i)); err != nil {
			t.Fatal(err)
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	v := d.vs.Current()
	l0 := len(v.Levels[0])
	v.Unref()
	if l0 != tables {
		t.Fatalf("L0 holds %d tables, want %d", l0, tables)
	}
	present, absent := []byte("k"), []byte("kk")
	d.Get(present) // open every table, so that its filter is in memory
	for _, tc := range []struct {
		name  string
		read  func()
		limit float64
	}{
		{"get present", func() { d.Get(present) }, 1},
		{"get absent", func() { d.Get(absent) }, 0},
	} {
		if got := testing.AllocsPerRun(200, tc.read); got > tc.limit {
			t.Errorf("%s past %d tables: %.1f allocations, budget %.0f", tc.name, tables, got, tc.limit)
		}
	}
}
