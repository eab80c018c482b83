package lsm

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/vfs"
)

// TestOpenRemovesOnlyOwnStrayManifests: Open removes the manifests
// CURRENT does not name once its own is durable — those a crashed
// rollover left, in monban's format or empty — but a file of a
// manifest's name whose bytes are not a manifest of this DB's is nobody's
// stray that Open can prove: it stays, byte for byte. Another DB's
// manifest, copied in, was removed as one of its own (a black-box attack).
func TestOpenRemovesOnlyOwnStrayManifests(t *testing.T) {
	mem := vfs.NewMem()
	d := openMem(t, mem, nil)
	if err := d.Put([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	current := string(readFile(t, mem, "/db/CURRENT"))
	own := readFile(t, mem, "/db/"+current[:len(current)-1])
	junk := bytes.Repeat([]byte("not a manifest "), 14)
	anotherDBs, _ := otherDB(t, mem)
	files := map[string][]byte{
		"MANIFEST-000900": own,  // a crashed rollover's, whole
		"MANIFEST-000901": nil,  // one that crashed before its first byte
		"MANIFEST-000999": junk, // somebody else's bytes
		"MANIFEST-000000": junk,
		"MANIFEST-000902": anotherDBs, // another DB's, in monban's format
	}
	for name, data := range files {
		rewrite(t, mem, "/db/"+name, data)
	}
	d = openMem(t, mem, nil)
	mustGet(t, d, "k", "v")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	checkStrays(t, mem, files, func(name string, data []byte) bool { return data == nil || bytes.Equal(data, own) })
}

// checkStrays checks the files written into /db: those gone says are to
// go are gone, and every other is there byte for byte.
func checkStrays(t *testing.T, fs vfs.FS, files map[string][]byte, gone func(name string, data []byte) bool) {
	t.Helper()
	names, err := fs.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		kept := slices.Contains(names, name)
		switch {
		case gone(name, data):
			if kept {
				t.Errorf("%s was kept", name)
			}
		case !kept:
			t.Errorf("%s, nothing of this DB's, was removed", name)
		case !bytes.Equal(readFile(t, fs, "/db/"+name), data):
			t.Errorf("%s, nothing of this DB's, was changed", name)
		}
	}
}

// otherDB writes a DB of 200 flushed keys other-000… at /other
// (flushedKeys) and returns its manifest and its table.
func otherDB(t *testing.T, fs vfs.FS) (manifestBytes, table []byte) {
	t.Helper()
	keys := make([]string, 200) // more sequence numbers than the DBs they are copied into have
	for i := range keys {
		keys[i] = fmt.Sprintf("other-%03d", i)
	}
	num := flushedKeys(t, fs, "/other", keys...)
	current := string(readFile(t, fs, "/other/CURRENT"))
	return readFile(t, fs, "/other/"+current[:len(current)-1]),
		readFile(t, fs, "/other/"+manifest.MakeFilename(manifest.KindTable, num))
}

// flushedKeys writes a DB at dir holding keys (each set to "v") in one
// flushed table, closes it, and returns the table's number.
func flushedKeys(t *testing.T, fs vfs.FS, dir string, keys ...string) uint64 {
	t.Helper()
	d, num := openFlushed(t, fs, dir, keys...)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return num
}

// openFlushed is flushedKeys leaving the DB open: it puts keys (each set
// to "v", synced) and flushes them into one table, whose number it
// returns with the DB.
func openFlushed(t *testing.T, fs vfs.FS, dir string, keys ...string) (*DB, uint64) {
	t.Helper()
	d, err := Open(dir, &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		if err := d.Put([]byte(k), []byte("v"), Sync); err != nil {
			t.Fatal(err)
		}
	}
	return d, flushedTable(t, d)
}

// flushedTable flushes d, which must then hold one table, and returns
// its number.
func flushedTable(t *testing.T, d *DB) uint64 {
	t.Helper()
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	tables, err := d.Tables()
	if err != nil || len(tables) != 1 {
		t.Fatalf("Tables() = %v, %v", tables, err)
	}
	return tables[0].FileNum
}

// TestOpenRemovesOnlyOwnStrayTables: tables are written under a temporary
// name and take their own once whole, so Open, once its recovery is
// clean, removes a file of the temporary name (a write a crash cut short)
// and a whole table no manifest names whose entries the manifest
// accounts for, but leaves byte for byte a file of a table's name that
// does not read as a table, or another DB's table (its db.id), whatever
// its number and sequence numbers: nothing proves it obsolete (the first
// was deleted as "a write a crash cut short", the second for its sequence
// numbers, or refused as the sign of a manifest that lost edits). Repair
// trusts the manifest and sets them aside in lost/, unmerged.
func TestOpenRemovesOnlyOwnStrayTables(t *testing.T) {
	for _, repair := range []bool{false, true} {
		mem := vfs.NewMem()
		live := flushedKeys(t, mem, "/db", "k")
		own := readFile(t, mem, "/db/"+manifest.MakeFilename(manifest.KindTable, live))
		junk := bytes.Repeat([]byte("not a table "), 100)
		_, anotherDBs := otherDB(t, mem)
		files := map[string][]byte{
			"000900.sst":     own,      // a whole stray: a compaction's input the deleter missed
			"000901.tmp.sst": own[:77], // a table cut short
			"000902.tmp.sst": nil,
			"000903.sst":     junk, // somebody else's bytes
			"000904.sst":     nil,
			"000905.sst":     anotherDBs, // sequence numbers past this DB's: no lost edit explains them
			"000001.sst":     anotherDBs, // under a number this DB gave its first manifest
		}
		for name, data := range files {
			rewrite(t, mem, "/db/"+name, data)
		}
		var report *RepairReport
		if repair {
			r, err := RepairWith("/db", &Options{FS: mem}, RepairOptions{})
			if err != nil {
				t.Fatal(err)
			}
			report = r
		}
		d := openMem(t, mem, nil)
		mustGet(t, d, "k", "v")
		mustGet(t, d, "other-000", "") // another DB's table is not merged in
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		// Repair sets aside what Open leaves.
		checkStrays(t, mem, files, func(name string, data []byte) bool {
			return repair || strings.HasSuffix(name, ".tmp.sst") || bytes.Equal(data, own)
		})
		if report == nil {
			continue
		}
		if report.TrustedManifest == "" {
			t.Errorf("Repair trusted no manifest, though another DB's tables are all this one lacks:\n%v", report)
		}
		for name, fate := range map[string]Fate{"000901.tmp.sst": FateObsolete, "000902.tmp.sst": FateObsolete,
			"000903.sst": FateNotMonban, "000904.sst": FateNotMonban, "000905.sst": FateObsolete, "000001.sst": FateObsolete} {
			i := slices.IndexFunc(report.Files, func(f RepairedFile) bool { return f.Name == name })
			if i < 0 || report.Files[i].Fate != fate {
				t.Errorf("Repair's report on %s: %+v, want it set aside, %v", name, report.Files, fate)
			} else if got := readFile(t, mem, "/db/"+report.Files[i].Lost); !bytes.Equal(got, files[name]) {
				t.Errorf("%s set aside to %s, which holds %q", name, report.Files[i].Lost, got)
			}
		}
	}
}

// TestOpenRemovesItsOwnTablesBroughtBack: a crash that loses an unlink
// brings back a table no manifest names. A checkpoint's tables carry the
// id of the DB it was taken from, and Repair drew the DB a new id, so
// such a table read as another DB's and stayed for good (a black-box
// machine-crash sweep). The deleter now syncs the directory before it
// reports a table deleted; a checkpoint records its source's id as a
// former id of its own (a crash between unlink and sync still brings the
// table back); and Repair keeps the trusted manifest's ids, so a table or
// manifest from before it, brought back, is the DB's own to remove.
func TestOpenRemovesItsOwnTablesBroughtBack(t *testing.T) {
	keys := make([]string, 50)
	for i := range keys {
		keys[i] = fmt.Sprintf("k%03d", i)
	}
	t.Run("checkpoint", func(t *testing.T) {
		mem := vfs.NewMem()
		d, linked := openFlushed(t, mem, "/db", keys...)
		if err := d.Checkpoint("/ck"); err != nil {
			t.Fatal(err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		var crashed *vfs.MemFS
		ck, err := Open("/ck", &Options{FS: mem, EventListener: &EventListener{TableDeleted: func(i TableFileInfo) {
			if i.FileNum == linked {
				crashed = mem.CrashClone() // the machine stops as the deletion is reported
			}
		}}})
		if err != nil {
			t.Fatal(err)
		}
		if err := ck.Put([]byte("k000"), []byte("new"), Sync); err != nil {
			t.Fatal(err)
		}
		if err := ck.Compact(); err != nil {
			t.Fatal(err)
		}
		if err := ck.Close(); err != nil {
			t.Fatal(err)
		}
		if crashed == nil {
			t.Fatalf("the compaction did not delete the checkpoint's table %06d", linked)
		}
		ck, err = Open("/ck", &Options{FS: crashed})
		if err != nil {
			t.Fatal(err)
		}
		mustGet(t, ck, "k000", "new")
		if err := ck.Close(); err != nil {
			t.Fatal(err)
		}
		name := manifest.MakeFilename(manifest.KindTable, linked)
		if names, err := crashed.List("/ck"); err != nil || slices.Contains(names, name) {
			t.Fatalf("%s, a table the checkpoint let go of, is in /ck after the crash and an Open: %v, %v", name, names, err)
		}
		// A crash between the unlink and the sync brings it back all the
		// same: the checkpoint records its source's id as a former id of
		// its own, so the table is its own to delete.
		rewrite(t, mem, "/ck/"+name, readFile(t, mem, "/db/"+name))
		ck, err = Open("/ck", &Options{FS: mem})
		if err != nil {
			t.Fatal(err)
		}
		if err := ck.Close(); err != nil {
			t.Fatal(err)
		}
		if names, err := mem.List("/ck"); err != nil || slices.Contains(names, name) {
			t.Fatalf("%s, put back as a lost unlink would, is still in /ck after an Open: %v, %v", name, names, err)
		}
	})
	t.Run("repair", func(t *testing.T) {
		mem := vfs.NewMem()
		name := manifest.MakeFilename(manifest.KindTable, flushedKeys(t, mem, "/db", keys...))
		table := readFile(t, mem, "/db/"+name)
		current := string(readFile(t, mem, "/db/CURRENT"))
		manifestName := current[:len(current)-1]
		oldManifest := readFile(t, mem, "/db/"+manifestName)
		if _, err := RepairWith("/db", &Options{FS: mem}, RepairOptions{}); err != nil {
			t.Fatal(err)
		}
		// The unlinks of Repair's step 6, as a crash would have lost them.
		rewrite(t, mem, "/db/"+name, table)
		rewrite(t, mem, "/db/"+manifestName, oldManifest)
		d, err := Open("/db", &Options{FS: mem})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		names, err := mem.List("/db")
		if err != nil {
			t.Fatal(err)
		}
		for _, left := range []string{name, manifestName} {
			if slices.Contains(names, left) {
				t.Errorf("%s, which Repair removed, is still in /db after an Open: %v", left, names)
			}
		}
	})
}

// TestCheckpointLeavesItsSourcesLaterTables: a table the source DB wrote
// after a checkpoint carries the id the checkpoint records as a former id
// of its own, but the two numbered their writes apart from then on: the
// checkpoint's Open deleted such a table copied in (its sequence numbers
// "accounted for"), or, with numbers past its own, refused the DB as one
// whose manifest lost edits, and Repair then merged the source's writes
// over the checkpoint's synced delete (a black-box attack). Its Open must
// leave the table be, and Repair set it aside.
func TestCheckpointLeavesItsSourcesLaterTables(t *testing.T) {
	for _, later := range []int{5, 300} { // the source's writes after the checkpoint: fewer than the checkpoint's own, and more
		mem := vfs.NewMem()
		src, err := Open("/db", &Options{FS: mem})
		if err != nil {
			t.Fatal(err)
		}
		if err := src.Put([]byte("k"), []byte("old"), Sync); err != nil {
			t.Fatal(err)
		}
		if err := src.Checkpoint("/ck"); err != nil {
			t.Fatal(err)
		}
		for i := range later {
			if err := src.Put(fmt.Appendf(nil, "s%03d", i), []byte("source"), Sync); err != nil {
				t.Fatal(err)
			}
		}
		if err := src.Put([]byte("k"), []byte("source-new"), Sync); err != nil {
			t.Fatal(err)
		}
		sourceTable := readFile(t, mem, "/db/"+manifest.MakeFilename(manifest.KindTable, flushedTable(t, src)))
		if err := src.Close(); err != nil {
			t.Fatal(err)
		}
		ck, err := Open("/ck", &Options{FS: mem})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 100 {
			if err := ck.Put(fmt.Appendf(nil, "c%03d", i), []byte("ck"), Sync); err != nil {
				t.Fatal(err)
			}
		}
		if err := ck.Delete([]byte("k"), Sync); err != nil {
			t.Fatal(err)
		}
		if err := ck.Close(); err != nil {
			t.Fatal(err)
		}
		rewrite(t, mem, "/ck/900000.sst", sourceTable)
		for _, repair := range []bool{false, true} {
			if repair {
				rep, err := RepairWith("/ck", &Options{FS: mem}, RepairOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if rep.TrustedManifest == "" {
					t.Fatalf("later=%d: Repair trusted no manifest:\n%v", later, rep)
				}
			}
			ck, err := Open("/ck", &Options{FS: mem})
			if err != nil {
				t.Fatalf("later=%d, repair=%v: Open: %v", later, repair, err)
			}
			mustGet(t, ck, "k", "")
			mustGet(t, ck, "s000", "")
			mustGet(t, ck, "c000", "ck")
			if err := ck.Close(); err != nil {
				t.Fatal(err)
			}
			names, err := mem.List("/ck")
			if err != nil {
				t.Fatal(err)
			}
			if kept := slices.Contains(names, "900000.sst"); kept == repair {
				t.Fatalf("later=%d, repair=%v: the source's later table in /ck: %v (Open leaves it, Repair sets it aside)", later, repair, names)
			}
		}
	}
}

// TestRepairWithoutAManifestKeepsTheID: Repair with no manifest to trust
// left the DB's id to the next Open, so its tables carried none, and one
// copied into another DB was that DB's to delete; then it drew a new id,
// so the inputs a crash after its commit brought back carried another
// DB's id, and stayed for good (black-box attacks). Where every table and
// WAL it merges carries one id, the repaired DB keeps it, and its new
// tables carry it: an input put back is its own to delete. A crashed
// Repair's staging directory, which only the next Repair removed, Open
// removes too.
func TestRepairWithoutAManifestKeepsTheID(t *testing.T) {
	mem := vfs.NewMem()
	num := flushedKeys(t, mem, "/db", "k")
	name := manifest.MakeFilename(manifest.KindTable, num)
	input := readFile(t, mem, "/db/"+name)
	ro, err := Open("/db", &Options{FS: mem, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	want := ro.vs.DBID()
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	names, err := mem.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if kind, _, ok := manifest.ParseFilename(n); ok && (kind == manifest.KindManifest || kind == manifest.KindCurrent) {
			if err := mem.Remove("/db/" + n); err != nil {
				t.Fatal(err)
			}
		}
	}
	rep, err := RepairWith("/db", &Options{FS: mem}, RepairOptions{})
	if err != nil || rep.TrustedManifest != "" || len(rep.Tables) != 1 {
		t.Fatalf("Repair: %v, %v", rep, err)
	}
	// What a crash after the commit leaves: an input, the staging.
	rewrite(t, mem, "/db/"+name, input)
	if err := mem.MkdirAll("/db/" + repairStaging); err != nil {
		t.Fatal(err)
	}
	rewrite(t, mem, "/db/"+repairStaging+"/CURRENT", []byte(rep.Manifest+"\n"))
	d := openMem(t, mem, nil)
	tr, err := d.readTableFile(rep.Tables[0], true)
	if err != nil {
		t.Fatal(err)
	}
	id := tr.Properties().DBID
	tr.Close()
	if id == 0 || id != d.vs.DBID() || id != want {
		t.Fatalf("Repair's table carries DB id %016x, the repaired DB's is %016x, the DB's before %016x", id, d.vs.DBID(), want)
	}
	mustGet(t, d, "k", "v")
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	names, err = mem.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	for _, left := range []string{name, repairStaging} {
		if slices.Contains(names, left) {
			t.Errorf("%s, left by a crash after Repair's commit, is still in /db after an Open: %v", left, names)
		}
	}
}
