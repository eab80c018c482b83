package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkWidth fails for every line of out wider than 80 columns or ending in
// a space.
func checkWidth(t *testing.T, what, out string) {
	t.Helper()
	for i, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if n := utf8.RuneCountInString(line); n > width {
			t.Errorf("%s line %d is %d columns: %q", what, i+1, n, line)
		}
		if strings.HasSuffix(line, " ") || strings.HasSuffix(line, "\t") {
			t.Errorf("%s line %d ends in a space: %q", what, i+1, line)
		}
	}
}

// TestReportFits80Columns: the default workloads (every line kind the
// default run prints, -histogram's too), then tree and explain of the DB
// they leave.
func TestReportFits80Columns(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	code, stdout, stderr := runArgs(t, append([]string{"-db", dir, "-histogram"}, tiny...)...)
	if code != 0 {
		t.Fatalf("run = %d, stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"filters on :", "saved      :", "level", "stats (bloom_bits"} {
		if !strings.Contains(stdout, want) {
			t.Fatalf("report lacks %q:\n%s", want, stdout)
		}
	}
	checkWidth(t, "report", stdout)
	for _, args := range [][]string{{"tree", "-db", dir}, {"explain", "-db", dir, "0000000000000002"},
		{"explain", "-db", dir, "0000000000000003"}} {
		code, stdout, stderr := runArgs(t, args...)
		if code != 0 {
			t.Fatalf("run(%q) = %d, stderr:\n%s", args, code, stderr)
		}
		checkWidth(t, args[0], stdout)
	}
	// Long keys (a black-box attack): tree's key ranges and explain's
	// Get line of a 150-byte key were wider than the line.
	long := filepath.Join(t.TempDir(), "long")
	if code, _, stderr := runArgs(t, append([]string{"-db", long, "-key_size", "100", "-benchmarks", "fillrandom,rangemissing"}, tiny...)...); code != 0 {
		t.Fatalf("run = %d, stderr:\n%s", code, stderr)
	}
	for _, args := range [][]string{{"tree", "-db", long}, {"explain", "-db", long, strings.Repeat("k", 150)}} {
		code, stdout, stderr := runArgs(t, args...)
		if code != 0 {
			t.Fatalf("run(%q) = %d, stderr:\n%s", args[:3], code, stderr)
		}
		checkWidth(t, args[0]+" of long keys", stdout)
	}
	// Every workload, on two threads: the long names (multireadmissing,
	// readwhilewriting) and the per-batch lines wrap too.
	for _, run := range workloadRuns() {
		code, stdout, stderr = runArgs(t, append([]string{"-histogram", "-threads", "2", "-benchmarks", run}, tiny...)...)
		if code != 0 || !strings.Contains(stdout, "MultiGets of 32 keys") && !strings.Contains(stdout, "range filters") {
			t.Fatalf("run = %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		checkWidth(t, "every workload", stdout)
	}
}

// The sweep over -filter_sizing and -bloom_bits ends the report with a
// table that fits too, the longest workload name beside the longest
// sizing and the widest figures (64 bits; the tree-wide filter's bits),
// with a row per setting under a line naming the workload: laid out to
// fit, not wrapped (nine columns beside a 16-letter name were, a
// black-box attack found).
func TestSweepFits80Columns(t *testing.T) {
	for _, c := range []struct {
		bits, scopes string
	}{{"0,10", "per_table"}, {"0,64", "per_table,tree"}} {
		code, stdout, stderr := runArgs(t, append([]string{"-bloom_bits", c.bits, "-filter_sizing", "uniform,per_level",
			"-filter_scope", c.scopes, "-benchmarks", "fillrandom,readmissing,multireadmissing,readwhilewriting"}, tiny...)...)
		if code != 0 || !strings.Contains(stdout, "Bloom sweep") {
			t.Fatalf("run = %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
		}
		checkWidth(t, "sweep", stdout)
		sweep := stdout[strings.Index(stdout, "Bloom sweep"):]
		_, table, _ := strings.Cut(sweep, "theory%\n")
		rows := map[string][]string{} // "label sizing bits": the row's fields
		label := ""
		for line := range strings.Lines(table) {
			f := strings.Fields(line)
			switch {
			case !strings.HasPrefix(line, " "):
				label = strings.TrimSpace(line)
			case len(f) < 3:
				t.Errorf("sweep row %q: wrapped, a piece of a row", line)
			case f[0] == "uniform" || f[0] == "per_level":
				rows[label+" "+f[0]+" "+f[1]] = f
			}
		}
		for _, sizing := range []string{"uniform", "per_level"} {
			for _, bits := range strings.Split(c.bits, ",") {
				for _, bench := range []string{"readmissing", "multireadmissing", "readwhilewriting"} {
					for _, scope := range strings.Split(c.scopes, ",") {
						label := bench
						if strings.Contains(c.scopes, ",") {
							label += ", " + scope + " scope"
						}
						if rows[label+" "+sizing+" "+bits] == nil {
							t.Errorf("sweep has no row for %s, %s, %s bits:\n%s", label, sizing, bits, sweep)
						}
					}
				}
			}
		}
		// bits 0: no filter probed, so no FPR was measured, and the row's
		// theory, over the probes that measured FPR, has none to weigh; a
		// level without a filter promises 100%.
		if f := rows["readmissing uniform 0"]; c.scopes == "per_table" && (len(f) < 2 || f[len(f)-2] != "n/a" || f[len(f)-1] != "n/a") ||
			!regexp.MustCompile(`(?m)^ +L[0-6] +0\.00 .* n/a +100\.0000$`).MatchString(sweep) {
			t.Errorf("sweep rows at 0 bits lack FPR n/a:\n%s", sweep)
		}
	}
}

func TestWrapLine(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"short  ", "short\n"},
		{"Keys:        " + strings.Repeat("word ", 16) + "end",
			"Keys:        " + strings.TrimSpace(strings.Repeat("word ", 13)) + "\n             word word word end\n"},
		{"name   :    1.0 " + strings.Repeat("x", 70), "name   :    1.0\n         " + strings.Repeat("x", 70) + "\n"},
		// A word wider than the line (a long key): cut at the width.
		{strings.Repeat("y", 90), strings.Repeat("y", 80) + "\n  " + strings.Repeat("y", 10) + "\n"},
		{`Get("` + strings.Repeat("k", 150) + `")`, `Get("` + strings.Repeat("k", 75) + "\n  " + strings.Repeat("k", 75) + "\")\n"},
		{"name   : " + strings.Repeat("z", 60) + " (300 of 300 found)",
			"name   : " + strings.Repeat("z", 60) + "\n         (300 of 300 found)\n"},
	} {
		if got := wrapLine(c.in); got != c.want {
			t.Errorf("wrapLine(%q) =\n%q, want\n%q", c.in, got, c.want)
		}
	}
}
