package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/monbandb/monban/lsm"
)

// reporter prints results as they come, in text (db_bench's shape) or as
// JSON lines, and keeps them for the sweep table and the SVG.
type reporter struct {
	cfg     *config
	w       io.Writer
	enc     *json.Encoder
	results []*record
}

func newReporter(c *config, w io.Writer) *reporter {
	r := &reporter{cfg: c, w: w}
	if c.json {
		r.enc = json.NewEncoder(w)
	} else {
		r.w = &wrapWriter{w: w}
	}
	return r
}

type header struct {
	Type       string   `json:"type"` // "header"
	Date       string   `json:"date"`
	GoVersion  string   `json:"go"`
	GOOS       string   `json:"goos"`
	GOARCH     string   `json:"goarch"`
	CPUs       int      `json:"cpus"`
	GOMAXPROCS int      `json:"gomaxprocs"`
	Benchmarks []string `json:"benchmarks"`
	Num        int      `json:"num"`
	Reads      int      `json:"reads"`
	Deletes    int      `json:"deletes"`
	KeySize    int      `json:"key_size"`
	ValueSize  int      `json:"value_size"`
	Threads    int      `json:"threads"`
	Seed       uint64   `json:"seed"`
	BloomBits  []int    `json:"bloom_bits"`
	CacheSize  int64    `json:"cache_size"`
	Memtable   int64    `json:"write_buffer_size"`
	TargetFile int64    `json:"target_file_size_base"`
	LevelBase  int64    `json:"max_bytes_for_level_base"`
	Sync       bool     `json:"sync"`
	Compare    bool     `json:"compare"`
	DB         string   `json:"db"`
}

func (r *reporter) header(dir string) {
	c := r.cfg
	h := header{Type: "header", Date: time.Now().Format(time.DateTime), GoVersion: runtime.Version(),
		GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		Benchmarks: c.benchmarks, Num: c.num, Reads: c.reads, Deletes: c.deletes, KeySize: c.keySize,
		ValueSize: c.valueSize, Threads: c.threads, Seed: c.seed, BloomBits: c.bloomBits, CacheSize: c.cacheSize,
		Memtable: c.writeBufferSize, TargetFile: c.targetFileSize, LevelBase: c.levelBase, Sync: c.sync,
		Compare: c.compare, DB: dir}
	if r.enc != nil {
		r.emit(h)
		return
	}
	p := func(k, format string, args ...any) {
		fmt.Fprintf(r.w, "%-12s %s\n", k+":", fmt.Sprintf(format, args...))
	}
	p("kvbench", "monban LSM: what the filters save on reads and deletes")
	if c.defaulted {
		p("Default run", "embedded workload, about a minute on a 2-core machine (kvbench -h for the flags)")
	}
	p("Date", "%s", h.Date)
	p("Go", "%s %s/%s, %d CPUs (GOMAXPROCS %d)", h.GoVersion, h.GOOS, h.GOARCH, h.CPUs, h.GOMAXPROCS)
	p("Keys", "%d bytes each (zero-padded decimal; written keys even-numbered, missing keys odd, same range)", c.keySize)
	p("Values", "%d bytes each (incompressible)", c.valueSize)
	p("Entries", "%d", c.num)
	p("Ops", "%d per read workload, %d per delete workload, on %d thread(s); seed %d", c.reads, c.deletes, c.threads, c.seed)
	bits := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(c.bloomBits)), ","), "[]")
	if len(c.bloomBits) > 1 {
		p("Bloom bits", "%s per key: filters are written when tables are built, so the DB is rebuilt for each value", bits)
	} else {
		p("Bloom bits", "%s per key (0: no filter)", bits)
	}
	p("Theory", "FPR of the cache-line Bloom filter the tables use (filter.CacheLineFPR), standard layout beside it")
	p("Options", "block cache %s, memtable %s, table %s, L1 %s (x10 per level), sync %v, %s (values compress to %.2f)",
		cacheSize(c.cacheSize), size(c.writeBufferSize), size(c.targetFileSize), size(c.levelBase), c.sync, c.compression, c.compressionRatio)
	where := dir
	if c.db == "" {
		where += " (temporary, removed afterwards)"
	}
	p("DB", "%s", where)
	if c.compare {
		p("Comparison", "each read/delete workload also runs with Options.IgnoreFilters on a copy of the same DB")
	}
	fmt.Fprintln(r.w, strings.Repeat("-", 72))
}

