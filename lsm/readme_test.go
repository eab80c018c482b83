package lsm

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestREADMESnippet: the README's Go snippet is ExampleOpen's body, so the
// code a newcomer copies compiles and runs (go test runs the example).
func TestREADMESnippet(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```go\n(.*?)```").FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no Go snippet")
	}
	example, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	var indented strings.Builder
	for _, line := range strings.SplitAfter(strings.TrimRight(string(m[1]), "\n"), "\n") {
		if strings.TrimSpace(line) != "" {
			indented.WriteString("\t")
		}
		indented.WriteString(line)
	}
	if !strings.Contains(string(example), indented.String()) {
		t.Fatalf("the README's snippet is not ExampleOpen's body:\n%s", m[1])
	}
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
