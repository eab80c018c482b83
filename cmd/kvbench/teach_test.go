package main

import (
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/monbandb/monban/internal/doctest"
	"github.com/monbandb/monban/memtable"
)

var update = flag.Bool("update", false, "rewrite the kvbench teach blocks of docs/*.md from teach's output")

// mustTeach runs the lesson in a new directory, which it returns, and
// adds to its sections one for every "kvbench explain KEY" a doc shows:
// the trace that kvbench explain prints on the DB the lesson left.
func mustTeach(t *testing.T) ([]lesson, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "db")
	ls, err := teach(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ls, dir
}

// generated returns what generates a doc example: kvbench teach's section
// ("kvbench teach NAME"; "kvbench teach NAME (excerpt)" for whole lines
// of it, returned as they are in the doc when they are in the section), or
// kvbench explain on the lesson's DB ("kvbench explain KEY"); ok is false
// for another package's examples.
func generated(t *testing.T, e doctest.Example, byName map[string]lesson, dir string) (text string, ok bool) {
	if name, ok := strings.CutPrefix(e.Generator, "kvbench teach "); ok {
		name, excerpt := strings.CutSuffix(name, " (excerpt)")
		l, known := byName[name]
		if !known {
			t.Errorf("%s: kvbench teach has no section %q", e, name)
		}
		if excerpt {
			// An excerpt is checked as whole lines of the section.
			if strings.Contains("\n"+l.body, "\n"+e.Text) {
				return e.Text, known
			}
			return l.body, known
		}
		return l.body, known
	}
	if key, ok := strings.CutPrefix(e.Generator, "kvbench explain "); ok {
		code, stdout, stderr := runArgs(t, "explain", "-db", dir, key)
		if code != 0 {
			t.Errorf("%s: kvbench explain = %d: %s", e, code, stderr)
		}
		return stdout, code == 0
	}
	return "", false
}

// TestTeachMatchesDocs: every block of docs/*.md marked
// "<!-- doctest: kvbench teach SECTION -->" is, byte for byte, what
// kvbench teach prints for SECTION, and every section is shown somewhere;
// one marked "kvbench explain KEY" is what kvbench explain prints for KEY
// on the DB the lesson left.
// Two runs print the same: file numbers, sequence numbers and block
// offsets do not depend on timing. go test -run TeachMatchesDocs -update
// rewrites the blocks from the code.
func TestTeachMatchesDocs(t *testing.T) {
	lessons, dir := mustTeach(t)
	again, _ := mustTeach(t)
	byName := map[string]lesson{}
	for i, l := range again {
		if l != lessons[i] {
			t.Fatalf("two runs of teach differ in section %s:\n%s\nand\n%s", l.name, lessons[i].body, l.body)
		}
		byName[l.name] = l
	}
	if got := lessonNames(lessons); !slices.Equal(got, lessonOrder) {
		t.Errorf("teach made sections %q; lessonOrder, which runTeach checks names against, says %q", got, lessonOrder)
	}
	shown := map[string]bool{}
	for _, path := range doctest.Docs(t, "../../docs") {
		exs := doctest.Examples(t, path)
		stale := false
		texts := map[int]string{}
		for i, e := range exs {
			text, ok := generated(t, e, byName, dir)
			if !ok {
				continue
			}
			shown[strings.TrimPrefix(e.Generator, "kvbench teach ")] = true
			if strings.HasSuffix(e.Generator, " (excerpt)") && e.Text != text {
				t.Errorf("%s: the excerpt is not part of the section's output:\n%s", e, e.Text)
				continue // -update cannot know which lines were meant
			}
			texts[i] = text
			if e.Text != text {
				stale = true
				if !*update {
					n := firstDiff(e.Text, text)
					t.Errorf("%s: the doc's block differs from the code's output at its line %d:\n doc  %q\n code %q\n(go test ./cmd/kvbench -run TeachMatchesDocs -update rewrites the block)",
						e, n+1, line(e.Text, n), line(text, n))
				}
			}
		}
		checkTableNames(t, path, texts)
		if stale && *update {
			doctest.Rewrite(t, path, exs, func(e doctest.Example) (string, bool) {
				for i, x := range exs {
					if x == e {
						text, ok := texts[i]
						return text, ok
					}
				}
				return "", false
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

// tableName is a table file's name as traces print it.
var tableName = regexp.MustCompile(`\b[0-9]{6}\.sst\b`)

// checkTableNames: in a doc that shows the lesson's output (texts, its
// generated blocks), every table its prose names is one that output
// names, so that the prose cannot go on naming a table after the file
// numbers move.
func checkTableNames(t *testing.T, path string, texts map[int]string) {
	if len(texts) == 0 {
		return
	}
	named := map[string]bool{}
	for _, text := range texts {
		for _, name := range tableName.FindAllString(text, -1) {
			named[name] = true
		}
	}
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range tableName.FindAllString(string(doc), -1) {
		if !named[name] {
			t.Errorf("%s names %s, which no kvbench teach or explain output it shows names", path, name)
			named[name] = true // once
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
	// A section name is checked before the DB is built: nothing is made.
	fresh := filepath.Join(t.TempDir(), "db")
	code, _, stderr = runArgs(t, "teach", "-db", fresh, "nope")
	if code != 2 || !strings.Contains(stderr, `no section "nope"`) || !strings.Contains(stderr, "usage") {
		t.Errorf("teach nope = %d:\n%s", code, stderr)
	}
	if _, err := os.Stat(fresh); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("teach nope built %s before refusing the section: %v", fresh, err)
	}
	if code, _, stderr := runArgs(t, "teach"); code != 2 || !strings.Contains(stderr, "usage") {
		t.Errorf("teach without -db = %d:\n%s", code, stderr)
	}
}
