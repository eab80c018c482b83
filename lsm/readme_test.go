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
