package main

import (
	"bufio"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/monbandb/monban/lsm"
)

// jsonRun runs kvbench with -json and decodes every stdout line, failing
// the test on a line that is not a JSON object.
func jsonRun(t *testing.T, args ...string) []map[string]any {
	t.Helper()
	code, stdout, stderr := runArgs(t, append(append([]string{"-json"}, tiny...), args...)...)
	if code != 0 {
		t.Fatalf("run(%q) = %d, stderr:\n%s", args, code, stderr)
	}
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q is not a JSON object: %v", sc.Text(), err)
		}
		out = append(out, m)
	}
	if len(out) == 0 || out[0]["type"] != "header" {
		t.Fatalf("no header line first: %s", stdout)
	}
	return out
}

func results(lines []map[string]any, bench string, filters bool) []map[string]any {
	var out []map[string]any
	for _, m := range lines {
		if m["type"] == "result" && m["benchmark"] == bench && m["filters"] == filters {
			out = append(out, m)
		}
	}
	return out
}

func num(m map[string]any, path ...string) float64 {
	var v any = m
	for _, p := range path {
		v = v.(map[string]any)[p]
	}
	return v.(float64)
}

// workloadRuns lists every workload in the fewest runs that can hold
// them: the range workloads write keys of their own (big-endian
// integers, which have no prefixes), so they run apart, after a fill.
func workloadRuns() []string {
	var rest, ranges []string
	for _, name := range workloadNames {
		if isRangeScan(name) {
			ranges = append(ranges, name)
		} else {
			rest = append(rest, name)
		}
	}
	return []string{strings.Join(rest, ","), "fillrandom," + strings.Join(ranges, ",")}
}

// Every workload runs at a tiny size, all of them on one DB but the range
// workloads on another, and says what it did.
func TestEachWorkload(t *testing.T) {
	for _, run := range workloadRuns() {
		lines := jsonRun(t, "-benchmarks", run, "-threads", "2")
		for name := range strings.SplitSeq(run, ",") {
			if name == "stats" {
				if !slices.ContainsFunc(lines, func(m map[string]any) bool { return m["type"] == "stats" }) {
					t.Error("no stats line")
				}
				continue
			}
			on := results(lines, name, true)
			if len(on) != 1 || num(on[0], "ops") == 0 {
				t.Errorf("%s: results %v", name, on)
			}
			if off := results(lines, name, false); (len(off) == 1) != workloads[name].compare {
				t.Errorf("%s: comparison runs %v, want compare=%v", name, off, workloads[name].compare)
			}
		}
	}
}

// The key space does what the report promises: written keys are found,
// missing keys are not, and the filters turn almost every missing key away.
func TestReadAndDeleteFigures(t *testing.T) {
	lines := jsonRun(t, "-benchmarks", "fillseq,readrandom,readmissing,deleteabsent")
	rr := results(lines, "readrandom", true)[0]
	if num(rr, "found") != num(rr, "ops") {
		t.Errorf("readrandom found %v of %v", rr["found"], rr["ops"])
	}
	for _, filters := range []bool{true, false} {
		rm := results(lines, "readmissing", filters)[0]
		if num(rm, "found") != 0 {
			t.Errorf("readmissing (filters %v) found %v", filters, rm["found"])
		}
	}
	rm := results(lines, "readmissing", true)[0]
	if neg, probes := num(rm, "reads", "filter_negatives"), num(rm, "reads", "filter_probes"); probes == 0 || neg < 0.9*probes {
		t.Errorf("readmissing: %v negatives of %v probes at 10 bits per key", neg, probes)
	}
	da := results(lines, "deleteabsent", true)[0]
	if el := num(da, "deletes", "elided"); el < 0.9*num(da, "ops") {
		t.Errorf("deleteabsent elided %v of %v", el, da["ops"])
	}
	if el := num(results(lines, "deleteabsent", false)[0], "deletes", "elided"); el != 0 {
		t.Errorf("deleteabsent with filters ignored elided %v", el)
	}
}

