package lsm

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestREADMESnippets: every Go snippet of the README is an excerpt of the
// Example test its marker names ("<!-- example: lsm.ExampleBatch -->" on
// the line before the fence), so the code a newcomer copies compiles and
// runs, and go test checks what its Output comment says it prints. Every
// Example of the API tour (tourFiles) is in the README, so neither can
// grow without the other.
func TestREADMESnippets(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	bodies := map[string]string{} // "lsm.ExampleBatch" -> its body
	for pkg, dir := range map[string]string{"lsm": ".", "vfs": "../vfs"} {
		for name, body := range exampleBodies(t, dir) {
			bodies[pkg+"."+name] = body
		}
	}
	shown := map[string]bool{}
	blocks := regexp.MustCompile("(?s)(?:<!-- example: (\\S+) -->\n)?```go\n(.*?)```").FindAllSubmatch(readme, -1)
	if len(blocks) == 0 {
		t.Fatal("README.md has no Go snippet")
	}
	for _, m := range blocks {
		name, snippet := string(m[1]), string(m[2])
		if name == "" {
			t.Errorf("a Go snippet of README.md names no Example (<!-- example: lsm.ExampleX --> on the line before it):\n%s", snippet)
			continue
		}
		body, ok := bodies[name]
		if !ok {
			t.Errorf("README.md shows %s, which is no Example of lsm or vfs", name)
			continue
		}
		shown[name] = true
		var indented strings.Builder
		for _, line := range strings.SplitAfter(strings.TrimRight(snippet, "\n"), "\n") {
			if strings.TrimSpace(line) != "" {
				indented.WriteString("\t")
			}
			indented.WriteString(line)
		}
		if !strings.Contains(body, indented.String()) {
			t.Errorf("README.md's snippet marked %s is not an excerpt of its body:\n%s", name, snippet)
		}
	}
	for _, file := range tourFiles {
		for name := range exampleBodies(t, ".", file) {
			if !shown["lsm."+name] {
				t.Errorf("%s (%s) is part of the API tour but README.md does not show it", name, file)
			}
		}
	}
}

// TestREADMECommands: the README's two commands are the default kvbench
// run and the test command .ci/run runs verbatim, so what a newcomer
// types is what CI checks.
func TestREADMECommands(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)## Two commands\n.*?```sh\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no sh block under \"## Two commands\"")
	}
	var cmds []string
	for _, line := range strings.Split(strings.TrimSpace(string(m[1])), "\n") {
		cmd, _, _ := strings.Cut(line, "#")
		cmds = append(cmds, strings.TrimSpace(cmd))
	}
	if len(cmds) != 2 || cmds[0] != "go run ./cmd/kvbench" {
		t.Fatalf("README.md's two commands are %q, want the default kvbench run and the tests", cmds)
	}
	ci, err := os.ReadFile("../.ci/run")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(cmds[1]) + `$`).Match(ci) {
		t.Fatalf(".ci/run does not run the README's test command %q on a line of its own", cmds[1])
	}
}

// tourFiles hold the Examples of the README's API tour.
var tourFiles = []string{"example_tour_test.go", "example_options_test.go"}

// exampleBodies returns the source between the braces of every Example
// function in the test files of dir (only, if given, those files), by
// name.
func exampleBodies(t *testing.T, dir string, only ...string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, path := range files {
		if len(only) > 0 && !slices.Contains(only, filepath.Base(path)) {
			continue
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Example") {
				continue
			}
			lo, hi := fset.Position(fn.Body.Lbrace).Offset+1, fset.Position(fn.Body.Rbrace).Offset
			out[fn.Name.Name] = string(src[lo:hi])
		}
	}
	return out
}

// TestReadPathDocTrace: the trace docs/read-path.md shows is what
// ExampleDB_Explain prints (go test checks the example's output), so the
// chapter cannot drift from the code.
func TestReadPathDocTrace(t *testing.T) {
	doc, err := os.ReadFile("../docs/read-path.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```\n(Get\\(\"key042\"\\).*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/read-path.md has no trace of Get(\"key042\")")
	}
	example, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	out := regexp.MustCompile(`(?s)func ExampleDB_Explain\(\).*?// Output:\n(.*?)\n}`).FindSubmatch(example)
	if out == nil {
		t.Fatal("ExampleDB_Explain has no Output comment")
	}
	var want []string
	for _, l := range strings.Split(string(out[1]), "\n") {
		want = append(want, strings.TrimPrefix(strings.TrimPrefix(l, "\t//"), " "))
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(m[1])), "\n") {
		if strings.TrimSpace(l) != "" {
			got = append(got, l)
		}
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("docs/read-path.md's trace:\n%s\nExampleDB_Explain prints:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
