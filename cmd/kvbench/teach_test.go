package main

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/monbandb/monban/internal/doctest"
	"github.com/monbandb/monban/memtable"
)

var update = flag.Bool("update", false, "rewrite the kvbench teach blocks of docs/*.md from teach's output")

func mustTeach(t *testing.T) []lesson {
	t.Helper()
	ls, err := teach(filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	return ls
}

// TestTeachMatchesDocs: every block of docs/*.md marked
// "<!-- doctest: kvbench teach SECTION -->" is, byte for byte, what
// kvbench teach prints for SECTION, and every section is shown somewhere.
// Two runs print the same: file numbers, sequence numbers and block
// offsets do not depend on timing. go test -run TeachMatchesDocs -update
// rewrites the blocks from the code.
func TestTeachMatchesDocs(t *testing.T) {
	lessons := mustTeach(t)
	byName := map[string]lesson{}
	for i, l := range mustTeach(t) {
		if l != lessons[i] {
			t.Fatalf("two runs of teach differ in section %s:\n%s\nand\n%s", l.name, lessons[i].body, l.body)
		}
		byName[l.name] = l
	}
	shown := map[string]bool{}
	for _, path := range doctest.Docs(t, "../../docs") {
		exs := doctest.Examples(t, path)
		stale := false
		for _, e := range exs {
			name, ok := strings.CutPrefix(e.Generator, "kvbench teach ")
			if !ok {
				continue
			}
			l, ok := byName[name]
			if !ok {
				t.Errorf("%s: kvbench teach has no section %q", e, name)
				continue
			}
			shown[name] = true
			if e.Text != l.body {
				stale = true
				if !*update {
					t.Errorf("%s: the doc's block differs from kvbench teach's output at line %d:\n doc  %q\n code %q\n(go test ./cmd/kvbench -run TeachMatchesDocs -update rewrites the block)",
						e, firstDiff(e.Text, l.body)+1, line(e.Text, firstDiff(e.Text, l.body)), line(l.body, firstDiff(e.Text, l.body)))
				}
			}
		}
		if stale && *update {
			doctest.Rewrite(t, path, exs, func(e doctest.Example) (string, bool) {
				name, ok := strings.CutPrefix(e.Generator, "kvbench teach ")
				l, known := byName[name]
				return l.body, ok && known
			})
			t.Logf("rewrote %s", path)
		}
	}
	for _, l := range lessons {
		if !shown[l.name] {
			t.Errorf("no doc shows kvbench teach's section %q", l.name)
		}
	}
}

func firstDiff(a, b string) int {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(al), len(bl)) {
		if al[i] != bl[i] {
			return i
		}
	}
	return min(len(al), len(bl))
}

func line(s string, i int) string {
	if ls := strings.Split(s, "\n"); i < len(ls) {
		return ls[i]
	}
	return "(end)"
}

// TestTeachFingerprintBits: the quotient filter figures teach prints are
// for the memtables' fingerprint width.
func TestTeachFingerprintBits(t *testing.T) {
	if memtableFingerprintBits != memtable.FingerprintBits {
		t.Fatalf("teach uses %d-bit fingerprints, memtable.FingerprintBits is %d", memtableFingerprintBits, memtable.FingerprintBits)
	}
}

// TestTeachCommand: kvbench teach prints the sections asked for, each under
// its header, fitting 80 columns; it refuses a directory that holds
// anything and names an unknown section.
func TestTeachCommand(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	code, stdout, stderr := runArgs(t, "teach", "-db", dir, "memtable", "absent")
	if code != 0 {
		t.Fatalf("teach = %d:\n%s", code, stderr)
	}
	if !strings.HasPrefix(stdout, "== memtable: ") || !strings.Contains(stdout, "\n== absent: ") || strings.Contains(stdout, "== deep") {
		t.Fatalf("teach memtable absent printed:\n%s", stdout)
	}
	_, all, _ := runArgs(t, "teach", "-db", filepath.Join(t.TempDir(), "db"))
	if n := strings.Count(all, "\n== "); n < 9 {
		t.Errorf("teach printed %d sections:\n%s", n+1, all)
	}
	for _, l := range strings.Split(all, "\n") {
		if len([]rune(l)) > width || strings.TrimRight(l, " ") != l {
			t.Errorf("line of %d columns or ending in a space: %q", len([]rune(l)), l)
		}
	}
	// The DB stays for kvbench tree and explain; a second lesson needs a
	// new directory.
	if _, err := os.Stat(filepath.Join(dir, "CURRENT")); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runArgs(t, "teach", "-db", dir); code != 1 || !strings.Contains(stderr, "not empty") {
		t.Errorf("teach over a DB = %d:\n%s", code, stderr)
	}
	code, _, stderr = runArgs(t, "teach", "-db", filepath.Join(t.TempDir(), "db"), "nope")
	if code != 2 || !strings.Contains(stderr, `no section "nope"`) || !strings.Contains(stderr, "usage") {
		t.Errorf("teach nope = %d:\n%s", code, stderr)
	}
	if code, _, stderr := runArgs(t, "teach"); code != 2 || !strings.Contains(stderr, "usage") {
		t.Errorf("teach without -db = %d:\n%s", code, stderr)
	}
}