// result prints one workload's line, with filters on, and the comparison
// run's (off, may be nil).
func (r *reporter) result(on, off *record) {
	r.results = append(r.results, on)
	if off != nil {
		r.results = append(r.results, off)
	}
	if r.enc != nil {
		r.emit(on)
		if off != nil {
			r.emit(off)
		}
		return
	}
	r.line(fmt.Sprintf("%-12s : ", on.Benchmark), on)
	if on.Reads == nil && on.Deletes == nil {
		return
	}
	r.detail("  filters on : ", on)
	if off != nil {
		r.line("  filters off: ", off)
		r.detail(indent, off)
		r.saved(on, off)
	}
}

// indent lines up continuation lines under a result line's figures.
var indent = strings.Repeat(" ", 15)

// line is db_bench's result line after prefix ("readrandom   : ").
func (r *reporter) line(prefix string, rec *record) {
	fmt.Fprintf(r.w, "%s%8.3f micros/op %7.3f cpu us/op %7.0f ops/sec;", prefix, rec.MicrosPerOp, rec.CPUMicrosPerOp, rec.OpsPerSec)
	if rec.MBPerSec > 0 {
		fmt.Fprintf(r.w, " %6.1f MB/s", rec.MBPerSec)
	}
	switch rec.Benchmark {
	case "readrandom", "readmissing", "readwhilewriting", "seekrandom":
		fmt.Fprintf(r.w, " (%d of %d found)", rec.Found, rec.Ops)
	}
	if rec.Note != "" {
		fmt.Fprintf(r.w, " %s", rec.Note)
	}
	fmt.Fprintln(r.w)
	if r.cfg.histogram && rec.LatencyUs != nil {
		l := rec.LatencyUs
		fmt.Fprintf(r.w, "%slatency us: p50 %.1f  p95 %.1f  p99 %.1f  p99.9 %.1f  max %.1f\n", indent, l.P50, l.P95, l.P99, l.P999, l.Max)
	}
}

func (r *reporter) detail(label string, rec *record) {
	if d := rec.Deletes; d != nil {
		fmt.Fprintf(r.w, "%s%d of %d deletes elided; WAL %s not written, %s written; %s filter probes/op for proofs\n",
			label, d.Elided, rec.Ops, size(int64(d.WALBytesSaved)), size(int64(d.WALBytes)), fixed(2, perOpOK(d.ProofProbes, rec.Ops)))
		fmt.Fprintf(r.w, "%stombstones dropped by the flush after it: %s; by compactions meanwhile: %s\n", indent,
			drops(d.FlushDrops), drops(d.CompactionDrops))
		return
	}
	rd := rec.Reads
	fmt.Fprintf(r.w, "%sdata blocks/op %.4f from file + %.4f from cache; per op %s table filter probes, %s negatives (reads avoided); %d false positives; %d memtable filter negatives\n",
		label, rd.BlocksFromFilePerOp, rd.BlocksFromCachePerOp, fixed(3, perOpOK(rd.FilterProbes, rec.Ops)),
		fixed(3, perOpOK(rd.FilterNegatives, rec.Ops)), rd.FalsePositives, rd.MemtableFilterNegatives)
	if !rec.Filters || rd.FilterProbes == 0 {
		return
	}
	// Nine columns in 80: FPR, theory and std (the standard layout's
	// theory) are percentages.
	tw := tabwriter.NewWriter(r.w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "level\ttables\tbits/key\tprobes\tnegatives\tfalse+\tFPR %\ttheory %\tstd %\t")
	for _, l := range rd.Levels {
		fmt.Fprintf(tw, "L%d\t%d\t%.1f\t%d\t%d\t%d\t%s\t%.4f\t%.4f\t\n", l.Level, l.Tables, l.BitsPerKey,
			l.Probes, l.Negatives, l.FalsePositives, pct(l.FPR), 100*l.TheoryFPR, 100*l.StandardFPR)
	}
	tw.Flush()
}

