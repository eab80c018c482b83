package lsm

import (
	"fmt"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestElisionAfterSnapshotCloses: a snapshot open while the deletes of
// most keys are compacted into the last level keeps them there, the
// tombstones beside the data they hide, and no rewrite happens while it
// is open. Its Close alone must get the space back: the picker rewrites
// each such table (compaction.PickElisionOnly), so that no last-level
// table holds a tombstone, point or range, and the level is the size of
// what is left.
func TestElisionAfterSnapshotCloses(t *testing.T) {
	for _, ranged := range []bool{false, true} {
		t.Run(fmt.Sprintf("DeleteRange=%v", ranged), func(t *testing.T) {
			d := openMem(t, vfs.NewMem(), &Options{MemtableSize: 64 << 10})
			defer d.Close()
			m := model{}
			for i := range 5000 {
				k, v := fmt.Sprintf("k%05d", i), fmt.Sprintf("value %d %040d", i, i)
				if err := d.Put([]byte(k), []byte(v)); err != nil {
					t.Fatal(err)
				}
				m[k] = v
			}
			if err := d.Compact(); err != nil {
				t.Fatal(err)
			}
			snap := d.NewSnapshot()
			if ranged {
				if err := d.DeleteRange([]byte("k00500"), []byte("k04500")); err != nil {
					t.Fatal(err)
				}
				m.deleteRange([]byte("k00500"), []byte("k04500"))
			} else {
				for i := 500; i < 4500; i++ {
					k := fmt.Sprintf("k%05d", i)
					if err := d.Delete([]byte(k)); err != nil {
						t.Fatal(err)
					}
					delete(m, k)
				}
			}
			if err := d.Compact(); err != nil {
				t.Fatal(err)
			}
			d.waitIdle()
			held := d.Stats()
			last := held.Levels[NumLevels-1]
			if last.RangeDels == 0 && lastLevelTombstones(t, d) == 0 {
				t.Fatal("the snapshot kept no tombstone in the last level: the test needs some")
			}
			mustGet(t, snap, "k01000", "value 1000 "+fmt.Sprintf("%040d", 1000))
			// The picker runs again (a flush ends) and must not rewrite what
			// the snapshot still splits: the rewrite would drop nothing.
			if err := d.Put([]byte("z"), []byte("z")); err != nil {
				t.Fatal(err)
			}
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
			d.waitIdle()
			if got := d.Stats().Compactions.Rewrite; got != held.Compactions.Rewrite {
				t.Fatalf("%d tables rewritten while the snapshot still needed their tombstones", got-held.Compactions.Rewrite)
			}
			m["z"] = "z"
			if err := snap.Close(); err != nil {
				t.Fatal(err)
			}
			d.waitIdle()
			after := d.Stats()
			if n := lastLevelTombstones(t, d); n != 0 || after.Levels[NumLevels-1].RangeDels != 0 {
				t.Errorf("the snapshot closed: %d point tombstones and %d range-tombstone spans left in the last level", n, after.Levels[NumLevels-1].RangeDels)
			}
			if got := after.Compactions.Rewrite - held.Compactions.Rewrite; got == 0 {
				t.Error("the snapshot closed: no table rewritten")
			}
			if before, now := last.Bytes, after.Levels[NumLevels-1].Bytes; now > before/3 {
				t.Errorf("the last level holds %d bytes, %d before the snapshot closed: a fifth of the keys are left", now, before)
			}
			checkModel(t, d, m)
		})
	}
}

// lastLevelTombstones counts the point tombstones of the last level.
func lastLevelTombstones(t *testing.T, d *DB) uint64 {
	t.Helper()
	tables, err := d.Tables()
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, ti := range tables {
		if ti.Level == NumLevels-1 {
			n += ti.Tombstones
		}
	}
	return n
}

// TestElisionWaitsForOlderSnapshots: a snapshot older than every entry of
// a last-level table, its range tombstone included, keeps the tombstone
// through a merge (keyspan.Compact drops only the lowest stripe's), so the
// table must not be rewritten while it is open: a rewrite would keep the
// tombstone and be picked again, forever, holding up Compact too (a
// black-box attack found it so). Its Close lets the rewrite run, once.
func TestElisionWaitsForOlderSnapshots(t *testing.T) {
	for _, ranged := range []bool{false, true} {
		t.Run(fmt.Sprintf("DeleteRange=%v", ranged), func(t *testing.T) {
			d := openMem(t, vfs.NewMem(), nil)
			defer d.Close()
			snap := d.NewSnapshot() // of the empty DB
			if err := d.Put([]byte("b"), []byte("1")); err != nil {
				t.Fatal(err)
			}
			var err error
			if ranged {
				err = d.DeleteRange([]byte("a"), []byte("bb"))
			} else {
				err = d.Delete([]byte("b"))
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Compact(); err != nil {
				t.Fatal(err)
			}
			d.waitIdle()
			before := d.Stats().Compactions.Rewrite
			for range 3 {
				if err := d.Put([]byte("z"), []byte("z")); err != nil {
					t.Fatal(err)
				}
				if err := d.Compact(); err != nil {
					t.Fatal(err)
				}
				d.waitIdle()
			}
			if got := d.Stats().Compactions.Rewrite - before; got > 3 {
				t.Fatalf("%d rewrites while the snapshot kept the tombstone, at most one a Compact", got)
			}
			if err := snap.Close(); err != nil {
				t.Fatal(err)
			}
			d.waitIdle()
			if n, spans := lastLevelTombstones(t, d), d.Stats().Levels[NumLevels-1].RangeDels; n != 0 || spans != 0 {
				t.Fatalf("the snapshot closed: %d point tombstones and %d spans left in the last level", n, spans)
			}
			mustGet(t, d, "b", "")
			mustGet(t, d, "z", "z")
		})
	}
}

// TestSnapshotCloseInsideThePick: a snapshot that closes after the picker
// looked at the snapshots (and found it keeping a table from an
// elision-only rewrite) but before it stored what it waits for finds the
// old value, which does not hold it, and asks nothing. The picker must
// see the Close itself and pick again, or the tombstones stay until some
// later flush or compaction (a review found the window).
func TestSnapshotCloseInsideThePick(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	snap := d.NewSnapshot()
	if err := d.Put([]byte("b"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := d.DeleteRange([]byte("a"), []byte("bb")); err != nil {
		t.Fatal(err)
	}
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	d.waitIdle()
	if d.Stats().Levels[NumLevels-1].RangeDels == 0 {
		t.Fatal("the snapshot kept no range tombstone in the last level: the test needs one")
	}
	d.mu.Lock()
	d.snapshotsWaited.Store(nil) // as a pick before the table reached L6 left it
	d.hooks.beforeWaitedStore = func() {
		d.hooks.beforeWaitedStore = nil
		if err := snap.Close(); err != nil { // finds nil: asks nothing
			t.Error(err)
		}
	}
	d.maybeScheduleCompaction()
	d.mu.Unlock()
	d.waitIdle()
	if n := d.Stats().Levels[NumLevels-1].RangeDels; n != 0 {
		t.Fatalf("the snapshot closed inside the pick: %d range tombstones left in the last level", n)
	}
}

// TestCompactLeavesWhatASnapshotKeeps: Compact rewrites a last-level
// table that holds older versions or tombstones once no snapshot needs
// them. It rewrote one that an open snapshot kept, whole, on every call
// (a black-box attack: four Compacts, four rewrites of the same 200
// entries). While the snapshot is open Compact leaves it; once it closes,
// one rewrite drops the older versions.
func TestCompactLeavesWhatASnapshotKeeps(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	put := func(v string) {
		for i := range 100 {
			if err := d.Put(fmt.Appendf(nil, "k%03d", i), []byte(v)); err != nil {
				t.Fatal(err)
			}
		}
	}
	put("old")
	snap := d.NewSnapshot()
	put("new")
	for range 3 {
		if err := d.Compact(); err != nil {
			t.Fatal(err)
		}
	}
	if n := d.Stats().Compactions.Rewrite; n != 0 {
		t.Fatalf("%d rewrites of a table the open snapshot keeps", n)
	}
	if v, err := snap.Get([]byte("k007")); err != nil || string(v) != "old" {
		t.Fatalf("the snapshot reads %q, %v", v, err)
	}
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	tables, err := d.Tables()
	if err != nil {
		t.Fatal(err)
	}
	var entries uint64
	for _, tb := range tables {
		entries += tb.Entries
	}
	if n := d.Stats().Compactions.Rewrite; n != 1 || entries != 100 {
		t.Fatalf("after the snapshot closed: %d rewrites, %d entries in the tables; want 1 and 100", n, entries)
	}
}
