package lsm

import (
	"fmt"
	"testing"

	"github.com/monbandb/monban/compaction"
	"github.com/monbandb/monban/vfs"
)

// TestDeleteMeetsPutInMemtable: a delete of a key whose only version is a
// put in the memtable is a tombstone there like any other (a reader may
// still see the put); the flush drops both when nothing older exists and
// no snapshot can see the put, and keeps what a snapshot or an older
// version in a table needs.
func TestDeleteMeetsPutInMemtable(t *testing.T) {
	fs := vfs.NewMem()
	d := openMem(t, fs, nil)
	d.Put([]byte("fresh"), []byte("v"))
	d.Delete([]byte("fresh"))
	mustGet(t, d, "fresh", "")
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if tables, _ := d.Tables(); len(tables) != 0 {
		t.Fatalf("flush of a put and its delete wrote %d tables, want none", len(tables))
	}
	if drops := d.Stats().FlushDrops; drops[compaction.DropShadowed] != 1 || drops[compaction.DropBottom] != 1 {
		t.Fatalf("flush drops %v, want the put shadowed and the tombstone at the bottom", drops)
	}
	mustGet(t, d, "fresh", "")

	d.Put([]byte("seen"), []byte("v"))
	s := d.NewSnapshot()
	d.Delete([]byte("seen"))
	d.Put([]byte("old"), []byte("v1"))
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	mustGet(t, s, "seen", "v")
	mustGet(t, d, "seen", "")
	s.Close()
	d.Put([]byte("old"), []byte("v2"))
	d.Delete([]byte("old"))
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	mustGet(t, d, "old", "")
	var tombstones uint64
	tables, _ := d.Tables()
	for _, tb := range tables {
		tombstones += tb.Tombstones
	}
	if tombstones != 2 {
		t.Fatalf("tables hold %d tombstones, want 2 (one a snapshot saw the put behind, one over an older version)", tombstones)
	}
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

// TestProofOutlivesTableCache: with room for one open table, a delete of
// an absent key is still elided after the table cache has closed the other
// tables' readers, because each table's filter stays with its metadata
// (FileMetadata.Filter) — where the proof once counted a closed table as
// "maybe" and wrote a tombstone — and a Get of an absent key reopens a
// table only when its filter admits the key, where it once reopened every
// closed table its range covered before asking the filter.
func TestProofOutlivesTableCache(t *testing.T) {
	ffs := vfs.NewFault(vfs.NewMem())
	d := openMem(t, ffs, &Options{MaxOpenFiles: 1, L0CompactionThreshold: 8, L0SlowdownWritesThreshold: 16, L0StopWritesThreshold: 20})
	defer d.Close()
	for table := range 3 {
		for i := range 100 {
			if err := d.Put(fmt.Appendf(nil, "k%03d", 3*i+table), []byte("v")); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if n := d.Stats().Levels[0].Files; n != 3 {
		t.Fatalf("%d L0 tables, want 3 overlapping ones", n)
	}
	before := d.Stats().DeletesElided
	for i := range 100 {
		if err := d.Delete(fmt.Appendf(nil, "k%03d-absent", i)); err != nil {
			t.Fatal(err)
		}
	}
	if elided := d.Stats().DeletesElided - before; elided < 90 {
		t.Fatalf("%d of 100 deletes of absent keys elided with one table open; want nearly all", elided)
	}
	opens := ffs.Count(vfs.OpOpen)
	for i := range 100 {
		if _, err := d.Get(fmt.Appendf(nil, "k%03d-absent", i)); err != ErrNotFound {
			t.Fatal(err)
		}
	}
	// Three tables at ~1% false positives: a few reopens, not hundreds.
	if n := ffs.Count(vfs.OpOpen) - opens; n > 10 {
		t.Fatalf("100 Gets of absent keys opened %d files with one table open; want only the false positives' tables", n)
	}
}