// saved is the measured difference between the two runs.
func (r *reporter) saved(on, off *record) {
	var speed *float64
	if off.OpsPerSec > 0 {
		speed = ptr(on.OpsPerSec / off.OpsPerSec)
	}
	if on.Deletes != nil {
		fmt.Fprintf(r.w, "  saved      : %d WAL records, %s of WAL (%s written vs %s with filters off); %s the ops/sec\n",
			int64(on.Deletes.Elided)-int64(off.Deletes.Elided), size(int64(off.Deletes.WALBytes)-int64(on.Deletes.WALBytes)),
			size(int64(on.Deletes.WALBytes)), size(int64(off.Deletes.WALBytes)), times(speed))
		return
	}
	a, b := blocksPerOp(on), blocksPerOp(off)
	var share *float64
	if b > 0 {
		share = ptr((b - a) / b)
	}
	fmt.Fprintf(r.w, "  saved      : %.4f data-block reads per op (%s: %.4f vs %.4f with filters off); %s the ops/sec\n",
		b-a, withUnit(pctN(1, share), "%"), a, b, times(speed))
}

func blocksPerOp(rec *record) float64 {
	return rec.Reads.BlocksFromFilePerOp + rec.Reads.BlocksFromCachePerOp
}

func (r *reporter) stats(bits int, s lsm.Stats) {
	if r.enc != nil {
		r.emit(struct {
			Type      string    `json:"type"`
			BloomBits int       `json:"bloom_bits"`
			Stats     lsm.Stats `json:"stats"`
			WriteAmp  float64   `json:"write_amplification"`
		}{"stats", bits, s, s.WriteAmplification()})
		return
	}
	fmt.Fprintf(r.w, "stats (bloom_bits %d; counters since the DB was last opened: each compared workload reopens it):\n", bits)
	// One table per concern: side by side they would need 103 columns.
	tw := tabwriter.NewWriter(r.w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  level\ttables\tsize\tfilter probes\tnegatives\tfalse+\tFPR %\t")
	for i, l := range s.Levels {
		if l.Files == 0 && l.FilterProbes == 0 && l.BlocksRead == 0 {
			continue
		}
		fmt.Fprintf(tw, "  L%d\t%d\t%s\t%d\t%d\t%d\t%s\t\n", i, l.Files, size(int64(l.Bytes)),
			l.FilterProbes, l.FilterNegatives, l.FilterFalsePositives, pct(levelFPR(l)))
	}
	fmt.Fprintln(tw, "  level\tcache hits\tblocks read\tbytes read\t")
	for i, l := range s.Levels {
		if l.Files == 0 && l.FilterProbes == 0 && l.BlocksRead == 0 {
			continue
		}
		fmt.Fprintf(tw, "  L%d\t%d\t%d\t%s\t\n", i, l.CacheHits, l.BlocksRead, size(int64(l.BytesRead)))
	}
	tw.Flush()
	fmt.Fprintf(r.w, "  memtable filter negatives %d, immutable combined-filter negatives %d, memtable false positives %d\n",
		s.MemtableFilterNegatives, s.ImmutableFilterNegatives, s.MemtableFalsePositives)
	fmt.Fprintf(r.w, "  deletes elided %d (WAL %s saved), WAL written %s, flushes %d, compactions %d move / %d L0 / %d size, write amplification %.2f\n",
		s.DeletesElided, size(int64(s.WALBytesSaved)), size(int64(s.WALBytes)), s.Flushes,
		s.Compactions.Move, s.Compactions.L0, s.Compactions.Size, s.WriteAmplification())
	fmt.Fprintf(r.w, "  dropped at flush: %s; at compaction: %s; stalls %d (%v)\n",
		drops(dropMap(s.FlushDrops)), drops(dropMap(s.CompactionDrops)), s.Stalls, s.StallTime.Round(time.Millisecond))
}

// finish prints the -bloom_bits sweep and writes the SVG.
func (r *reporter) finish() error {
	if len(r.cfg.bloomBits) > 1 && r.enc == nil {
		r.sweep()
	}
	if r.cfg.svg == "" {
		return nil
	}
	f, err := os.Create(r.cfg.svg)
	if err != nil {
		return err
	}
	if err := writeSVG(f, r.results, r.cfg.bloomBits); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// sweep prints one row per read workload and bits-per-key value.
func (r *reporter) sweep() {
	fmt.Fprintln(r.w, strings.Repeat("-", 72))
	fmt.Fprintln(r.w, "Bloom sweep: a row per workload and bits per key (DB rebuilt per value,")
	fmt.Fprintln(r.w, "the same operations each time)")
	// Short headers and padding 1 keep nine columns in 80: blocks, off (the
	// same with filters off), saved and probes are per op.
	fmt.Fprintln(r.w, "blocks, off, saved: data-block reads per op; probes: table filter probes per op")
	tw := tabwriter.NewWriter(r.w, 0, 0, 1, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "benchmark\tbits\tus/op\tblocks\toff\tsaved\tprobes\tFPR%\ttheory%\t")
	off := map[string]*record{}
	for _, rec := range r.results {
		if !rec.Filters {
			off[fmt.Sprint(rec.Benchmark, rec.BloomBits)] = rec
		}
	}
	for _, rec := range r.results {
		if !rec.Filters || rec.Reads == nil || rec.Deletes != nil {
			continue
		}
		offBlocks, saved := "-", "-"
		if o := off[fmt.Sprint(rec.Benchmark, rec.BloomBits)]; o != nil {
			offBlocks = fmt.Sprintf("%.4f", blocksPerOp(o))
			saved = fmt.Sprintf("%.4f", blocksPerOp(o)-blocksPerOp(rec))
		}
		fpr := ratio(rec.Reads.FalsePositives, rec.Reads.FilterNegatives+rec.Reads.FalsePositives)
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.4f\t%s\t%s\t%s\t%s\t%.4f\t\n", rec.Benchmark, rec.BloomBits, rec.MicrosPerOp,
			blocksPerOp(rec), offBlocks, saved, fixed(3, perOpOK(rec.Reads.FilterProbes, rec.Ops)), pct(fpr), 100*theoryFPR(rec.BloomBits))
	}
	tw.Flush()
}

func (r *reporter) emit(v any) {
	if err := r.enc.Encode(v); err != nil {
		fmt.Fprintf(os.Stderr, "kvbench: %v\n", err)
	}
}

// Undefined figures (an FPR no probe measured, a ratio over zero) are nil:
// n/a in text, null in JSON, never 0.

func ptr(x float64) *float64 { return &x }

// ratio is num/den, nil if den is 0.
func ratio(num, den uint64) *float64 {
	if den == 0 {
		return nil
	}
	return ptr(float64(num) / float64(den))
}

// perOpOK is n per operation, nil without operations.
func perOpOK(n uint64, ops int64) *float64 {
	if ops <= 0 {
		return nil
	}
	return ptr(float64(n) / float64(ops))
}

// levelFPR is lsm.LevelStats.FPR, nil when no probe could measure it
// (LevelStats.FPR returns 0 then).
func levelFPR(l lsm.LevelStats) *float64 {
	return ratio(l.FilterFalsePositives, l.FilterNegatives+l.FilterFalsePositives)
}

// fixed prints x with prec decimals, or n/a.
func fixed(prec int, x *float64) string {
	if x == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*x, 'f', prec, 64)
}

