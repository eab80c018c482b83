package main

import (
	"strings"
	"testing"
)

// TestRepeat: -repeat 3 runs the sequence three times, each on a fresh DB
// (its stats after the fill show the fill's WAL bytes alone, the same each
// time; the tree's shape, and so its false positives, may differ with the
// timing of concurrent compactions), tags
// every JSON result with its repeat, and ends with a summary per workload
// whose median lies between its min and max; the text report fits 80
// columns and says which repeat each block is.
func TestRepeat(t *testing.T) {
	lines := jsonRun(t, "-repeat", "3", "-benchmarks", "fillrandom,stats,readmissing,multireadmissing")
	seen := map[string][]float64{}
	var walBytes []float64
	var summaries []map[string]any
	for _, m := range lines {
		switch m["type"] {
		case "result":
			k := m["benchmark"].(string)
			if m["filters"] == false {
				k += " off"
			}
			seen[k] = append(seen[k], m["repeat"].(float64))
		case "stats":
			walBytes = append(walBytes, m["wal_bytes"].(float64))
		case "summary":
			summaries = append(summaries, m)
		}
	}
	for _, k := range []string{"fillrandom", "readmissing", "readmissing off", "multireadmissing", "multireadmissing off"} {
		if r := seen[k]; len(r) != 3 || r[0] != 1 || r[1] != 2 || r[2] != 3 {
			t.Errorf("%s: repeats %v, want 1 2 3", k, r)
		}
	}
	if len(walBytes) != 3 || walBytes[0] == 0 || walBytes[1] != walBytes[0] || walBytes[2] != walBytes[0] {
		t.Errorf("WAL bytes after each repeat's fill: %v, want three equal counts (a fresh DB each time)", walBytes)
	}
	if len(summaries) != 5 {
		t.Fatalf("%d summary lines, want 5", len(summaries))
	}
	for _, s := range summaries {
		if s["repeats"] != 3.0 {
			t.Errorf("summary %v: repeats %v", s["benchmark"], s["repeats"])
		}
		for _, f := range []string{"ops_per_sec", "micros_per_op", "cpu_micros_per_op"} {
			if lo, med, hi := num(s, f, "min"), num(s, f, "median"), num(s, f, "max"); !(lo <= med && med <= hi && lo > 0) {
				t.Errorf("summary %v %s: min %v median %v max %v", s["benchmark"], f, lo, med, hi)
			}
		}
	}

	code, stdout, stderr := runArgs(t, append(append([]string{}, tiny...), "-repeat", "2", "-histogram",
		"-benchmarks", "fillrandom,readmissing,multireadrandom,readwhilewriting")...)
	if code != 0 {
		t.Fatalf("run = %d, stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"Repeats:     2 runs of the whole sequence, each on a fresh DB", "\nrepeat 1 of 2\n",
		"\nrepeat 2 of 2\n", "Repeats: median and min-max of 2 runs of each workload", "micros/op", "cpu us/op"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
	checkWidth(t, "repeat report", stdout)
	// The summary is laid out to fit, not wrapped: every figure's row holds
	// its three values (a row of every column, wrapped, lost its max to a
	// line of its own beside a 16-letter workload name).
	_, table, _ := strings.Cut(stdout, "Repeats: median and min-max")
	rows := 0
	for line := range strings.Lines(table) {
		if f := strings.Fields(strings.TrimPrefix(line, "  cpu")); strings.HasPrefix(line, "  ") && len(f) > 0 && strings.Contains(f[0], "/") {
			if rows++; len(f) != 4 {
				t.Errorf("summary row %q: want a figure and its median, min and max", line)
			}
		}
	}
	if rows != 3*7 { // fillrandom; the other three with filters on and off
		t.Errorf("%d summary rows, want 21:\n%s", rows, table)
	}
}

// TestOneRepeatUnchanged: without -repeat the report has no repeat marks
// and no summary.
func TestOneRepeatUnchanged(t *testing.T) {
	_, stdout, _ := runArgs(t, append(append([]string{}, tiny...), "-benchmarks", "fillrandom,readmissing")...)
	if strings.Contains(stdout, "repeat") || strings.Contains(stdout, "Repeats") || strings.Contains(stdout, "median") {
		t.Errorf("a single run's report mentions repeats:\n%s", stdout)
	}
	for _, m := range jsonRun(t, "-benchmarks", "fillrandom,readmissing") {
		if m["type"] == "summary" || (m["type"] == "result" && m["repeat"] != 1.0) {
			t.Errorf("line %v", m)
		}
	}
}
