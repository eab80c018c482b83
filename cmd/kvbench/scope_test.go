package main

import (
	"bytes"
	"path/filepath"
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