// pct prints the fraction x as a percentage with 4 decimals, or n/a.
func pct(x *float64) string { return pctN(4, x) }

// times prints a ratio as "2.27x", or n/a.
func times(x *float64) string { return withUnit(fixed(2, x), "x") }

func withUnit(s, unit string) string {
	if s == "n/a" {
		return s
	}
	return s + unit
}

func pctN(prec int, x *float64) string {
	if x == nil {
		return "n/a"
	}
	return fixed(prec, ptr(100**x))
}

func dropMap(d [len(dropReasons)]uint64) map[string]uint64 {
	m := map[string]uint64{}
	for i, name := range dropReasons {
		m[name] = d[i]
	}
	return m
}

func drops(m map[string]uint64) string {
	var parts []string
	for _, name := range dropReasons {
		parts = append(parts, fmt.Sprintf("%s %d", name, m[name]))
	}
	return strings.Join(parts, ", ")
}

// size prints a byte count the way the options are usually written.
func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func cacheSize(n int64) string {
	if n <= 0 {
		return "off"
	}
	return size(n)
}

// perOp is n per operation, 0 without operations: for the SVG's points,
// which skip no data.
func perOp(n uint64, ops int64) float64 {
	if ops == 0 {
		return 0
	}
	return float64(n) / float64(ops)
}
