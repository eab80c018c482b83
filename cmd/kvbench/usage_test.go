package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// checkShortUsage: a usage error prints the error and one line pointing
// to -h, nothing more, so the error stays on the screen.
func checkShortUsage(t *testing.T, args []string, stderr string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if len(lines) > 2 || !strings.Contains(lines[len(lines)-1], " -h ") {
		t.Errorf("run(%q): %d lines on stderr, want the error and a line pointing to -h:\n%s", args, len(lines), stderr)
	}
}

// TestHelpWithinWidth: kvbench -h and every subcommand's -h print every
// line within 80 columns, and exit 0.
func TestHelpWithinWidth(t *testing.T) {
	for _, cmd := range []string{"", "filters", "tree", "explain", "repair", "teach"} {
		args := []string{"-h"}
		if cmd != "" {
			args = []string{cmd, "-h"}
		}
		code, _, stderr := runArgs(t, args...)
		if code != 0 || !strings.Contains(stderr, "usage: kvbench") {
			t.Errorf("run(%q) = %d:\n%s", args, code, stderr)
		}
		checkWidth(t, strings.Join(args, " "), stderr)
	}
}

// TestFiltersWithinWidth: kvbench filters' tables fit in 80 columns (at
// a coarse precision, which only shortens the run).
func TestFiltersWithinWidth(t *testing.T) {
	code, stdout, stderr := runArgs(t, "filters", "-sigmas", "1", "-rel", "0.5")
	if code != 0 || !strings.Contains(stdout, "Cache-line Bloom vs standard") {
		t.Fatalf("filters = %d:\n%s%s", code, stdout, stderr)
	}
	checkWidth(t, "kvbench filters", stdout)
}

func TestWrapWords(t *testing.T) {
	got := wrapWords(`a list (default "aaa,bbb,ccc,ddd")`, 12)
	want := []string{"a list", `(default`, `"aaa,bbb,`, `ccc,ddd")`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("wrapWords = %q, want %q", got, want)
	}
}

// TestDBReplacedSaysSo: -db over a monban DB replaces it, as -h says, and
// says so on stderr; a first run into an empty directory says nothing.
func TestDBReplacedSaysSo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	args := append([]string{"-db", dir, "-benchmarks", "fillseq", "-repeat", "2"}, tiny...)
	code, _, stderr := runArgs(t, args...)
	if code != 0 || strings.Contains(stderr, "replacing") {
		t.Fatalf("first run = %d, stderr:\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "CURRENT")); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runArgs(t, args...)
	if code != 0 || strings.Count(stderr, "kvbench: replacing the monban DB in "+dir) != 1 {
		t.Fatalf("second run = %d, want one line saying the DB is replaced; stderr:\n%s", code, stderr)
	}
}
