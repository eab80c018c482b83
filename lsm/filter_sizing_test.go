package lsm

import (
	"fmt"
	"math"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/vfs"
)

// TestFilterSizingPerLevel fills the same keys under both sizings into a
// tree of several levels and checks that per-level sizing finds every key
// (no false negative), gives the deepest level fewer bits per key than the
// levels above, spends about the same filter memory, and expects fewer
// false positives per missing key, by the filters' own arithmetic.
func TestFilterSizingPerLevel(t *testing.T) {
	const n = 30000
	type result struct {
		tables               []TableInfo
		filterBytes, entries float64
		expectedFP           float64
		// uniformFP is what 10 bits per key in every table would have
		// promised on the same tree: two runs leave trees of their own
		// (a level more or less, as compactions happen to end), so
		// sizings are compared on one.
		uniformFP float64
	}
	run := func(sizing FilterSizing) result {
		d := openMem(t, vfs.NewMem(), &Options{
			FilterSizing: sizing, MemtableSize: 32 << 10, LBaseMaxBytes: 128 << 10,
			TargetFileSize: 64 << 10, LevelMultiplier: 4,
		})
		defer d.Close()
		for i := range n {
			if err := d.Put(benchKey(nil, 2*uint64(i)), make([]byte, 20)); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
		d.waitIdle()
		for i := range n {
			if _, err := d.Get(benchKey(nil, 2*uint64(i))); err != nil {
				t.Fatalf("%v: key %d: %v", sizing, i, err)
			}
			if _, err := d.Get(benchKey(nil, 2*uint64(i)+1)); err != ErrNotFound {
				t.Fatalf("%v: absent key %d: %v", sizing, i, err)
			}
		}
		tables, err := d.Tables()
		if err != nil {
			t.Fatal(err)
		}
		r := result{tables: tables}
		// A missing key probes every L0 table and one table per deeper
		// level, which holds it with a probability in proportion to its
		// entries.
		levelEntries := map[int]float64{}
		for _, tb := range tables {
			levelEntries[tb.Level] += float64(tb.Entries)
		}
		for _, tb := range tables {
			r.filterBytes += float64(tb.FilterBytes)
			r.entries += float64(tb.Entries)
			weight := 1.0
			if tb.Level > 0 {
				weight = float64(tb.Entries) / levelEntries[tb.Level]
			}
			r.expectedFP += weight * filter.ExpectedFalsePositives([]float64{tb.FilterBitsPerKey})
			r.uniformFP += weight * filter.ExpectedFalsePositives([]float64{10})
		}
		// Stats reports the same figures from the open tables.
		st := d.Stats()
		if float64(st.Total.FilterBytes) != r.filterBytes || math.Abs(st.ExpectedFalsePositives-r.expectedFP) > 1e-9 {
			t.Errorf("%v: Stats has %d filter bytes, %.6f expected false positives; the tables %.0f, %.6f",
				sizing, st.Total.FilterBytes, st.ExpectedFalsePositives, r.filterBytes, r.expectedFP)
		}
		return r
	}
	uniform, perLevel := run(FilterSizingUniform), run(FilterSizingPerLevel)

	levels := map[int]bool{}
	bitsAt := map[int][]float64{}
	for _, tb := range perLevel.tables {
		levels[tb.Level] = true
		bitsAt[tb.Level] = append(bitsAt[tb.Level], tb.FilterBitsPerKey)
	}
	if len(levels) < 2 || !levels[NumLevels-1] {
		t.Fatalf("tree has levels %v; the test needs the last level and one above", levels)
	}
	var last, above []float64
	for l, bits := range bitsAt {
		if l == NumLevels-1 {
			last = append(last, bits...)
		} else {
			above = append(above, bits...)
		}
	}
	if mean(last) >= mean(above) {
		t.Errorf("per-level: last level %.2f bits/key, above it %.2f; want fewer at the last level", mean(last), mean(above))
	}
	for _, tb := range uniform.tables {
		if tb.FilterBitsPerKey != 10 {
			t.Fatalf("uniform: table %06d has %v bits/key", tb.FileNum, tb.FilterBitsPerKey)
		}
	}
	// Per-level sizing chooses each table's share when it is written, from
	// the tree as it is then; the tree moves on, so the total drifts from
	// the budget a little.
	ub, pb := uniform.filterBytes/uniform.entries, perLevel.filterBytes/perLevel.entries
	if math.Abs(pb/ub-1) > 0.10 {
		t.Errorf("filter bytes per entry: per-level %.3f, uniform %.3f; want within 10%%", pb, ub)
	}
	if perLevel.expectedFP >= perLevel.uniformFP {
		t.Errorf("expected false positives per missing key on the per-level tree: per-level %.4f, uniform %.4f", perLevel.expectedFP, perLevel.uniformFP)
	}
	t.Logf("filter bytes/entry: uniform %.3f, per-level %.3f; expected FP per miss on the per-level tree %.4f -> %.4f (%v; the uniform tree's %.4f)",
		ub, pb, perLevel.uniformFP, perLevel.expectedFP, fmt.Sprint(bitsAt), uniform.expectedFP)
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// TestProbeRates: a level whose one table covers a tenth of the keys is
// probed by the share of the entries under that tenth; a run of unknown
// range (a flushed table) covers every key and meets every run; the last
// level, covering all, is probed by every lookup.
func TestProbeRates(t *testing.T) {
	k := func(i int) []byte { return fmt.Appendf(nil, "k%02d", i) }
	var last probedRun
	for i := 0; i < 100; i += 10 {
		last.spans = append(last.spans, keySpan{k(i), k(i + 9), 100})
		last.entries += 100
	}
	runs := []probedRun{
		{entries: 10}, // flushed: nil span
		{entries: 10, spans: []keySpan{{k(12), k(15), 10}}}, // meets the last level's k10..k19
		last,
	}
	got := probeRates(runs)
	want := []float64{1, (10 + 10 + 100) / 1020.0, 1}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("run %d: rate %v, want %v", i, got[i], want[i])
		}
	}
}

