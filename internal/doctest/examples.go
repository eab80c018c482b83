package doctest

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// markerOpen and markerClose frame a marker: <!-- doctest: GENERATOR -->.
const (
	markerOpen  = "<!-- doctest: "
	markerClose = " -->"
)

// An Example is one marked example of a markdown file (package doc).
type Example struct {
	Path string
	Line int // of the marker, from 1
	// Generator is what the marker names: "format sstable",
	// "kvbench teach deep".
	Generator string
	// Text is the example: a fenced block's contents, every line with its
	// newline, or an inline code span's.
	Text string
	// Start and End are Text's byte offsets in the file.
	Start, End int
}

func (e Example) String() string { return e.Path + ":" + strconv.Itoa(e.Line) + ": " + e.Generator }

// Docs returns the markdown files of dir (docs/*.md), sorted.
func Docs(t testing.TB, dir string) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dir, "*.md"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no markdown in %s: %v", dir, err)
	}
	sort.Strings(paths)
	return paths
}

// Examples returns every marked example of the markdown file at path, in
// order. A marker that no example follows fails the test.
func Examples(t testing.TB, path string) []Example {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	var out []Example
	for at := 0; ; {
		i := strings.Index(s[at:], markerOpen)
		if i < 0 {
			return out
		}
		i += at
		j := strings.Index(s[i:], markerClose)
		if j < 0 {
			t.Fatalf("%s:%d: marker not closed", path, lineOf(s, i))
		}
		e := Example{Path: path, Line: lineOf(s, i), Generator: strings.TrimSpace(s[i+len(markerOpen) : i+j])}
		rest := i + j + len(markerClose)
		switch {
		case strings.HasPrefix(s[rest:], "\n```"):
			open := rest + 1
			nl := strings.IndexByte(s[open:], '\n')
			if nl < 0 {
				t.Fatalf("%s: block not closed", e)
			}
			e.Start = open + nl + 1
			end := strings.Index(s[e.Start:], "```")
			if end < 0 || (end > 0 && s[e.Start+end-1] != '\n') {
				t.Fatalf("%s: block not closed", e)
			}
			e.End = e.Start + end
		case strings.HasPrefix(s[rest:], "`"):
			e.Start = rest + 1
			end := strings.IndexByte(s[e.Start:], '`')
			if end < 0 {
				t.Fatalf("%s: code span not closed", e)
			}
			e.End = e.Start + end
		default:
			t.Fatalf("%s: the marker is followed neither by a fenced block on the next line nor by a code span", e)
		}
		e.Text = s[e.Start:e.End]
		out = append(out, e)
		at = e.End
	}
}

func lineOf(s string, i int) int { return strings.Count(s[:i], "\n") + 1 }

// Rewrite replaces the text of each example of the file at path for which
// text returns ok, keeping everything else: what a test's -update flag
// does. The examples must be Examples(t, path), unchanged since.
func Rewrite(t testing.TB, path string, exs []Example, text func(Example) (string, bool)) {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	prev := 0
	for _, e := range exs {
		if e.Path != path {
			continue
		}
		if s, ok := text(e); ok {
			b.Write(doc[prev:e.Start])
			b.WriteString(s)
			prev = e.End
		}
	}
	b.Write(doc[prev:])
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A Fenced block of a markdown file, marked or not.
type Fenced struct {
	Line   int // of the opening fence, from 1
	Text   string
	Marked bool // a marker names its generator
}

// FencedBlocks returns every fenced block of the markdown file at path.
func FencedBlocks(t testing.TB, path string) []Fenced {
	t.Helper()
	doc, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(doc), "\n")
	var out []Fenced
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "```") {
			continue
		}
		f := Fenced{Line: i + 1, Marked: i > 0 && strings.HasPrefix(lines[i-1], markerOpen)}
		var body strings.Builder
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			body.WriteString(lines[i])
		}
		f.Text = body.String()
		out = append(out, f)
	}
	return out
}

// LooksLikeExample reports whether a block's text is a trace (a line
// starting with `Get("`) or hex bytes (a line of at least four two-digit
// hex tokens): the kinds of block that must be marked, since a test can
// check them.
func LooksLikeExample(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, `Get("`) || len(lineBytes(line)) >= 4 {
			return true
		}
	}
	return false
}
