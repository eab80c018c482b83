package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/monbandb/monban/lsm"
)

// TestUndefinedFigures: an FPR no probe measured and a ratio over zero
// print as n/a in text and null in JSON, never as 0.
func TestUndefinedFigures(t *testing.T) {
	measured := levelRead{Level: 0, Tables: 1, BitsPerKey: ptr(10), Probes: 10, Negatives: 9, FalsePositives: 1,
		FPR: levelFPR(lsm.LevelStats{FilterProbes: 10, FilterNegatives: 9, FilterFalsePositives: 1})}
	// L6 was probed only by keys it held: no probe could be a false positive.
	unmeasured := levelRead{Level: 6, Tables: 1, BitsPerKey: ptr(10), Probes: 5,
		FPR: levelFPR(lsm.LevelStats{FilterProbes: 5})}
	on := &record{Benchmark: "readrandom", Filters: true, Ops: 10, OpsPerSec: ptr(100),
		Reads: &reads{FilterProbes: 15, Levels: []levelRead{measured, unmeasured}}}
	off := &record{Benchmark: "readrandom", Ops: 0, Reads: &reads{}} // no ops: no rates

	var out bytes.Buffer
	r := newReporter(&config{}, &out)
	r.result(on, off)
	text := out.String()
	for _, want := range []string{
		"filters off:      n/a micros/op     n/a cpu us/op     n/a ops/sec;",
		"data blocks/op n/a from file + n/a from cache; per op n/a table",
		"n/a negatives",
		"(n/a: 0.0000 vs n/a with",
		"n/a the ops/sec",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %q:\n%s", want, text)
		}
	}
	fprs := map[string]string{}
	for line := range strings.Lines(text) {
		if f := strings.Fields(line); len(f) == 9 && strings.HasPrefix(f[0], "L") {
			fprs[f[0]] = f[6]
		}
	}
	if fprs["L0"] != "10.0000" || fprs["L6"] != "n/a" {
		t.Errorf("level FPRs %v, want L0 10.0000, L6 n/a:\n%s", fprs, text)
	}
	if strings.Contains(text, "0.00x") {
		t.Errorf("a ratio over zero printed as 0:\n%s", text)
	}

	out.Reset()
	r = newReporter(&config{json: true}, &out)
	r.result(on, off)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"fpr":null`) || !strings.Contains(lines[0], `"fpr":0.1,`) ||
		!strings.Contains(lines[1], `"micros_per_op":null`) || !strings.Contains(lines[1], `"blocks_from_file_per_op":null`) {
		t.Errorf("JSON: %s", out.String())
	}
	for _, l := range lines {
		var v map[string]any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatal(err)
		}
	}
}
