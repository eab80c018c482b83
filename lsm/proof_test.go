package lsm

import (
	"fmt"
	"testing"

	"github.com/monbandb/monban/internal/vfs"
)

// TestDeleteMeetsPutInMemtable: a delete of a key whose only version is a
// put in the active memtable, with nothing older anywhere and no snapshot,
// removes the put; a snapshot that can see the put, or an older version in
// a table, keeps the tombstone.
func TestDeleteMeetsPutInMemtable(t *testing.T) {
	fs := vfs.NewMem()
	d := openMem(t, fs, nil)
	d.Put([]byte("fresh"), []byte("v"))
	d.Delete([]byte("fresh"))
	if n := d.Stats().PutsAnnihilated; n != 1 {
		t.Fatalf("PutsAnnihilated = %d, want 1", n)
	}
	mustGet(t, d, "fresh", "")

	d.Put([]byte("seen"), []byte("v"))
	s := d.NewSnapshot()
	d.Delete([]byte("seen"))
	mustGet(t, s, "seen", "v")
	mustGet(t, d, "seen", "")
	s.Close()

	d.Put([]byte("old"), []byte("v1"))
	d.Flush()
	d.Put([]byte("old"), []byte("v2"))
	d.Delete([]byte("old"))
	mustGet(t, d, "old", "")
	if n := d.Stats().PutsAnnihilated; n != 1 {
		t.Fatalf("PutsAnnihilated = %d, want still 1 (snapshot and older version must keep their tombstones)", n)
	}
	// Recovery replays put and delete from the WAL as written.
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openMem(t, fs, nil)
	defer d.Close()
	for _, k := range []string{"fresh", "seen", "old"} {
		mustGet(t, d, k, "")
	}
}

// TestIgnoreFiltersReadsEveryCoveringTable: on the same data, a miss with
// filters costs no block; with IgnoreFilters it costs one index search and
// one data block per table covering the key.
func TestIgnoreFiltersReadsEveryCoveringTable(t *testing.T) {
	fs := vfs.NewMem()
	d := openMem(t, fs, nil)
	for i := range 1000 {
		d.Put(fmt.Appendf(nil, "k%05d", 2*i), []byte("v"))
	}
	d.Flush()
	d.Close()
	for _, ignore := range []bool{false, true} {
		d := openMem(t, fs, &Options{IgnoreFilters: ignore})
		// Odd keys below the largest, so that every one is in range.
		for i := range 999 {
			mustGet(t, d, fmt.Sprintf("k%05d", 2*i+1), "")
		}
		st := d.Stats().Total
		blocks := st.BlocksRead + st.CacheHits
		if ignore && (st.FilterProbes != 0 || blocks != 999) {
			t.Fatalf("IgnoreFilters: %d filter probes, %d blocks for 999 misses; want 0 and 999", st.FilterProbes, blocks)
		}
		if !ignore && (st.FilterProbes != 999 || blocks != st.FilterFalsePositives || blocks > 30) {
			t.Fatalf("filters: %d probes, %d blocks, %d false positives for 999 misses", st.FilterProbes, blocks, st.FilterFalsePositives)
		}
		d.Close()
	}
}
