package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestUseExistingDBRefusesOtherKeys: a -use_existing_db run whose flags
// ask for keys other than the DB was filled with ran without a word: its
// missing keys were written ones or outside every table, and deleteabsent
// deleted written keys (a black-box attack). The fill records its keys'
// flags (KVBENCH-KEYS); a run asking for others exits 2 naming them, and
// touches nothing; one asking for the same runs.
func TestUseExistingDBRefusesOtherKeys(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	if code, _, stderr := runArgs(t, append([]string{"-db", db, "-benchmarks", "fillrandom", "-compare=false"}, tiny...)...); code != 0 {
		t.Fatalf("fill = %d:\n%s", code, stderr)
	}
	layout, err := os.ReadFile(filepath.Join(db, keyLayoutFile))
	if err != nil || !strings.Contains(string(layout), "-num 400 -key_size 16") {
		t.Fatalf("%s holds %q, %v", keyLayoutFile, layout, err)
	}
	run := []string{"-db", db, "-use_existing_db", "-benchmarks", "readmissing,deleteabsent", "-compare=false", "-reads", "50"}
	for _, other := range [][]string{
		{"-num", "4000"},
		{"-num", "400", "-prefix_size", "15"},
		{"-num", "400", "-key_size", "20"},
	} {
		before := listDir(t, db)
		code, stdout, stderr := runArgs(t, append(slices.Clone(run), other...)...)
		if code != 2 || !strings.Contains(stderr, "was filled with -num 400 -key_size 16") || !strings.Contains(stderr, "kvbench -h") || stdout != "" {
			t.Errorf("%q = %d, want 2 naming the fill's flags; stdout:\n%s\nstderr:\n%s", other, code, stdout, stderr)
		}
		if after := listDir(t, db); !slices.Equal(before, after) {
			t.Errorf("%q: the refused run changed %s: %q, now %q", other, db, before, after)
		}
	}
	if code, _, stderr := runArgs(t, append(slices.Clone(run), "-num", "400")...); code != 0 {
		t.Errorf("the fill's own flags = %d:\n%s", code, stderr)
	}
	// Not given, they are the fill's: the default -num, 1000000, is not.
	if code, stdout, stderr := runArgs(t, run...); code != 0 || !strings.Contains(stdout, "Entries:     400\n") {
		t.Errorf("no -num = %d, want 0 on the fill's 400 keys; stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// A DB built before the file existed runs on the flags, with a warning.
	if err := os.Remove(filepath.Join(db, keyLayoutFile)); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runArgs(t, append(slices.Clone(run), "-num", "400")...); code != 0 || !strings.Contains(stderr, "holds no "+keyLayoutFile) {
		t.Errorf("without %s = %d, want 0 and a warning:\n%s", keyLayoutFile, code, stderr)
	}
	// A -db run replaces a DB holding the file, as any monban DB.
	if code, _, stderr := runArgs(t, append([]string{"-db", db, "-benchmarks", "fillseq", "-compare=false"}, tiny...)...); code != 0 {
		t.Errorf("refill = %d:\n%s", code, stderr)
	}
}

// TestDeletesOfPresentKeysSaveNothing: the "saved" line of a delete
// workload was the difference of the WAL bytes the two runs wrote, which
// commits grouped differently by two threads made nonzero, even negative
// (-312 B, a black-box attack) where no delete was elided. It is the
// proofs' own count: deleterandom deletes written keys, none elided.
func TestDeletesOfPresentKeysSaveNothing(t *testing.T) {
	for range 3 {
		code, stdout, stderr := runArgs(t, append([]string{"-benchmarks", "fillrandom,deleterandom", "-threads", "2"}, tiny...)...)
		if code != 0 {
			t.Fatalf("run = %d:\n%s", code, stderr)
		}
		saved := ""
		for line := range strings.Lines(stdout) {
			if strings.Contains(line, "saved") && strings.Contains(line, "WAL records") {
				saved = line
			}
		}
		if !strings.Contains(saved, "saved      : 0 WAL records, 0 B of WAL") {
			t.Fatalf("deleterandom's saved line: %q\n%s", saved, stdout)
		}
	}
}

// TestExplainSaysFlagsComeFirst: "explain KEY -db DIR" said -db was
// required though it was given: flags end at the first argument that is
// none, which the message now says.
func TestExplainSaysFlagsComeFirst(t *testing.T) {
	code, _, stderr := runArgs(t, "explain", "key1", "-db", t.TempDir())
	if code != 2 || !strings.Contains(stderr, "-db is required before the other arguments") {
		t.Errorf("explain KEY -db DIR = %d:\n%s", code, stderr)
	}
}
