package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
)

var snakeKey = regexp.MustCompile(`^[a-z0-9_]+$`)

// walkJSON calls f on every object in v, nested ones included, with the
// path that leads to it.
func walkJSON(path string, v any, f func(path string, obj map[string]any)) {
	switch v := v.(type) {
	case map[string]any:
		f(path, v)
		for k, x := range v {
			walkJSON(path+"."+k, x, f)
		}
	case []any:
		for _, x := range v {
			walkJSON(path+"[]", x, f)
		}
	}
}

// TestJSONKeysAndNulls walks the -json output of runs that print every
// line type (header, result, stats, summary) and every nested object: every
// key is snake_case, every line names the setting it was measured at (the
// header lists them), and every figure with nothing to measure is null, not
// 0. The second run makes such figures: -reads 0 and -deletes 0 give
// workloads of no ops, bits 0 levels of no probes, and a DB opened on an
// existing one has flushed nothing when its first stats are taken.
func TestJSONKeysAndNulls(t *testing.T) {
	dir := t.TempDir()
	var lines []map[string]any
	for i, run := range workloadRuns() {
		lines = append(lines, jsonRun(t, "-db", fmt.Sprint(dir, "/", i), "-benchmarks", run,
			"-bloom_bits", "0,10", "-repeat", "2", "-batch_size", "7", "-range_tombstones", "5")...)
	}
	lines = append(lines, jsonRun(t, "-db", dir+"/0/bloom-00", "-use_existing_db", "-benchmarks",
		"stats,readrandom,readmissing,multireadrandom,multireadmissing,deleteabsent,deleterandom,readwhilewriting,seekrandom,scan",
		"-reads", "0", "-deletes", "0", "-bloom_bits", "0")...)
	types := map[string]int{}
	nulls := 0
	for _, line := range lines {
		types[line["type"].(string)]++
		checkSetting(t, line)
		walkJSON(line["type"].(string), line, func(path string, obj map[string]any) {
			for k := range obj {
				if !snakeKey.MatchString(k) {
					t.Errorf("%s: key %q is not snake_case", path, k)
				}
			}
			mustNull := func(key, why string) {
				if v, ok := obj[key]; !ok || v != nil {
					t.Errorf("%s.%s = %v, want null: %s", path, key, v, why)
				} else {
					nulls++
				}
			}
			if ops, ok := obj["ops"].(float64); ok && ops == 0 {
				for _, k := range []string{"micros_per_op", "cpu_micros_per_op", "ops_per_sec", "mb_per_sec"} {
					mustNull(k, "no ops")
				}
				if rd, ok := obj["reads"].(map[string]any); ok {
					for k := range rd {
						if strings.HasSuffix(k, "_per_op") && rd[k] != nil {
							t.Errorf("%s.reads.%s = %v with no ops", path, k, rd[k])
						}
					}
					for _, l := range rd["levels"].([]any) {
						if v := l.(map[string]any)["blocks_per_op"]; v != nil {
							t.Errorf("%s: level blocks_per_op %v with no ops", path, v)
						}
					}
				}
				if _, ok := obj["latency_us"]; ok {
					t.Errorf("%s: latency_us with no ops", path)
				}
			}
			if n, ok := obj["count"].(float64); ok && n == 0 {
				mustNull("micros_per_batch", "no batches")
			}
			if neg, ok := obj["negatives"].(float64); ok && neg == 0 && obj["false_positives"] == 0.0 {
				mustNull("fpr", "no probe could be a false positive")
			}
			if neg, ok := obj["filter_negatives"].(float64); ok && neg == 0 && obj["false_positives"] == 0.0 {
				mustNull("fpr", "no probe could be a false positive")
			}
			if obj["type"] == "result" && obj["benchmark"] == "compact" {
				// Compact merges on the calling thread: its CPU is measured.
				if cpu, ok := obj["cpu_micros_per_op"].(float64); !ok || cpu <= 0 {
					t.Errorf("%s: compact's cpu_micros_per_op %v, want the calling thread's CPU", path, obj["cpu_micros_per_op"])
				}
			}
			if obj["type"] == "stats" {
				l0 := obj["levels"].([]any)[0].(map[string]any)
				if l0["table_bytes_written"] == 0.0 {
					mustNull("write_amplification", "nothing flushed since open")
				}
				total := obj["total"].(map[string]any)
				for _, k := range []string{"level", "score"} {
					if total[k] != nil {
						t.Errorf("%s.total.%s = %v, want null", path, k, total[k])
					}
				}
			}
		})
	}
	for _, typ := range []string{"header", "result", "stats", "summary"} {
		if types[typ] == 0 {
			t.Errorf("no %q line", typ)
		}
	}
	if nulls < 10 {
		t.Errorf("only %d nulls checked", nulls)
	}
}

// checkSetting checks that a -json line names its setting: the header
// lists the values swept, every other line has one of each.
func checkSetting(t *testing.T, line map[string]any) {
	t.Helper()
	for _, k := range []string{"bloom_bits", "filter_sizing", "filter_scope"} {
		v, ok := line[k]
		if line["type"] == "header" {
			_, ok = v.([]any)
		} else if k == "bloom_bits" {
			_, ok = v.(float64)
		} else {
			_, ok = v.(string)
		}
		if !ok {
			t.Errorf("%v line: %s = %#v", line["type"], k, v)
		}
	}
}
