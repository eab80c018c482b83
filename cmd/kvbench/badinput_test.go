package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// runArgsWithin is runArgs that fails the test, rather than hanging it,
// when the run takes longer than d (the run is left going).
func runArgsWithin(t *testing.T, d time.Duration, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		var o, e bytes.Buffer
		code := run(args, &o, &e)
		done <- result{code, o.String(), e.String()}
	}()
	select {
	case r := <-done:
		return r.code, r.stdout, r.stderr
	case <-time.After(d):
		t.Fatalf("run(%q) still running after %v", args, d)
		return 0, "", ""
	}
}

// listDir is dir's names: nil if it does not exist, empty if it is empty.
func listDir(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestFloatFlagsRejectNaNInf: NaN and ±Inf are usage errors for every
// float flag, refused before any DB is made.
func TestFloatFlagsRejectNaNInf(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	small := []string{"-db", db, "-num", "10", "-reads", "5", "-benchmarks", "fillseq", "-compare=false"}
	for _, tc := range []struct {
		flag string
		args []string
	}{
		{"-compression_ratio", append([]string{"-compression_ratio", "NaN"}, small...)},
		{"-compression_ratio", append([]string{"-compression_ratio", "Inf"}, small...)},
		{"-compression_ratio", append([]string{"-compression_ratio", "-Inf"}, small...)},
		{"-rel", []string{"filters", "-rel", "NaN"}},
		{"-rel", []string{"filters", "-rel", "-Inf"}},
		{"-sigmas", []string{"filters", "-sigmas", "NaN"}},
		{"-sigmas", []string{"filters", "-sigmas", "+Inf"}},
		{"-rel", []string{"filters", "-sigmas", "1", "-rel", "nan"}},
	} {
		code, stdout, stderr := runArgsWithin(t, 10*time.Second, tc.args...)
		if code != 2 || !strings.Contains(stderr, "usage: kvbench") || !strings.Contains(stderr, tc.flag) || stdout != "" {
			t.Errorf("run(%q) = %d, want 2 with a usage error naming %s; stdout:\n%s\nstderr:\n%s", tc.args, code, tc.flag, stdout, stderr)
		}
		checkShortUsage(t, tc.args, stderr)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("a refused run made %s (%v)", db, err)
	}
}

// TestFiltersSigmasBounded: -sigmas and -rel outside the range whose
// sample sizes are measurable are usage errors, saying the range.
func TestFiltersSigmasBounded(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"filters", "-sigmas", "1e6"}, "-sigmas must be in (0, 20]"},
		{[]string{"filters", "-sigmas", "20.5"}, "-sigmas must be in (0, 20]"},
		{[]string{"filters", "-sigmas", "0"}, "-sigmas must be in (0, 20]"},
		{[]string{"filters", "-rel", "1e-9"}, "-rel must be in [0.01, 1)"},
		{[]string{"filters", "-rel", "1"}, "-rel must be in [0.01, 1)"},
	} {
		code, stdout, stderr := runArgsWithin(t, 2*time.Second, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "usage: kvbench filters") || stdout != "" {
			t.Errorf("run(%q) = %d, want 2 with %q; stdout:\n%s\nstderr:\n%s", tc.args, code, tc.want, stdout, stderr)
		}
		checkShortUsage(t, tc.args, stderr)
	}
}

// TestCancelledFiltersStops: filters stops on a done context, as the
// benchmarks do.
func TestCancelledFiltersStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	done := make(chan int, 1)
	var o, e strings.Builder
	go func() { done <- runContext(ctx, []string{"filters"}, &o, &e) }()
	select {
	case code := <-done:
		if code != 130 || !strings.Contains(e.String(), "interrupted") {
			t.Fatalf("runContext(filters) = %d; stderr:\n%s", code, e.String())
		}
	case <-time.After(2 * time.Second):
		t.Fatal("filters ran on for 2s on a done context")
	}
}

