package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/monbandb/monban/lsm"
)

// TestClearDBRefusesWhatIsNotAFreeMonbanDB: -db is deleted for a fresh
// build only when it is a monban DB no one has open; another engine's
// directory (which has a CURRENT too), one with a user's file beside a
// DB, and a DB a running process holds are refused and left whole.
func TestClearDBRefusesWhatIsNotAFreeMonbanDB(t *testing.T) {
	write := func(dir, name, data string) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := t.TempDir()
	foreign := filepath.Join(root, "leveldb")
	write(foreign, "CURRENT", "MANIFEST-000002\n")
	write(foreign, "MANIFEST-000002", "not monban's")
	write(foreign, "000003.log", "nor this")
	mkDB := func(dir string) *lsm.DB {
		d, err := lsm.Open(dir, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Put([]byte("k"), []byte("v")); err != nil {
			t.Fatal(err)
		}
		return d
	}
	withNotes := filepath.Join(root, "notes")
	mkDB(withNotes).Close()
	write(withNotes, "notes.txt", "mine")
	held := filepath.Join(root, "held")
	d := mkDB(held)
	defer d.Close()
	for _, dir := range []string{foreign, withNotes, held} {
		if _, err := clearDB(dir); err == nil {
			t.Errorf("clearDB(%s) = nil, want a refusal", dir)
		}
		if _, err := os.Stat(filepath.Join(dir, "CURRENT")); err != nil {
			t.Errorf("%s lost its files: %v", dir, err)
		}
	}
	free := filepath.Join(root, "free")
	mkDB(free).Close()
	if replaced, err := clearDB(free); err != nil || !replaced {
		t.Fatalf("clearDB of a closed monban DB: %v, %v", replaced, err)
	}
}

// TestComparedRunLeavesItsNeighboursAlone: a compared workload copies the
// DB to run with its filters off. The copy went to DIR.nofilters, which
// kvbench removed first and after, whatever it held: a user's directory
// of that name was deleted without a word (a black-box attack). The copy
// must go to a directory of kvbench's own making.
func TestComparedRunLeavesItsNeighboursAlone(t *testing.T) {
	root := t.TempDir()
	neighbour := filepath.Join(root, "px.nofilters")
	if err := os.MkdirAll(neighbour, 0o755); err != nil {
		t.Fatal(err)
	}
	precious := filepath.Join(neighbour, "precious.txt")
	if err := os.WriteFile(precious, []byte("important"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"-db", filepath.Join(root, "px"), "-benchmarks", "fillrandom,readmissing"}, tiny...)
	if code, _, stderr := runArgs(t, args...); code != 0 {
		t.Fatalf("kvbench %v: exit %d\n%s", args, code, stderr)
	}
	if b, err := os.ReadFile(precious); err != nil || string(b) != "important" {
		t.Fatalf("%s after the run: %q, %v", precious, b, err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Errorf("%s holds %v after the run; want px and px.nofilters alone (the copy removed)", root, entries)
	}
}

// TestSweepRefusesAnOccupiedDirectory: a sweep builds a DB directory per
// setting under -db. It did so whatever -db held, a user's file or a
// monban DB (a black-box attack); what a single run refuses, a sweep must
// refuse too, and a rerun of the same sweep replaces its own directories.
func TestSweepRefusesAnOccupiedDirectory(t *testing.T) {
	sweep := append([]string{"-bloom_bits", "0,5", "-benchmarks", "fillrandom", "-compare=false"}, tiny...)
	notes := filepath.Join(t.TempDir(), "notes")
	if err := os.MkdirAll(notes, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(notes, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(t.TempDir(), "db")
	d, err := lsm.Open(db, nil)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	for _, dir := range []string{notes, db} {
		if code, _, stderr := runArgs(t, append([]string{"-db", dir}, sweep...)...); code != 1 || !strings.Contains(stderr, "refusing") {
			t.Errorf("a sweep into %s: exit %d, %q; want exit 1 and a refusal", dir, code, stderr)
		}
		if entries, _ := os.ReadDir(dir); slices.ContainsFunc(entries, func(e os.DirEntry) bool { return strings.HasPrefix(e.Name(), "bloom-") }) {
			t.Errorf("the refused sweep built in %s: %v", dir, entries)
		}
	}
	fresh := filepath.Join(t.TempDir(), "sweep")
	for run := range 2 {
		if code, _, stderr := runArgs(t, append([]string{"-db", fresh}, sweep...)...); code != 0 {
			t.Fatalf("sweep %d into %s: exit %d\n%s", run, fresh, code, stderr)
		}
	}
}