// TestSettle: a level at twice its target keeps half its entries and half
// of its filters' spending, and the other half of its entries goes to the
// last level; a level within its target and one without a target stay as
// they are; L0 keeps its newest l0Max tables' entries, gives the rest to
// the last level, and drops out of the spending.
func TestSettle(t *testing.T) {
	runs := []probedRun{
		{level: 0, entries: 10, bytes: 1000, known: 10, spent: 200},
		{level: 0, entries: 20, bytes: 2000, known: 20, spent: 400},
		{level: 0, entries: 30, bytes: 3000, known: 30, spent: 600},
		{level: 3, entries: 5, bytes: 500, known: 5, spent: 60},
		{level: 4, entries: 100, bytes: 2000, known: 100, spent: 1200},
		{level: 5, entries: 100, bytes: 2000, known: 80, spent: 900},
		{level: NumLevels - 1, entries: 1000, bytes: 20000, known: 1000, spent: 7000},
	}
	var targets [NumLevels]int64
	targets[4], targets[5], targets[NumLevels-1] = 1000, 5000, 20000
	settle(runs, targets, 2)
	want := []probedRun{
		{level: 0, entries: 10, known: 0, spent: 0},
		{level: 0, entries: 20, known: 0, spent: 0},
		{level: 0, entries: 0, known: 0, spent: 0},
		{level: 3, entries: 5, known: 5, spent: 60},
		{level: 4, entries: 50, known: 50, spent: 600},
		{level: 5, entries: 100, known: 80, spent: 900},
		{level: NumLevels - 1, entries: 1080, known: 1000, spent: 7000},
	}
	for i := range want {
		if g, w := runs[i], want[i]; g.entries != w.entries || g.known != w.known || g.spent != w.spent {
			t.Errorf("L%d: %v entries, %v known spending %v; want %v, %v, %v", g.level, g.entries, g.known, g.spent, w.entries, w.known, w.spent)
		}
	}
}