// TestUseExistingDBNeedsADB: -use_existing_db on a directory that is
// missing, empty, or holds no DB file fails naming it, and creates
// nothing.
func TestUseExistingDBNeedsADB(t *testing.T) {
	root := t.TempDir()
	empty := filepath.Join(root, "empty")
	foreign := filepath.Join(root, "foreign")
	lockOnly := filepath.Join(root, "lockonly")
	for _, d := range []string{empty, foreign, lockOnly} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(foreign, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lockOnly, "LOCK"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{filepath.Join(root, "missing"), empty, foreign, lockOnly} {
		before := listDir(t, dir)
		args := []string{"-use_existing_db", "-db", dir, "-benchmarks", "readrandom", "-num", "10", "-reads", "5", "-compare=false"}
		code, stdout, stderr := runArgs(t, args...)
		if code != 1 || !strings.Contains(stderr, dir+": no monban DB") || stdout != "" {
			t.Errorf("run(%q) = %d, want 1 naming %s; stdout:\n%s\nstderr:\n%s", args, code, dir, stdout, stderr)
		}
		if after := listDir(t, dir); !slices.Equal(before, after) {
			t.Errorf("%s held %q, now %q", dir, before, after)
		}
		if before == nil {
			if _, err := os.Stat(dir); !os.IsNotExist(err) {
				t.Errorf("%s was made (%v)", dir, err)
			}
		}
	}
}

// TestDeletesNegative: -deletes -1 is the documented "same as -reads";
// any other negative count is a usage error.
func TestDeletesNegative(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	args := []string{"-deletes", "-7", "-db", db, "-num", "10", "-reads", "5", "-benchmarks", "fillseq,deleterandom", "-compare=false"}
	code, stdout, stderr := runArgs(t, args...)
	if code != 2 || !strings.Contains(stderr, "-deletes must be -1 (same as -reads) or at least 0") || stdout != "" {
		t.Errorf("run(%q) = %d, want 2; stdout:\n%s\nstderr:\n%s", args, code, stdout, stderr)
	}
	checkShortUsage(t, args, stderr)
	c, err := parseConfig([]string{"-deletes", "-1", "-reads", "9"}, &bytes.Buffer{})
	if err != nil || c.deletes != 9 {
		t.Fatalf("-deletes -1 -reads 9: %+v, %v", c, err)
	}
}

// TestSVGPathCheckedUpFront: an -svg path that cannot be written fails
// the run before any benchmark runs (nothing on stdout, no DB made), as
// bad usage: exit 2, with the hint line (it exited 1 without it, though
// the exit statuses keep 1 for a failed benchmark); a good one is not
// created by a run that fails before writing it.
func TestSVGPathCheckedUpFront(t *testing.T) {
	root := t.TempDir()
	db := filepath.Join(root, "db")
	file := filepath.Join(root, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, svg := range []string{
		filepath.Join(root, "missing", "chart.svg"),
		root,
		filepath.Join(file, "chart.svg"),
	} {
		args := []string{"-db", db, "-num", "10", "-reads", "5", "-benchmarks", "fillseq", "-compare=false", "-svg", svg}
		code, stdout, stderr := runArgs(t, args...)
		if code != 2 || !strings.Contains(stderr, "-svg "+svg) || !strings.Contains(stderr, "kvbench -h") || stdout != "" {
			t.Errorf("run(%q) = %d, want 2 naming -svg %s before any benchmark; stdout:\n%s\nstderr:\n%s", args, code, svg, stdout, stderr)
		}
		if _, err := os.Stat(db); !os.IsNotExist(err) {
			t.Errorf("-svg %s: the run made %s (%v)", svg, db, err)
		}
	}
	// A good path, and a run refused afterwards: no stray chart file.
	foreign := filepath.Join(root, "foreign")
	if err := os.Mkdir(foreign, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(foreign, "thesis.tex"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	svg := filepath.Join(root, "chart.svg")
	code, _, stderr := runArgs(t, "-db", foreign, "-num", "10", "-benchmarks", "fillseq", "-svg", svg)
	if code != 1 || !strings.Contains(stderr, "refusing") {
		t.Fatalf("run on a foreign -db = %d; stderr:\n%s", code, stderr)
	}
	if names := listDir(t, root); !slices.Equal(names, []string{"file", "foreign"}) {
		t.Errorf("%s holds %q after the refused run, want only file and foreign", root, names)
	}
}

// TestRepairRefusalListsOnlyFoundFiles: when repair refuses a directory,
// the files it lists are those that were there, not the LOCK the repair
// itself made (and removed).
func TestRepairRefusalListsOnlyFoundFiles(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, files map[string]string) string {
		dir := filepath.Join(root, name)
		if err := os.Mkdir(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for n, data := range files {
			if err := os.WriteFile(filepath.Join(dir, n), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	for _, tc := range []struct {
		dir  string
		want []string // in the message
	}{
		{mk("empty", nil), []string{"not a monban DB", "empty"}},
		{mk("notes", map[string]string{"notes.txt": "mine"}), []string{"not a monban DB", "notes.txt"}},
		{mk("foreign", map[string]string{"CURRENT": "MANIFEST-000000\n", "MANIFEST-000000": "not ours", "000001.log": "nor this"}),
			[]string{"not a monban DB", "000001.log CURRENT MANIFEST-000000", "-force"}},
	} {
		code, stdout, stderr := runArgs(t, "repair", "-db", tc.dir)
		if code != 1 || strings.Contains(stderr, "LOCK") || stdout != "" {
			t.Errorf("repair -db %s = %d, want 1 and no LOCK listed; stdout:\n%s\nstderr:\n%s", tc.dir, code, stdout, stderr)
		}
		for _, w := range tc.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("repair -db %s: stderr lacks %q:\n%s", tc.dir, w, stderr)
			}
		}
		if names := listDir(t, tc.dir); slices.Contains(names, "LOCK") {
			t.Errorf("repair -db %s left %q", tc.dir, names)
		}
	}
}