// deleterange removes exactly the keys its disjoint ranges cover (the scan
// after it counts the rest), and the Compact after the calls shrinks the
// tables: at tiny's -range_size 40, 7 calls cover 280 of the 400 keys.
func TestDeleteRangeFigures(t *testing.T) {
	lines := jsonRun(t, "-benchmarks", "fillrandom,deleterange,scan,readrandom")
	dr := results(lines, "deleterange", true)[0]
	if calls, covered := num(dr, "range_deletes", "calls"), num(dr, "range_deletes", "keys_covered"); calls != 7 || covered != 280 || num(dr, "ops") != 7 {
		t.Fatalf("deleterange: %v calls, %v keys covered, %v ops; want 7, 280, 7", calls, covered, dr["ops"])
	}
	if left := num(results(lines, "scan", true)[0], "ops"); left != 400-280 {
		t.Errorf("scan after deleterange visited %v keys, want %d", left, 400-280)
	}
	if rr := results(lines, "readrandom", true)[0]; num(rr, "found") >= num(rr, "ops") {
		t.Errorf("readrandom after deleterange found %v of %v: the ranges hide nothing", rr["found"], rr["ops"])
	}
	if before, after := num(dr, "range_deletes", "table_bytes_before"), num(dr, "range_deletes", "table_bytes_after"); after >= before {
		t.Errorf("Compact after deleterange: tables %v bytes before, %v after; want fewer", before, after)
	}
	// A call is one commit of one WAL record: two 16-byte keys and a
	// header, whatever the range holds.
	if commits, wal := num(dr, "range_deletes", "commits"), num(dr, "range_deletes", "wal_bytes"); commits != 7 || wal < 7*2*16 || wal > 7*64 {
		t.Errorf("deleterange: %v commits, %v WAL bytes; want 7 commits of one small record each", commits, wal)
	}
	open, before, after := num(dr, "range_deletes", "dir_bytes_at_open"), num(dr, "range_deletes", "dir_bytes_before"), num(dr, "range_deletes", "dir_bytes_after")
	reopened := num(dr, "range_deletes", "dir_bytes_reopened")
	if open <= 0 || before <= open || after <= 0 || after >= before || reopened <= 0 || reopened >= before {
		t.Errorf("deleterange: directory %v bytes at open, %v before the calls, %v after Compact, %v reopened; want it filled, then smaller", open, before, after, reopened)
	}
}

func TestTextReport(t *testing.T) {
	code, stdout, stderr := runArgs(t, append(append([]string{}, tiny...), "-histogram", "-range_tombstones", "10",
		"-benchmarks", "fillrandom,readmissing,deleteabsent,stats")...)
	if code != 0 {
		t.Fatalf("run = %d, stderr:\n%s", code, stderr)
	}
	for _, want := range []string{"Go:", "GOMAXPROCS", "fillrandom   :", "micros/op", "ops/sec;", "readmissing  :",
		"filters on :", "filters off:", "saved      :", "deletes elided", "latency us: p50", "stats (bloom_bits 10",
		"Range dels:  10 range tombstones", "range tombstones: 10 live"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("report lacks %q:\n%s", want, stdout)
		}
	}
}

func TestTreeAndExplain(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	if code, _, stderr := runArgs(t, append(append([]string{}, tiny...), "-db", dir, "-benchmarks", "fillseq")...); code != 0 {
		t.Fatalf("fill = %d:\n%s", code, stderr)
	}
	before := dirState(t, dir)
	code, stdout, stderr := runArgs(t, "tree", "-db", dir)
	if code != 0 || !regexp.MustCompile(`(?m)^L[0-6] +[0-9]+ tables`).MatchString(stdout) || !strings.Contains(stdout, "bits/key") {
		t.Fatalf("tree = %d:\n%s%s", code, stdout, stderr)
	}
	code, stdout, stderr = runArgs(t, "explain", "-db", dir, "0000000000000042")
	if code != 0 || !strings.Contains(stdout, `Get("0000000000000042")`) || !strings.Contains(stdout, "=> found") {
		t.Fatalf("explain present = %d:\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = runArgs(t, "explain", "-db", dir, "0000000000000043")
	if code != 0 || !strings.Contains(stdout, "=> not found") {
		t.Fatalf("explain missing = %d:\n%s", code, stdout)
	}
	if after := dirState(t, dir); after != before {
		t.Fatalf("tree and explain changed the DB directory:\nbefore %s\nafter  %s", before, after)
	}
	if code, _, stderr := runArgs(t, "tree", "-db", filepath.Join(dir, "nothing")); code != 1 || !strings.Contains(stderr, "no monban DB") {
		t.Fatalf("tree of no DB = %d:\n%s", code, stderr)
	}
	// -use_existing_db runs on what is there.
	lines := jsonRun(t, "-db", dir, "-use_existing_db", "-benchmarks", "readrandom")
	if rr := results(lines, "readrandom", true); len(rr) != 1 || num(rr[0], "found") != num(rr[0], "ops") {
		t.Fatalf("readrandom on existing DB: %v", rr)
	}
}

// TestHistogramPercentiles: every percentile kvbench prints is within
// 0.1% of the exact one (three significant digits), and max is the largest
// latency to the same precision.
func TestHistogramPercentiles(t *testing.T) {
	h := newHistogram()
	const n = 100_000
	for i := 1; i <= n; i++ {
		h.add(time.Duration(i) * 100) // 100 ns .. 10 ms, uniform
	}
	for _, pc := range percentiles {
		want := pc.p / 100 * n * 100
		if got := float64(h.percentile(pc.p)); math.Abs(got-want) > want/1000 {
			t.Errorf("%s = %v ns, want %v ns within 0.1%%", pc.name, got, want)
		}
	}
	if got, want := float64(h.max()), float64(n*100); math.Abs(got-want) > want/1000 {
		t.Errorf("max = %v ns, want %v", got, want)
	}
	o := newHistogram()
	o.add(time.Hour + time.Second) // past histMax: recorded as histMax
	h.merge(o)
	if h.count() != n+1 || h.max() < histMax-histMax/1000 {
		t.Errorf("after merge: count %d, max %v", h.count(), h.max())
	}
}

// dirState describes dir's files, names and contents.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s:%d:%x ", e.Name(), len(data), sha256.Sum256(data))
	}
	return b.String()
}

