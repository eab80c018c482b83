package lsm

import (
	"bytes"
	"errors"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// Repair and Open on directories that hold no monban DB: another
// program's, an empty one. Neither may change a byte of what is there
// unless forced, and a forced Repair keeps every byte under the directory.

// treeFiles maps every file under dir, lost/ included, to its contents,
// by path relative to dir.
func treeFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sameTree fails unless dir holds exactly the files of before, byte for
// byte: nothing created (LOCK included), removed or changed.
func sameTree(t *testing.T, dir string, before map[string]string, what string) {
	t.Helper()
	if after := treeFiles(t, dir); !maps.Equal(after, before) {
		t.Fatalf("%s changed the directory: before %v, after %v", what, slices.Sorted(maps.Keys(before)), slices.Sorted(maps.Keys(after)))
	}
}

// goLevelDBDir copies testdata/goleveldb (a DB goleveldb v1.0.0 wrote:
// 1000 keys in its log, its manifest, CURRENT, LOG, an empty LOCK) to a
// new directory.
func goLevelDBDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/goleveldb")); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "README.md")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// levelDBLikeDir makes a directory shaped like a LevelDB's, with names
// monban also uses and contents that are not monban's: CURRENT naming a
// manifest, the manifest, a log and a table of random bytes (the table
// ending in LevelDB's magic number), and files of names monban never
// writes.
func levelDBLikeDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	levelDBMagic := []byte{0x57, 0xfb, 0x80, 0x8b, 0x24, 0x75, 0x47, 0xdb}
	for name, data := range map[string][]byte{
		"CURRENT":         []byte("MANIFEST-000002\n"),
		"MANIFEST-000002": random(300),
		"000003.log":      random(40000),
		"000004.sst":      append(random(5000), levelDBMagic...),
		"000005.ldb":      random(3000),
		"LOG":             []byte("2026/12/01-21:00:00.000000 7f00 Recovering log #3\n"),
		"notes.txt":       []byte("keep me\n"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestForeignDirectory: Open refuses another program's directory as not a
// monban DB, without pointing to Repair; Repair refuses it too; both
// leave every file as it was, LOCK included. Forced, Repair makes an
// empty monban DB there, every original file's bytes still under the
// directory (monban-named ones in lost/, others where they were), and the
// report names each.
func TestForeignDirectory(t *testing.T) {
	for name, mk := range map[string]func(*testing.T) string{"goleveldb": goLevelDBDir, "leveldb-like": levelDBLikeDir} {
		t.Run(name, func(t *testing.T) {
			dir := mk(t)
			before := treeFiles(t, dir)

			d, err := Open(dir, nil)
			if err == nil {
				d.Close()
				t.Fatal("Open succeeded")
			}
			t.Logf("Open: %v", err)
			if !errors.Is(err, ErrNotDB) || errors.Is(err, ErrCorruption) || strings.Contains(strings.ToLower(err.Error()), "repair") {
				t.Errorf("Open: %v; want ErrNotDB, not ErrCorruption, and no advice to repair", err)
			}
			sameTree(t, dir, before, "the refused Open")

			rep, err := Repair(dir, nil)
			t.Logf("Repair: %v", err)
			if !errors.Is(err, ErrNotDB) || !strings.Contains(err.Error(), "CURRENT") || !strings.Contains(err.Error(), "Force") {
				t.Errorf("Repair: %v; want ErrNotDB naming what it found and how to force it", err)
			}
			sameTree(t, dir, before, "the refused Repair")

			rep, err = RepairWith(dir, nil, RepairOptions{Force: true})
			if err != nil {
				t.Fatalf("forced Repair: %v", err)
			}
			t.Logf("%v", rep)
			after := treeFiles(t, dir)
			kept := map[string]bool{}
			for _, data := range after {
				kept[data] = true
			}
			for n, data := range before {
				if !kept[data] {
					t.Errorf("the bytes of %s are nowhere under the directory after a forced Repair", n)
				}
				if n != "LOCK" && !slices.ContainsFunc(rep.Files, func(f RepairedFile) bool { return f.Name == n }) {
					t.Errorf("the report does not say what became of %s", n)
				}
			}
			for n, data := range before {
				if filepath.Ext(n) == ".ldb" || n == "LOG" || n == "notes.txt" {
					if after[n] != data {
						t.Errorf("%s, a name monban never writes, was moved or changed", n)
					}
				}
			}
			d, err = Open(dir, nil)
			if err != nil {
				t.Fatalf("Open after a forced Repair: %v", err)
			}
			defer d.Close()
			if got := dbContents(t, d); len(got) != 0 {
				t.Fatalf("the forced Repair made a DB of %d keys from files that are not monban's", len(got))
			}
		})
	}
}

// TestRepairNoDB: a directory with nothing of a DB in it, empty or holding
// a note, is not repaired into one, forced or not, and gets no file.
func TestRepairNoDB(t *testing.T) {
	for name, files := range map[string]map[string]string{"empty": {}, "a note": {"notes.txt": "hello\n"}} {
		t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
			dir := t.TempDir()
			for n, data := range files {
				if err := os.WriteFile(filepath.Join(dir, n), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, force := range []bool{false, true} {
				if _, err := RepairWith(dir, nil, RepairOptions{Force: force}); !errors.Is(err, ErrNotDB) {
					t.Errorf("Repair (force %v): %v, want ErrNotDB", force, err)
				}
				sameTree(t, dir, files, "the refused Repair")
			}
		})
	}
}

// TestRefusedOpenLeavesNoLock: an Open refused for damage (a WAL and a
// table, no CURRENT) leaves no LOCK it created, and one that was there.
func TestRefusedOpenLeavesNoLock(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(dir, &Options{MemtableSize: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if err := d.Put([]byte{byte(i)}, bytes.Repeat([]byte("v"), 100)); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"CURRENT", "LOCK"} {
		if err := os.Remove(filepath.Join(dir, n)); err != nil {
			t.Fatal(err)
		}
	}
	before := treeFiles(t, dir)
	if _, err := Open(dir, nil); !errors.Is(err, ErrCorruption) {
		t.Fatalf("Open without CURRENT: %v, want ErrCorruption", err)
	}
	sameTree(t, dir, before, "the refused Open")

	if err := os.WriteFile(filepath.Join(dir, "LOCK"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	before = treeFiles(t, dir)
	if _, err := Open(dir, nil); !errors.Is(err, ErrCorruption) {
		t.Fatalf("Open without CURRENT: %v, want ErrCorruption", err)
	}
	sameTree(t, dir, before, "the refused Open")
}

// TestErrorIfExists: the two options that make Open's "create or open"
// one of the two, refused without a file written.
func TestErrorIfExists(t *testing.T) {
	dir := t.TempDir()
	if _, err := Open(dir, &Options{ErrorIfNotExists: true}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ErrorIfNotExists on an empty directory: %v, want fs.ErrNotExist", err)
	}
	sameTree(t, dir, map[string]string{}, "the refused Open")
	missing := filepath.Join(dir, "missing")
	if _, err := Open(missing, &Options{ErrorIfNotExists: true}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ErrorIfNotExists on a missing directory: %v, want fs.ErrNotExist", err)
	}
	if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the refused Open created %s (%v)", missing, err)
	}
	d, err := Open(dir, &Options{ErrorIfExists: true})
	if err != nil {
		t.Fatalf("ErrorIfExists on an empty directory: %v", err)
	}
	if err := d.Put([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	d.Close()
	before := treeFiles(t, dir)
	if _, err := Open(dir, &Options{ErrorIfExists: true}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("ErrorIfExists on a DB: %v, want fs.ErrExist", err)
	}
	sameTree(t, dir, before, "the refused Open")
	d, err = Open(dir, &Options{ErrorIfNotExists: true})
	if err != nil {
		t.Fatalf("ErrorIfNotExists on a DB: %v", err)
	}
	mustGet(t, d, "k", "v")
	d.Close()
}

// TestForcedRepairRemovesEmptyWALs: RepairOptions.Force promises that
// empty WALs, which hold no bytes to keep, do not go to lost/. One after
// another program's log, which does not replay, went there as a WAL
// "after damage" (a black-box attack): an empty WAL holds nothing, so
// nothing of it is set aside, wherever it falls.
func TestForcedRepairRemovesEmptyWALs(t *testing.T) {
	mem := vfs.NewMem()
	if err := mem.MkdirAll("/db"); err != nil {
		t.Fatal(err)
	}
	rewrite(t, mem, "/db/MANIFEST-000002", []byte("another program's manifest"))
	rewrite(t, mem, "/db/000003.log", []byte("another program's log"))
	rewrite(t, mem, "/db/000005.log", nil)
	rep, err := RepairWith("/db", &Options{FS: mem}, RepairOptions{Force: true})
	if err != nil {
		t.Fatal(err)
	}
	if lost, _ := mem.List("/db/lost"); slices.Contains(lost, "000005.log") {
		t.Errorf("the empty 000005.log went to lost/:\n%v", rep)
	}
	if !slices.ContainsFunc(rep.Files, func(f RepairedFile) bool { return f.Name == "000005.log" && f.Fate == FateMerged }) {
		t.Errorf("the report does not show 000005.log merged (it replays to nothing):\n%v", rep)
	}
}
