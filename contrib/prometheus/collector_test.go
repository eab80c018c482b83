package prometheus

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/lsm"
)

// perScrape is the number of metrics one Collect sends: twelve families
// by level, the unlabelled ones, three drop reasons twice, six compaction
// kinds.
func perScrape(c *Collector) int { return len(c.levels)*lsm.NumLevels + len(c.global) + 2*3 + 7 }

func openDB(t *testing.T) *lsm.DB {
	t.Helper()
	// Keys' first four bytes are their prefix, for prefix iterators.
	split := &filter.Split{Name: "first4", Len: func(k []byte) int { return min(len(k), 4) }}
	db, err := lsm.Open(t.TempDir(), &lsm.Options{MemtableSize: 64 << 10, Split: split})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func key(i int) []byte { return fmt.Appendf(nil, "key-%06d", i) }

// TestLint checks names, types and help text against the Prometheus
// conventions (counters end in _total, units in base units).
func TestLint(t *testing.T) {
	c := NewCollector(openDB(t))
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
	if n := testutil.CollectAndCount(c); n != perScrape(c) {
		t.Errorf("Collect sent %d metrics, want %d", n, perScrape(c))
	}
}

// TestAfterWork writes, flushes, reads present and absent keys and deletes
// absent keys, then checks that a registry's Gather reports what Stats says.
func TestAfterWork(t *testing.T) {
	db := openDB(t)
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(NewCollector(db))

	const n = 2000
	val := make([]byte, 100)
	for i := 0; i < n; i += 2 { // even keys present, odd absent
		if err := db.Put(key(i), val); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		_, err := db.Get(key(i))
		if want := i%2 == 0; (err == nil) != want {
			t.Fatalf("Get(%s): %v", key(i), err)
		}
	}
	for i := 1; i < 200; i += 2 {
		if err := db.Delete(key(i)); err != nil {
			t.Fatal(err)
		}
	}

	// An iterator over a prefix no key has, which every filter rules out,
	// and one over the prefix every key has, which none does.
	for _, prefix := range []string{"none", "key-"} {
		it := db.NewIter(&lsm.IterOptions{Prefix: []byte(prefix)})
		if it.First() != (prefix == "key-") {
			t.Fatalf("prefix %s: First %v", prefix, it.Valid())
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
	}

	s := db.Stats()
	if s.Flushes == 0 || s.Total.Files == 0 || s.Total.FilterProbes == 0 || s.DeletesElided == 0 || s.PrefixSkips == 0 || s.PrefixSkips == s.PrefixProbes {
		t.Fatalf("the workload did too little to test with:\n%v", s)
	}
	// Gets and Deletes are done; a flush or compaction may still run.
	// Counters only reads and deletes move must equal Stats exactly.
	l0 := s.Levels[0]
	want := fmt.Sprintf(`
# HELP monban_deletes_elided_total Deletes that the filters proved unnecessary and that wrote nothing.
# TYPE monban_deletes_elided_total counter
monban_deletes_elided_total %d
# HELP monban_background_error 1 once a failed flush, compaction or WAL write made the DB read-only (until it is reopened), else 0.
# TYPE monban_background_error gauge
monban_background_error 0
`, s.DeletesElided)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "monban_deletes_elided_total", "monban_background_error"); err != nil {
		t.Error(err)
	}

	got := gather(t, reg)
	for name, v := range map[string]float64{
		`monban_level_filter_probes_total{level="0"}`:          float64(l0.FilterProbes),
		`monban_level_filter_negatives_total{level="0"}`:       float64(l0.FilterNegatives),
		`monban_level_filter_false_positives_total{level="0"}`: float64(l0.FilterFalsePositives),
		`monban_level_blocks_read_total{level="0"}`:            float64(l0.BlocksRead),
		`monban_level_cache_hits_total{level="0"}`:             float64(l0.CacheHits),
		`monban_memtable_filter_negatives_total`:               float64(s.MemtableFilterNegatives),
		`monban_wal_bytes_saved_total`:                         float64(s.WALBytesSaved),
		`monban_prefix_probes_total`:                           float64(s.PrefixProbes),
		`monban_prefix_skips_total`:                            float64(s.PrefixSkips),
	} {
		if got[name] != v {
			t.Errorf("%s = %v, Stats says %v", name, got[name], v)
		}
	}
	// Counters that background work may still move: at least what Stats
	// said a moment ago.
	for name, v := range map[string]float64{
		`monban_flushes_total`:       float64(s.Flushes),
		`monban_flushed_bytes_total`: float64(s.FlushedBytes),
		`monban_wal_bytes_total`:     float64(s.WALBytes),
		`monban_write_amplification`: 1,
	} {
		if got[name] < v {
			t.Errorf("%s = %v, want at least %v", name, got[name], v)
		}
	}
	files := 0.0
	for i := range lsm.NumLevels {
		files += got[fmt.Sprintf(`monban_level_files{level="%d"}`, i)]
	}
	if files == 0 {
		t.Error("monban_level_files sums to 0 after a flush")
	}
}

// TestBackgroundError checks the gauge against a snapshot with a sticky
// error, which no test can provoke on the OS file system.
func TestBackgroundError(t *testing.T) {
	c := NewCollector(openDB(t))
	c.stats = func() lsm.Stats {
		var s lsm.Stats
		s.BackgroundError = errors.New("monban: compaction: disk full")
		s.Compactions.Size = 3
		s.CompactionDrops[1] = 7
		return s
	}
	want := `
# HELP monban_background_error 1 once a failed flush, compaction or WAL write made the DB read-only (until it is reopened), else 0.
# TYPE monban_background_error gauge
monban_background_error 1
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "monban_background_error"); err != nil {
		t.Error(err)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	got := gather(t, reg)
	if v := got[`monban_compactions_total{kind="size"}`]; v != 3 {
		t.Errorf(`compactions_total{kind="size"} = %v, want 3`, v)
	}
	if v := got[`monban_compaction_dropped_entries_total{reason="bottom"}`]; v != 7 {
		t.Errorf(`compaction_dropped_entries_total{reason="bottom"} = %v, want 7`, v)
	}
}

// TestTreeFilterMetrics checks each tree-wide filter metric against its
// Stats field, in a snapshot where each has its own value.
func TestTreeFilterMetrics(t *testing.T) {
	c := NewCollector(openDB(t))
	c.stats = func() lsm.Stats {
		var s lsm.Stats
		s.TreeFilterProbes, s.TreeFilterNegatives, s.TreeFilterLines = 11, 7, 13
		s.TreeFilterBytes, s.TreeFilterEntries = 82632, 5
		return s
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	got := gather(t, reg)
	for name, want := range map[string]float64{
		"monban_tree_filter_probes_total":    11,
		"monban_tree_filter_negatives_total": 7,
		"monban_tree_filter_lines_total":     13,
		"monban_tree_filter_bytes":           82632,
		"monban_tree_filter_entries":         5,
	} {
		if got[name] != want {
			t.Errorf("%s = %v, want %v", name, got[name], want)
		}
	}
}

// gather returns every sample as name{labels} → value.
func gather(t *testing.T, g prometheus.Gatherer) map[string]float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			name := mf.GetName()
			if lp := m.GetLabel(); len(lp) > 0 {
				name += fmt.Sprintf(`{%s="%s"}`, lp[0].GetName(), lp[0].GetValue())
			}
			v := m.GetGauge().GetValue()
			if m.Counter != nil {
				v = m.GetCounter().GetValue()
			}
			out[name] = v
		}
	}
	return out
}
