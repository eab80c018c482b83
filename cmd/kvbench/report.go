package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
)

// reporter prints results as they come, in text (db_bench's shape) or as
// JSON lines, and keeps them for the sweep table, the repeat summary and
// the SVG.
type reporter struct {
	cfg     *config
	head    header
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

// startRepeat marks the start of repeat n in text, when there are several.
func (r *reporter) startRepeat(n int) {
	if r.enc == nil && r.cfg.repeat > 1 {
		fmt.Fprintf(r.w, "repeat %d of %d\n", n, r.cfg.repeat)
	}
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
	fmt.Fprintf(r.w, "%s%s micros/op %s cpu us/op %s ops/sec;", prefix, figure(8, 3, rec.MicrosPerOp),
		figure(7, 3, rec.CPUMicrosPerOp), figure(7, 0, rec.OpsPerSec))
	if rec.MBPerSec != nil && *rec.MBPerSec > 0 {
		fmt.Fprintf(r.w, " %6.1f MB/s", *rec.MBPerSec)
	}
	if workloads[rec.Benchmark].found {
		fmt.Fprintf(r.w, " (%d of %d found)", rec.Found, rec.Ops)
	}
	if rec.Note != "" {
		fmt.Fprintf(r.w, " %s", rec.Note)
	}
	fmt.Fprintln(r.w)
	if bt := rec.Batches; bt != nil {
		fmt.Fprintf(r.w, "%s%d MultiGets of %d keys: %s micros/batch, %s cpu us/batch, %s batches/sec\n", indent,
			bt.Count, bt.Size, fixed(3, bt.MicrosPerBatch), fixed(3, bt.CPUMicrosPerBatch), fixed(0, bt.BatchesPerSec))
	}
	if rd := rec.RangeDeletes; rd != nil {
		fmt.Fprintf(r.w, "%s%d DeleteRange calls of %d keys, %d keys covered; %d commits, %s of WAL; Compact after them (%.2f s): tables %s -> %s, %s reclaimed, %s read by compactions (%d delete-only); directory %s at open, %s before the calls, %s after Compact and Close, %s reopened\n",
			indent, rd.Calls, rd.KeysPerCall, rd.KeysCovered, rd.Commits, size(int64(rd.WALBytes)), rd.CompactSec,
			size(rd.TableBytesBefore), size(rd.TableBytesAfter), size(rd.TableBytesBefore-rd.TableBytesAfter),
			size(int64(rd.CompactionBytesRead)), rd.DeleteOnly,
			size(rd.DirBytesAtOpen), size(rd.DirBytesBefore), size(rd.DirBytesAfter), size(rd.DirBytesReopened))
	}
	if r.cfg.histogram && rec.LatencyUs != nil {
		unit := "latency us:"
		if rec.Batches != nil {
			unit = "latency us per batch:"
		}
		var b strings.Builder
		for _, pc := range percentiles {
			fmt.Fprintf(&b, " %s %s", pc.name, latencyFigure(rec.LatencyUs[snake(pc.name)]))
		}
		fmt.Fprintf(r.w, "%s%s%s max %s\n", indent, unit, b.String(), latencyFigure(rec.LatencyUs["max"]))
	}
}

// latencyFigure prints microseconds to about the three significant digits
// the histogram keeps: 0.4, 24.8, 109, 7590.
func latencyFigure(us float64) string {
	if us >= 100 {
		return fmt.Sprintf("%.0f", us)
	}
	return fmt.Sprintf("%.1f", us)
}

func (r *reporter) detail(label string, rec *record) {
	if d := rec.Deletes; d != nil {
		// The tree-wide filter counts its probes by all callers: the
		// flushes' and compactions' proofs are among them.
		kind, tree := "", ""
		if rec.Reads.treeWide() {
			kind = "table "
			tree = fmt.Sprintf(", and %s tree-wide filter probes/op for the proofs of deletes, flushes and compactions",
				fixed(2, perOp(rec.Reads.TreeFilterProbes, rec.Ops)))
		}
		fmt.Fprintf(r.w, "%s%d of %d deletes elided; WAL %s not written, %s written; %s %sfilter probes/op for proofs%s\n",
			label, d.Elided, rec.Ops, size(int64(d.WALBytesSaved)), size(int64(d.WALBytes)), fixed(2, perOp(d.ProofProbes, rec.Ops)), kind, tree)
		fmt.Fprintf(r.w, "%stombstones dropped by the flush after it: %s; by compactions meanwhile: %s\n", indent,
			drops(d.FlushDrops), drops(d.CompactionDrops))
		return
	}
	rd := rec.Reads
	switch {
	case rd.Prefixes != nil:
		p := rd.Prefixes
		fmt.Fprintf(r.w, "%sdata blocks/op %s from file (iterators' cache hits: not counted); per op %s prefix filter probes (memtables and tables), %s skips (index and data not read); filters in memory %s\n",
			label, fixed(4, rd.BlocksFromFilePerOp), fixed(3, perOp(p.Probes, rec.Ops)), fixed(3, perOp(p.Skips, rec.Ops)), filterMemory(rd))
	case rd.Ranges != nil:
		p := rd.Ranges
		fmt.Fprintf(r.w, "%sdata blocks/op %s from file (iterators' cache hits: not counted); per op %s range filter probes (tables), %s skips (index and data not read); filters in memory %s\n",
			label, fixed(4, rd.BlocksFromFilePerOp), fixed(3, perOp(p.Probes, rec.Ops)), fixed(3, perOp(p.Skips, rec.Ops)), filterMemory(rd))
		if p.Promised != nil {
			fmt.Fprintf(r.w, "%sthe range filters' bound allows %s data blocks/op (probes/op × ℓ/2^(B−2)); read from file %s\n",
				indent, fixed(4, p.Promised), fixed(4, rd.BlocksFromFilePerOp))
		}
	default:
		fmt.Fprintf(r.w, "%sdata blocks/op %s from file + %s from cache; per op %s; %d false positives; %d memtable filter negatives; filters in memory %s\n",
			label, fixed(4, rd.BlocksFromFilePerOp), fixed(4, rd.BlocksFromCachePerOp), probes(rec), rd.FalsePositives,
			rd.MemtableFilterNegatives, filterMemory(rd))
	}
	if rd.RangeTombstones != nil {
		fmt.Fprintf(r.w, "%srange tombstones: %s\n", indent, rd.RangeTombstones)
	}
	if rd.MetaFromFilePerOp != nil {
		fmt.Fprintf(r.w, "%spaged tables (-pinned_meta_limit: their filters are read through the block cache, not held): index partitions and filter pages/op %s from file + %s from cache\n",
			indent, fixed(4, rd.MetaFromFilePerOp), fixed(4, rd.MetaFromCachePerOp))
	}
	if p := rd.ExpectedFalsePositives; p != nil {
		// Measured over promised near 1 is the check that the filters
		// behave as their bits say.
		var kept *float64
		if b := blocksPerOp(rec); b != nil && *p > 0 {
			kept = ptr(*b / *p)
		}
		read := "read"
		if rd.Prefixes != nil {
			read = "read from file"
		}
		// The promise is the table filters': a tree-wide filter in front
		// of them turns away most of the keys they would have let through.
		who := "the filters"
		if rd.treeWide() {
			who = "the table filters alone"
		}
		fmt.Fprintf(r.w, "%s%s promised %s data blocks/op (Stats.ExpectedFalsePositives); %s %s: %s the promise\n",
			indent, who, fixed(4, p), read, fixed(4, blocksPerOp(rec)), times(kept))
		if st := rd.SameTree; st != nil && st.Uniform > 0 {
			fmt.Fprintf(r.w, "%son this tree, its probes and its filter memory (%s bits/key): uniform sizing promises %s data blocks/op, these filters %s (%s), the best sizing %s (%s)\n",
				indent, fixed(2, &st.BitsPerKey), fixed(4, &st.Uniform), fixed(4, &st.Filters), times(ptr(st.Filters/st.Uniform)),
				fixed(4, &st.Best), times(ptr(st.Best/st.Uniform)))
		}
	}
	if !rec.Filters || rd.FilterProbes == 0 {
		return
	}
	// Nine columns in 80: FPR, theory and std (the standard layout's
	// theory) are percentages. A level's tables are those at the start of
	// the workload, +N those written into it during the workload.
	fmt.Fprintf(r.w, "%sper level (tables: at the start, +written during the run):\n", indent)
	tw := tabwriter.NewWriter(r.w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "level\ttables\tbits/key\tprobes\tnegatives\tfalse+\tFPR %\ttheory %\tstd %\t")
	for _, l := range rd.Levels {
		fmt.Fprintf(tw, "L%d\t%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t\n", l.Level, l.tables(), fixed(1, l.BitsPerKey),
			l.Probes, l.Negatives, l.FalsePositives, pct(l.FPR), pct(l.TheoryFPR), pct(l.StandardFPR))
	}
	tw.Flush()
}

// probes is a point-read workload's filter probes and negatives per op:
// the table filters', and with a tree-wide filter (built, or asked) its
// own beside them, and both kinds' probes summed first.
func probes(rec *record) string {
	rd := rec.Reads
	per := func(n uint64) string { return fixed(3, perOp(n, rec.Ops)) }
	if !rd.treeWide() {
		return fmt.Sprintf("%s table filter probes, %s negatives (reads avoided), %s filter cache lines read",
			per(rd.FilterProbes), per(rd.FilterNegatives), fixed(3, rd.FilterLinesPerOp))
	}
	return fmt.Sprintf("%s filter probes (%s tree-wide + %s table), %s tree-wide negatives (no level named), %s table negatives (reads avoided), %s filter cache lines read",
		fixed(3, rd.FilterProbesPerOp), per(rd.TreeFilterProbes), per(rd.FilterProbes), per(rd.TreeFilterNegatives), per(rd.FilterNegatives), fixed(3, rd.FilterLinesPerOp))
}

// filterMemory is the filter memory: the tables' Bloom filters', and
// beside them the range filters' and the tree-wide filter's when there
// are any.
func filterMemory(rd *reads) string {
	m := size(rd.FilterBytes)
	if rd.RangeFilterBytes > 0 {
		m += " + range filters " + size(rd.RangeFilterBytes)
	}
	if rd.TreeFilterBytes > 0 {
		m += " + tree-wide " + size(rd.TreeFilterBytes) + " (" + fixed(2, rd.TreeFilterBitsPerEntry) + " bits/entry)"
	}
	return m
}

// tables is "5", or "5+2" when 2 were written into the level during the
// workload.
func (l levelRead) tables() string {
	if l.TablesWritten == 0 {
		return fmt.Sprint(l.Tables)
	}
	return fmt.Sprintf("%d+%d", l.Tables, l.TablesWritten)
}

// saved is what the filters saved, from the two runs: blocks read, or for
// deletes the WAL records and bytes the absent-key proofs skipped (the
// engine's counts: the WAL bytes the two runs wrote, shown beside them,
// differ by more or less where their commits grouped differently).
func (r *reporter) saved(on, off *record) {
	var speed *float64
	if on.OpsPerSec != nil && off.OpsPerSec != nil && *off.OpsPerSec > 0 {
		speed = ptr(*on.OpsPerSec / *off.OpsPerSec)
	}
	if on.Deletes != nil {
		fmt.Fprintf(r.w, "  saved      : %d WAL records, %s of WAL (%s written vs %s with filters off); %s the ops/sec\n",
			int64(on.Deletes.Elided)-int64(off.Deletes.Elided), size(int64(on.Deletes.WALBytesSaved)-int64(off.Deletes.WALBytesSaved)),
			size(int64(on.Deletes.WALBytes)), size(int64(off.Deletes.WALBytes)), times(speed))
		return
	}
	a, b := blocksPerOp(on), blocksPerOp(off)
	var diff, share *float64
	if a != nil && b != nil {
		diff = ptr(*b - *a)
		if *b > 0 {
			share = ptr(*diff / *b)
		}
	}
	fmt.Fprintf(r.w, "  saved      : %s data-block reads per op (%s: %s vs %s with filters off); %s the ops/sec\n",
		fixed(4, diff), withUnit(pctN(1, share), "%"), fixed(4, a), fixed(4, b), times(speed))
}

// blocksPerOp is the data blocks a read workload touched per op, from file
// and cache; nil without ops.
func blocksPerOp(rec *record) *float64 { return perOp(rec.Reads.blocks, rec.Ops) }

// finish prints the sweep over -filter_sizing and -bloom_bits and the
// repeat summary and writes the SVG.
func (r *reporter) finish() error {
	if len(r.cfg.settings()) > 1 && r.enc == nil {
		r.sweep()
	}
	if r.cfg.repeat > 1 {
		r.summary()
	}
	if r.cfg.svg == "" {
		return nil
	}
	f, err := os.Create(r.cfg.svg)
	if err != nil {
		return err
	}
	if err := writeSVG(f, r.head, r.results); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func (r *reporter) emit(v any) {
	if err := r.enc.Encode(v); err != nil {
		fmt.Fprintf(os.Stderr, "kvbench: %v\n", err)
	}
}
