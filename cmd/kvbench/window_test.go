package main

import (
	"fmt"
	"path/filepath"
	"reflect"
	"testing"
)

// levelsOf maps "L<n>" to a result's level entries.
func levelsOf(m map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for _, l := range m["reads"].(map[string]any)["levels"].([]any) {
		l := l.(map[string]any)
		out[fmt.Sprintf("L%v", l["level"])] = l
	}
	return out
}

// TestLevelTablesAtStart: every level a workload probed shows tables, at
// the start or written during it (readwhilewriting's writer flushes into
// L0 as it goes), and the runs with filters on and off of a workload start
// from the same tables: both are copies of one settled DB.
func TestLevelTablesAtStart(t *testing.T) {
	lines := jsonRun(t, "-benchmarks", "fillrandom,readmissing,deleterandom,readwhilewriting", "-reads", "3000")
	written := 0
	for _, name := range []string{"readmissing", "deleterandom", "readwhilewriting"} {
		on, off := results(lines, name, true)[0], results(lines, name, false)[0]
		for level, l := range levelsOf(on) {
			tables, w := l["tables"].(float64), l["tables_written"].(float64)
			written += int(w)
			if l["probes"].(float64) > 0 && tables+w == 0 {
				t.Errorf("%s %s: %v probes, no tables", name, level, l["probes"])
			}
			if o := levelsOf(off)[level]; name != "readwhilewriting" && (o == nil || o["tables"] != l["tables"]) {
				t.Errorf("%s %s: %v tables at the start with filters on, %v with filters off", name, level, l["tables"], o)
			}
		}
	}
	if written == 0 {
		t.Error("no workload wrote a table: the +N column went untested")
	}
}

// TestCountsRepeatOnOneTree: docs/benchmarks.md's claim that counts read off a
// given tree repeat: two runs on one existing DB give the same filter and
// block counts, level by level.
func TestCountsRepeatOnOneTree(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	jsonRun(t, "-db", dir, "-benchmarks", "fillrandom")
	var runs [2][]any
	for i := range runs {
		lines := jsonRun(t, "-db", dir, "-use_existing_db", "-benchmarks", "readrandom,readmissing")
		for _, name := range []string{"readrandom", "readmissing"} {
			rec := results(lines, name, true)[0]
			rd := rec["reads"].(map[string]any)
			runs[i] = append(runs[i], rec["found"], rd["filter_probes"], rd["false_positives"], rd["levels"])
			for _, l := range rd["levels"].([]any) {
				// The split between cache and file moves a little; the sum
				// does not.
				l := l.(map[string]any)
				l["blocks"] = l["blocks_read"].(float64) + l["cache_hits"].(float64)
				delete(l, "blocks_read")
				delete(l, "cache_hits")
			}
		}
	}
	if !reflect.DeepEqual(runs[0], runs[1]) {
		t.Errorf("two runs on one tree counted differently:\n%v\n%v", runs[0], runs[1])
	}
}
