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

// otherDB writes a DB of one flushed key at /other (oneFlushedKey) and
// returns its manifest and its table.
func otherDB(t *testing.T, fs vfs.FS) (manifestBytes, table []byte) {
	t.Helper()
	num := oneFlushedKey(t, fs, "/other")
	current := string(readFile(t, fs, "/other/CURRENT"))
	return readFile(t, fs, "/other/"+current[:len(current)-1]),
		readFile(t, fs, "/other/"+manifest.MakeFilename(manifest.KindTable, num))
}

// oneFlushedKey writes a DB at dir whose one key, flushed, is in one
// table, closes it, and returns the table's number.
func oneFlushedKey(t *testing.T, fs vfs.FS, dir string) uint64 {
	t.Helper()
	d, err := Open(dir, &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Put([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	tables, err := d.Tables()
	if err != nil || len(tables) != 1 {
		t.Fatalf("Tables() = %v, %v", tables, err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return tables[0].FileNum
}

// TestOpenRemovesOnlyOwnStrayTables: tables are written under a temporary
// name and take their own once whole, so Open, once its recovery is
// clean, removes a file of the temporary name (a write a crash cut short)
// and a whole table no manifest names whose entries the manifest
// accounts for, but leaves byte for byte a file of a table's name that
// does not read as a table, or another DB's table (its db.id): nothing
// proves it obsolete (the first was deleted as "a write a crash cut
// short", the second for its sequence numbers, before). Repair sets them
// aside in lost/.
func TestOpenRemovesOnlyOwnStrayTables(t *testing.T) {
	for _, repair := range []bool{false, true} {
		mem := vfs.NewMem()
		live := oneFlushedKey(t, mem, "/db")
		own := readFile(t, mem, "/db/"+manifest.MakeFilename(manifest.KindTable, live))
		junk := bytes.Repeat([]byte("not a table "), 100)
		_, anotherDBs := otherDB(t, mem)
		files := map[string][]byte{
			"000900.sst":     own,      // a whole stray: a compaction's input the deleter missed
			"000901.tmp.sst": own[:77], // a table cut short
			"000902.tmp.sst": nil,
			"000903.sst":     junk, // somebody else's bytes
			"000904.sst":     nil,
			"000905.sst":     anotherDBs, // whose entries this DB's manifest would account for
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
		for name, fate := range map[string]Fate{"000901.tmp.sst": FateObsolete, "000902.tmp.sst": FateObsolete,
			"000903.sst": FateNotMonban, "000904.sst": FateNotMonban} {
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
// brings a table back that no manifest names. A checkpoint's tables carry
// the id of the DB it was taken from, and a Repair drew a new id for the
// DB, so Open took such a table for another DB's and kept it for good (a
// black-box machine-crash sweep). Under a number the DB gave out itself,
// a table whose entries are accounted for is its own to remove; and
// Repair keeps the id a trusted manifest gives, so the manifest it
// replaced, brought back the same way, is the DB's own too.
func TestOpenRemovesItsOwnTablesBroughtBack(t *testing.T) {
	for _, how := range []string{"checkpoint", "repair"} {
		t.Run(how, func(t *testing.T) {
			mem := vfs.NewMem()
			d := openMem(t, mem, nil)
			for i := range 50 {
				if err := d.Put(fmt.Appendf(nil, "k%03d", i), []byte("v"), Sync); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
			tables, err := d.Tables()
			if err != nil || len(tables) != 1 {
				t.Fatalf("Tables() = %v, %v", tables, err)
			}
			name := manifest.MakeFilename(manifest.KindTable, tables[0].FileNum)
			dir := "/db"
			if how == "checkpoint" {
				if err := d.Checkpoint("/ck"); err != nil {
					t.Fatal(err)
				}
				dir = "/ck"
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			table := readFile(t, mem, dir+"/"+name)
			current := string(readFile(t, mem, dir+"/CURRENT"))
			manifestName := current[:len(current)-1]
			oldManifest := readFile(t, mem, dir+"/"+manifestName)
			// The table leaves: compacted away in the checkpoint, merged
			// into new tables by Repair.
			if how == "checkpoint" {
				ck, err := Open(dir, &Options{FS: mem})
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
			} else if _, err := RepairWith(dir, &Options{FS: mem}, RepairOptions{}); err != nil {
				t.Fatal(err)
			}
			rewrite(t, mem, dir+"/"+name, table) // the unlinks a crash lost
			if how == "repair" {
				rewrite(t, mem, dir+"/"+manifestName, oldManifest)
			}
			d, err = Open(dir, &Options{FS: mem})
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			names, err := mem.List(dir)
			if err != nil {
				t.Fatal(err)
			}
			if slices.Contains(names, name) {
				t.Fatalf("%s, a table this DB let go of, is still in %s: %v", name, dir, names)
			}
			if how == "repair" && slices.Contains(names, manifestName) {
				t.Fatalf("%s, the manifest Repair replaced, is still in %s: %v", manifestName, dir, names)
			}
		})
	}
}
