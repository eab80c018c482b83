package main

import (
	"bytes"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/monbandb/monban/lsm"
)

// TestParseFilterScope: -filter_scope takes a list, per_table by default,
// and multiplies the settings, the scope innermost, so that the scopes of
// one bits value and sizing run side by side; each setting has a
// directory of its own, named by what varies.
func TestParseFilterScope(t *testing.T) {
	for _, c := range []struct {
		arg  string
		want []lsm.FilterScope
	}{
		{"", []lsm.FilterScope{lsm.PerTable}}, // the default
		{"tree", []lsm.FilterScope{lsm.TreeWide}},
		{" tree , per_table", []lsm.FilterScope{lsm.TreeWide, lsm.PerTable}},
	} {
		args := []string{"-bloom_bits", "5,10"}
		if c.arg != "" {
			args = append(args, "-filter_scope", c.arg)
		}
		cfg, err := parseConfig(args, &bytes.Buffer{})
		if err != nil {
			t.Fatalf("parseConfig(%q): %v", args, err)
		}
		if !slices.Equal(cfg.filterScopes, c.want) || len(cfg.settings()) != 2*len(c.want) {
			t.Errorf("parseConfig(%q): scopes %v, settings %v", args, cfg.filterScopes, cfg.settings())
		}
	}

	cfg, err := parseConfig([]string{"-bloom_bits", "5,10", "-filter_sizing", "uniform,per_level", "-filter_scope", "per_table,tree"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	dirs := map[string]bool{}
	for _, s := range cfg.settings() {
		got = append(got, s.String())
		dirs[cfg.settingDir(s)] = true
	}
	want := []string{
		"bloom_bits 5, filter_sizing uniform, filter_scope per_table",
		"bloom_bits 5, filter_sizing uniform, filter_scope tree",
		"bloom_bits 5, filter_sizing per_level, filter_scope per_table",
		"bloom_bits 5, filter_sizing per_level, filter_scope tree",
		"bloom_bits 10, filter_sizing uniform, filter_scope per_table",
		"bloom_bits 10, filter_sizing uniform, filter_scope tree",
		"bloom_bits 10, filter_sizing per_level, filter_scope per_table",
		"bloom_bits 10, filter_sizing per_level, filter_scope tree",
	}
	if !slices.Equal(got, want) {
		t.Errorf("settings in run order:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(dirs) != len(want) || !dirs["per_level-tree-bloom-10"] || !dirs["uniform-per_table-bloom-05"] {
		t.Errorf("setting directories %v", dirs)
	}
	one, err := parseConfig([]string{"-bloom_bits", "5,10", "-filter_scope", "tree"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if d := one.settingDir(one.settings()[0]); d != "bloom-05" {
		t.Errorf("one sizing and scope: directory %q, want bloom-05", d)
	}
}

// A scope kvbench does not know, one listed twice, or a sweep over scopes
// on a -use_existing_db DB exits 2 saying which flag is wrong.
func TestFilterScopeUsage(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-filter_scope", "global"}, `-filter_scope: "global" is neither per_table nor tree`},
		{[]string{"-filter_scope", "TreeWide"}, `-filter_scope: "TreeWide" is neither`},
		{[]string{"-filter_scope", ""}, `-filter_scope: "" is neither`},
		{[]string{"-filter_scope", "tree,"}, `-filter_scope: "" is neither`},
		{[]string{"-filter_scope", "tree,per_table,tree"}, "-filter_scope: tree listed twice"},
		{[]string{"-filter_scope", " per_table , per_table"}, "-filter_scope: per_table listed twice"},
		{[]string{"-use_existing_db", "-db", dir, "-filter_scope", "per_table,tree"}, "(2 asked for)"},
	} {
		code, stdout, stderr := runArgs(t, c.args...)
		if code != 2 || !strings.Contains(stderr, c.want) || !strings.Contains(stderr, "usage") || stdout != "" {
			t.Errorf("run(%q) = %d, want 2 with %q and usage on stderr only; stdout:\n%s\nstderr:\n%s",
				c.args, code, c.want, stdout, stderr)
		}
		checkShortUsage(t, c.args, stderr)
	}
	// One scope on an existing DB is fine: it is an Options field, not
	// part of the tables.
	fill := filepath.Join(t.TempDir(), "db")
	if code, _, stderr := runArgs(t, append([]string{"-db", fill, "-benchmarks", "fillrandom"}, tiny...)...); code != 0 {
		t.Fatalf("fill = %d:\n%s", code, stderr)
	}
	lines := jsonRun(t, "-db", fill, "-use_existing_db", "-filter_scope", "tree", "-benchmarks", "readmissing")
	if rm := results(lines, "readmissing", true); len(rm) != 1 || rm[0]["filter_scope"] != "tree" {
		t.Errorf("tree on an existing DB: %v", rm)
	}
}

// TestFilterScopeRun sweeps both scopes over a few thousand keys: every
// JSON line names its scope, and the two settings print as many lines
// each; under tree the tree-wide filter is built when readmissing starts
// (settle waits for it after the reopen) and answers every lookup once,
// which brings the filter probes per op, both kinds counted, to about 1,
// below per_table's one per level; under per_table there is no tree-wide
// filter to count or to size. The text report prints the tree-wide
// filter beside the table filters under tree only, and kvbench tree
// prints it for the DB built under tree only.
func TestFilterScopeRun(t *testing.T) {
	dir := t.TempDir()
	lines := jsonRun(t, "-db", dir, "-num", "3000", "-reads", "1000", "-repeat", "2", "-filter_scope", "per_table,tree",
		"-benchmarks", "fillrandom,readmissing,deleteabsent,stats")
	if got := lines[0]["filter_scope"]; len(got.([]any)) != 2 {
		t.Errorf("header filter_scope %v", got)
	}
	seen := map[string]map[string]int{}
	probesPerOp := map[string]float64{}
	for _, m := range lines[1:] {
		scope, _ := m["filter_scope"].(string)
		if scope != "per_table" && scope != "tree" {
			t.Errorf("%v line with filter_scope %#v", m["type"], m["filter_scope"])
			continue
		}
		if seen[scope] == nil {
			seen[scope] = map[string]int{}
		}
		seen[scope][m["type"].(string)]++
		tree := scope == "tree"
		switch {
		case m["type"] == "stats":
			checkTreeFilter(t, "stats", tree, m)
			if probes, lines := num(m, "tree_filter_probes"), num(m, "tree_filter_lines"); lines < probes || tree != (lines > 0) {
				t.Errorf("%s stats: %v tree-wide probes read %v cache lines", scope, probes, lines)
			}
		case m["type"] == "result" && m["benchmark"] == "readmissing" && m["filters"] == true:
			rd := m["reads"].(map[string]any)
			checkTreeFilter(t, "readmissing", tree, rd)
			ops, treeProbes, tableProbes := num(m, "ops"), num(rd, "tree_filter_probes"), num(rd, "filter_probes")
			if tree && treeProbes != ops {
				t.Errorf("tree readmissing: %v tree-wide probes in %v lookups, want one each", treeProbes, ops)
			}
			if perOp := num(rd, "filter_probes_per_op"); perOp != (treeProbes+tableProbes)/ops {
				t.Errorf("%s readmissing: filter_probes_per_op %v, want (%v + %v) / %v", scope, perOp, treeProbes, tableProbes, ops)
			}
			// A table filter's probe reads one cache line; a tree-wide
			// one reads one or two but for a long cluster.
			lines := num(rd, "filter_lines_per_op")
			if !tree && lines != tableProbes/ops || tree && !(lines >= (treeProbes+tableProbes)/ops && lines < 2) {
				t.Errorf("%s readmissing: filter_lines_per_op %v for %v tree-wide and %v table probes in %v lookups", scope, lines, treeProbes, tableProbes, ops)
			}
			probesPerOp[scope] += num(rd, "filter_probes_per_op") / 2 // over the two repeats
			if _, ok := rd["blocks_from_file_per_op"].(float64); !ok {
				t.Errorf("%s readmissing: no blocks_from_file_per_op", scope)
			}
		case m["type"] == "result" && m["benchmark"] == "deleteabsent" && m["filters"] == true:
			if n := num(m, "reads", "tree_filter_probes"); tree != (n > 0) {
				t.Errorf("%s deleteabsent: %v tree-wide probes", scope, n)
			}
		}
	}
	for _, scope := range []string{"per_table", "tree"} {
		// Two repeats of: fillrandom, readmissing and deleteabsent on and
		// off, stats; a summary per workload, on and off.
		want := map[string]int{"result": 10, "stats": 2, "summary": 5}
		if !maps.Equal(seen[scope], want) {
			t.Errorf("%s: lines %v, want %v", scope, seen[scope], want)
		}
	}
	if pt, tr := probesPerOp["per_table"], probesPerOp["tree"]; !(tr >= 1 && tr < 1.1 && pt > tr) {
		t.Errorf("readmissing filter probes per op: per_table %.3f, tree %.3f; want tree in [1, 1.1) and per_table above it", pt, tr)
	}
	// Without the comparison nothing reopens the DB between workloads: the
	// second readmissing counts its own probes, not the first one's too.
	again := results(jsonRun(t, "-num", "3000", "-reads", "1000", "-compare=false", "-filter_scope", "tree",
		"-benchmarks", "fillrandom,readmissing,readmissing"), "readmissing", true)
	for i, m := range again {
		if n := num(m, "reads", "tree_filter_probes"); n != num(m, "ops") {
			t.Errorf("readmissing %d of 2 in one DB open: %v tree-wide probes in %v lookups", i+1, n, num(m, "ops"))
		}
	}

	code, stdout, stderr := runArgs(t, append(append([]string{}, tiny...), "-num", "3000", "-filter_scope", "per_table,tree",
		"-benchmarks", "fillrandom,readmissing,stats")...)
	if code != 0 {
		t.Fatalf("text run = %d:\n%s", code, stderr)
	}
	for _, c := range []struct {
		want string
		n    int
	}{
		{"tree-wide filter: 300 probes reading ", 1}, // stats
		{"filter probes (1.000 tree-wide + ", 1},
		{"filter probes (0.000 tree-wide + 0.000 table), ", 1}, // filters off
		{" table filter probes, ", 2},                          // per_table, on and off
		{" filter cache lines read", 4},                        // readmissing under each scope, on and off
		{"the table filters alone promised", 1},
		{"+ tree-wide ", 2}, // filter memory, on and off
	} {
		// The report wraps its lines where it will.
		if n := strings.Count(strings.Join(strings.Fields(stdout), " "), c.want); n != c.n {
			t.Errorf("the text report has %q %d times, want %d:\n%s", c.want, n, c.n, stdout)
		}
	}
	if !regexp.MustCompile(`(?m)^ +tree-wide +[0-9.]+ +[0-9.]+ KiB$`).MatchString(stdout) {
		t.Errorf("the sweep has no tree-wide row:\n%s", stdout)
	}
	checkWidth(t, "scope sweep", stdout)

	for _, c := range []struct {
		setting string
		tree    bool
	}{{"per_table-bloom-10", false}, {"tree-bloom-10", true}} {
		code, stdout, stderr := runArgs(t, "tree", "-db", filepath.Join(dir, c.setting))
		if code != 0 || strings.Contains(stdout, "tree-wide filter (-filter_scope tree): 3000 entries") != c.tree {
			t.Errorf("kvbench tree of %s = %d, tree-wide filter line %v wanted:\n%s%s", c.setting, code, c.tree, stdout, stderr)
		}
	}
}

// checkTreeFilter checks the tree-wide filter's figures in m, a stats line
// or a result's reads: under tree, probes and a size (the latter at the
// workload's start), under per_table none.
func checkTreeFilter(t *testing.T, what string, tree bool, m map[string]any) {
	t.Helper()
	probes, bytes, entries := num(m, "tree_filter_probes"), num(m, "tree_filter_bytes"), num(m, "tree_filter_entries")
	bits, hasBits := m["tree_filter_bits_per_entry"].(float64)
	if tree {
		if probes == 0 || bytes == 0 || entries == 0 || !hasBits || bits != 8*bytes/entries {
			t.Errorf("tree %s: tree-wide filter probes %v, %v bytes, %v entries, %v bits/entry", what, probes, bytes, entries, m["tree_filter_bits_per_entry"])
		}
		return
	}
	if probes != 0 || num(m, "tree_filter_negatives") != 0 || bytes != 0 || entries != 0 || m["tree_filter_bits_per_entry"] != nil {
		t.Errorf("per_table %s: tree-wide filter probes %v, %v bytes, %v entries, %v bits/entry", what, probes, bytes, entries, m["tree_filter_bits_per_entry"])
	}
}
