package main

import (
	"bytes"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/monbandb/monban/lsm"
)

func TestParseFilterSizing(t *testing.T) {
	for _, c := range []struct {
		arg  string
		want []lsm.FilterSizing
	}{
		{"", nil}, // the default
		{"per_level", []lsm.FilterSizing{lsm.FilterSizingPerLevel}},
		{" per_level , uniform", []lsm.FilterSizing{lsm.FilterSizingPerLevel, lsm.FilterSizingUniform}},
	} {
		args := []string{"-bloom_bits", "5,10"}
		want := c.want
		if c.arg != "" {
			args = append(args, "-filter_sizing", c.arg)
		} else {
			want = []lsm.FilterSizing{lsm.FilterSizingUniform}
		}
		cfg, err := parseConfig(args, &bytes.Buffer{})
		if err != nil {
			t.Fatalf("parseConfig(%q): %v", args, err)
		}
		if !slices.Equal(cfg.filterSizings, want) || len(cfg.settings()) != 2*len(want) {
			t.Errorf("parseConfig(%q): sizings %v, settings %v", args, cfg.filterSizings, cfg.settings())
		}
	}
}

// A sizing kvbench does not know, one listed twice, or a sweep that would
// rebuild a -use_existing_db DB exits 2 saying which flag is wrong; one
// sizing on an existing DB is fine (it sizes the tables compactions write).
func TestFilterSizingUsage(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-filter_sizing", "monkey"}, `-filter_sizing: "monkey" is neither uniform nor per_level`},
		{[]string{"-filter_sizing", ""}, `-filter_sizing: "" is neither`},
		{[]string{"-filter_sizing", "uniform,"}, `-filter_sizing: "" is neither`},
		{[]string{"-filter_sizing", "per_level,per_level"}, "-filter_sizing: per_level listed twice"},
		{[]string{"-bloom_bits", "10,10"}, "-bloom_bits: 10 listed twice"},
		{[]string{"-use_existing_db", "-db", dir, "-filter_sizing", "uniform,per_level"},
			"-use_existing_db cannot rebuild the DB per -bloom_bits, -filter_sizing and -filter_scope setting (2 asked for)"},
		{[]string{"-use_existing_db", "-db", dir, "-filter_sizing", "per_level", "-bloom_bits", "5,10"},
			"(2 asked for)"},
	} {
		code, stdout, stderr := runArgs(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "usage") || stdout != "" {
			t.Errorf("run(%q) = %d, want 2 with %q and usage on stderr only; stdout:\n%s\nstderr:\n%s",
				c.args, code, c.want, stdout, stderr)
		}
	}
	fill := filepath.Join(t.TempDir(), "db")
	if code, _, stderr := runArgs(t, append([]string{"-db", fill, "-benchmarks", "fillrandom"}, tiny...)...); code != 0 {
		t.Fatalf("fill = %d:\n%s", code, stderr)
	}
	lines := jsonRun(t, "-db", fill, "-use_existing_db", "-filter_sizing", "per_level", "-benchmarks", "readmissing")
	if rm := results(lines, "readmissing", true); len(rm) != 1 || rm[0]["filter_sizing"] != "per_level" {
		t.Errorf("per_level on an existing DB: %v", rm)
	}
}

// TestFilterSizingJSON: every line a sweep over both sizings prints names
// its sizing; per_level spreads the bits, so some level's bits per key is
// a fraction, while uniform gives every level the setting's; the filters
// promise missing-key workloads their blocks, and nothing to others or
// with filters ignored.
func TestFilterSizingJSON(t *testing.T) {
	lines := jsonRun(t, "-filter_sizing", "uniform,per_level", "-benchmarks", "fillrandom,readmissing,multireadmissing,readrandom,stats")
	if got := lines[0]["filter_sizing"]; len(got.([]any)) != 2 {
		t.Errorf("header filter_sizing %v", got)
	}
	fractional := false
	seen := map[string]int{}
	for _, m := range lines[1:] {
		sizing, ok := m["filter_sizing"].(string)
		if !ok || (sizing != "uniform" && sizing != "per_level") {
			t.Errorf("%v line without filter_sizing: %v", m["type"], m)
			continue
		}
		seen[sizing]++
		rd, ok := m["reads"].(map[string]any)
		if !ok {
			continue
		}
		for _, l := range rd["levels"].([]any) {
			bits, ok := l.(map[string]any)["bits_per_key"].(float64)
			if !ok {
				continue // no table there to describe
			}
			if sizing == "uniform" && bits != 10 {
				t.Errorf("uniform %v: level %v has %v bits per key", m["benchmark"], l.(map[string]any)["level"], bits)
			}
			if sizing == "per_level" && bits != math.Trunc(bits) {
				fractional = true
			}
		}
		promise := rd["expected_false_positives"]
		missing := strings.HasSuffix(m["benchmark"].(string), "readmissing") && m["filters"] == true
		switch p, _ := promise.(float64); {
		case missing && !(p > 0):
			t.Errorf("%s %v: expected_false_positives %v", sizing, m["benchmark"], promise)
		case !missing && promise != nil:
			t.Errorf("%s %v (filters %v): expected_false_positives %v", sizing, m["benchmark"], m["filters"], promise)
		}
	}
	if !fractional {
		t.Error("per_level: no level with a fractional bits_per_key")
	}
	// fillrandom, three reads on and off, stats.
	if seen["uniform"] != 8 || seen["per_level"] != 8 {
		t.Errorf("lines per sizing: %v, want 8 each", seen)
	}
}

// "filters in memory" is Stats' FilterBytes: while every table is open
// (kvbench opens them all before a workload; MaxOpenFiles is far above
// these trees) it is the sum of the tables' filter blocks, level by level.
func TestFilterBytesFromStats(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	if code, _, stderr := runArgs(t, append([]string{"-db", dir, "-benchmarks", "fillrandom",
		"-filter_sizing", "per_level"}, tiny...)...); code != 0 {
		t.Fatalf("fill = %d:\n%s", code, stderr)
	}
	db, err := lsm.Open(dir, &lsm.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tables, err := db.Tables()
	if err != nil {
		t.Fatal(err)
	}
	var perLevel [lsm.NumLevels]int64
	for _, tb := range tables {
		perLevel[tb.Level] += tb.FilterBytes
	}
	s := db.Stats()
	var total int64
	for i, l := range s.Levels {
		total += perLevel[i]
		if int64(l.FilterBytes) != perLevel[i] {
			t.Errorf("L%d: Stats %d filter bytes, tables %d", i, l.FilterBytes, perLevel[i])
		}
	}
	if total == 0 || int64(s.Total.FilterBytes) != total {
		t.Errorf("Stats %d filter bytes in all, tables %d", s.Total.FilterBytes, total)
	}
}
