package sstable

import (
	"os/exec"
	"strings"
	"testing"
)

// TestGetFilterStepInlined holds Get's filter step to the Go inliner's
// budget (Probe's doc): grown past it, Probe or countFilter would cost
// every Get the filter rejects a call of its own
// (BenchmarkGet/absent/filter-no). It asks the compiler, as the doc says.
func TestGetFilterStepInlined(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the package with the compiler's inlining report")
	}
	out, err := exec.Command("go", "build", "-gcflags=-m", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build -gcflags=-m: %v\n%s", err, out)
	}
	for _, fn := range []string{"(*Reader).Probe", "(*readCounters).countFilter"} {
		if !inlinedIn(string(out), "./get.go:", fn) {
			t.Errorf("Get does not inline %s (go build -gcflags=-m=2 ./sstable says why); the report mentions it in:\n%s", fn, linesWith(string(out), fn))
		}
	}
}

// inlinedIn reports whether the compiler's report out says a call to fn
// in file (its lines' prefix) is inlined.
func inlinedIn(out, file, fn string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, file) && strings.HasSuffix(line, ": inlining call to "+fn) {
			return true
		}
	}
	return false
}

// linesWith returns the lines of out that mention s.
func linesWith(out, s string) string {
	var b strings.Builder
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, s) {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}