// TestCPUMicrosPerOp: each workload reports its workers' thread CPU time
// per op beside wall micros/op, in JSON and in text.
func TestCPUMicrosPerOp(t *testing.T) {
	lines := jsonRun(t, append(append([]string{}, tiny...), "-benchmarks", "fillrandom,readrandom,scan")...)
	for _, name := range []string{"fillrandom", "readrandom", "scan"} {
		for _, rec := range results(lines, name, true) {
			if cpu := num(rec, "cpu_micros_per_op"); cpu <= 0 {
				t.Errorf("%s: cpu_micros_per_op %v", name, cpu)
			}
		}
	}
	_, stdout, _ := runArgs(t, append(append([]string{}, tiny...), "-benchmarks", "readrandom")...)
	if !regexp.MustCompile(`(?m)^readrandom   : +[0-9.]+ micros/op +[0-9.]+ cpu us/op `).MatchString(stdout) {
		t.Errorf("no cpu us/op in:\n%s", stdout)
	}
}

// -range_tombstones puts its spans in the DB and says where: the fill
// writes them among its keys (some reach a table that keeps them), each
// read workload starts with all of them live, and they hide no key it
// reads. Afterwards every span still covers its start key in the DB.
func TestRangeTombstones(t *testing.T) {
	dir := t.TempDir()
	lines := jsonRun(t, "-db", dir, "-range_tombstones", "20", "-benchmarks", "fillrandom,readrandom,readmissing,multireadrandom")
	for _, name := range []string{"readrandom", "readmissing", "multireadrandom"} {
		for _, filters := range []bool{true, false} {
			r := results(lines, name, filters)[0]
			rt, ok := r["reads"].(map[string]any)["range_tombstones"].(map[string]any)
			if !ok {
				t.Fatalf("%s (filters %v): no range_tombstones in %v", name, filters, r["reads"])
			}
			inTables := 0.0
			for _, n := range rt["levels"].([]any) {
				inTables += n.(float64)
			}
			if rt["live"] != 20.0 || num(rt, "memtable")+inTables != 20 {
				t.Errorf("%s (filters %v): range tombstones %v, want 20 live, in the memtable or tables", name, filters, rt)
			}
			if name == "readrandom" && inTables == 0 {
				t.Errorf("%s: no range tombstone in a table (%v): the fill wrote none among its keys", name, rt)
			}
			want := num(r, "ops")
			if name == "readmissing" {
				want = 0
			}
			if num(r, "found") != want {
				t.Errorf("%s (filters %v) found %v of %v, want %v", name, filters, r["found"], r["ops"], want)
			}
		}
	}
	c := &config{num: 400, keySize: 16, rangeTombstones: 20}
	db, err := lsm.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	b := &bench{cfg: c, db: db, keys: c.keys()}
	for j := range c.rangeTombstones {
		start, _ := b.span(j)
		if tr, err := db.Explain(start); err != nil || tr.Result != lsm.ResultRangeDeleted {
			t.Errorf("span %d: %v, %v; want covered by a range tombstone", j, tr, err)
		}
	}
}

// Without -range_tombstones nothing is written beside the reads, and the
// report says nothing of them.
func TestNoRangeTombstones(t *testing.T) {
	lines := jsonRun(t, "-benchmarks", "fillrandom,readmissing")
	for _, filters := range []bool{true, false} {
		if rt, ok := results(lines, "readmissing", filters)[0]["reads"].(map[string]any)["range_tombstones"]; ok {
			t.Errorf("readmissing (filters %v): range_tombstones %v without the flag", filters, rt)
		}
	}
}
