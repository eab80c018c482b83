package lsm

import (
	"errors"
	"fmt"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestDeleteRangeDeferredSources: a Get defers the search of every
// source it passes without a version of the key (rangedel_read.go) and
// searches them all before it reads a table. Here the key's only version
// lies in the last level, and the tombstone over it in one of many L0
// tables above, whose key ranges cover the key and whose filters rule it
// out:
// wherever the tombstone's table falls among the deferred sources (held
// in place, or past them), the Get must not find the key, and a key
// beside the range must still be found.
func TestDeleteRangeDeferredSources(t *testing.T) {
	const tables = 10 // more than cover.pending holds in place
	for _, alone := range []bool{false, true} {
		for at := range tables {
			name := fmt.Sprintf("tombstone-in-L0-table-%d", at)
			if alone {
				// A table of range tombstones only: a Get asks it no filter.
				name = fmt.Sprintf("tombstone-alone-in-L0-table-%d", at)
			}
			t.Run(name, func(t *testing.T) { testDeferredSources(t, tables, at, alone) })
		}
	}
}

func testDeferredSources(t *testing.T, tables, at int, alone bool) {
	opts := &Options{L0CompactionThreshold: 100, L0SlowdownWritesThreshold: 100, L0StopWritesThreshold: 100}
	d := openMem(t, vfs.NewMem(), opts)
	defer d.Close()
	for _, k := range []string{"k", "l"} {
		if err := d.Put([]byte(k), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	for i := range tables {
		if i == at {
			if err := d.DeleteRange([]byte("j"), []byte("kk")); err != nil {
				t.Fatal(err)
			}
		}
		if i != at || !alone {
			// Keys on either side of k: the table's range covers it.
			for _, k := range []string{"a", "z"} {
				if err := d.Put(fmt.Appendf(nil, "%s%02d", k, i), []byte("v")); err != nil {
					t.Fatal(err)
				}
			}
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
	// The memtables hold another key, so that they too are passed.
	if err := d.Put([]byte("m"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if v, err := d.Get([]byte("k")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Get(k) = %q, %v; want it deleted by the tombstone in L0 table %d", v, err, at)
	}
	if _, err := d.Get([]byte("l")); err != nil {
		t.Fatalf("Get(l), beside the range: %v", err)
	}
}
