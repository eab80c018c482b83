package main

import (
	"time"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/lsm"
)

// record is one result line: the db_bench figures, and for read and delete
// workloads what the filters did. -json prints it as is, one per line; the
// text report is drawn from the same fields. A figure that nothing measured
// is nil: n/a in text, null in JSON.
type record struct {
	Type      string `json:"type"` // "result"
	Benchmark string `json:"benchmark"`
	settingLabel
	// Repeat is which of the -repeat runs this is, from 1.
	Repeat  int   `json:"repeat"`
	Filters bool  `json:"filters"` // false: the Options.IgnoreFilters comparison run
	Ops     int64 `json:"ops"`
	Found   int64 `json:"found"`
	Threads int   `json:"threads"`
	// ElapsedSec is wall time; MicrosPerOp the summed per-thread time per
	// op (db_bench's micros/op); CPUMicrosPerOp the workers' thread CPU time
	// per op: micros/op without time descheduled by other jobs or spent in
	// background work.
	ElapsedSec     float64  `json:"elapsed_sec"`
	MicrosPerOp    *float64 `json:"micros_per_op"`
	CPUMicrosPerOp *float64 `json:"cpu_micros_per_op"`
	OpsPerSec      *float64 `json:"ops_per_sec"`
	MBPerSec       *float64 `json:"mb_per_sec"`
	// LatencyUs maps percentile keys (p50 … p99_99, max) to microseconds;
	// absent without ops. For the multiread workloads an op is a batch.
	LatencyUs map[string]float64 `json:"latency_us,omitempty"`
	Batches   *batches           `json:"batches,omitempty"`
	Reads     *reads             `json:"reads,omitempty"`
	Deletes   *deletes           `json:"deletes,omitempty"`
	// RangeDeletes is deleterange's calls and what the Compact after them
	// reclaimed.
	RangeDeletes *rangeDeletes `json:"range_deletes,omitempty"`
	Note         string        `json:"note,omitempty"`
}

// batches describes a multiread workload's MultiGet calls; the record's
// per-op figures are per key.
type batches struct {
	Size              int      `json:"size"` // -batch_size; the last batch may be shorter
	Count             int64    `json:"count"`
	MicrosPerBatch    *float64 `json:"micros_per_batch"`
	CPUMicrosPerBatch *float64 `json:"cpu_micros_per_batch"`
	BatchesPerSec     *float64 `json:"batches_per_sec"`
}

// reads is what Get did during a workload: Stats counters, differenced
// across it, per operation where a rate reads better.
type reads struct {
	FilterProbes    uint64   `json:"filter_probes"`
	FilterNegatives uint64   `json:"filter_negatives"` // data-block reads avoided
	FalsePositives  uint64   `json:"false_positives"`  // data-block reads wasted
	FPR             *float64 `json:"fpr"`              // over every level; nil: nothing to measure
	// TreeFilterProbes counts the lookups the tree-wide filter answered
	// (-filter_scope tree, once built), TreeFilterNegatives those for
	// which it named no level, so that no table filter was asked (Stats'
	// TreeFilterProbes, TreeFilterNegatives; 0 under per_table).
	TreeFilterProbes    uint64 `json:"tree_filter_probes"`
	TreeFilterNegatives uint64 `json:"tree_filter_negatives"`
	// FilterProbesPerOp counts the probes of both kinds per op, the
	// tree-wide filter's and the table filters': about one per run a
	// lookup passes under per_table, one per lookup under tree (and one
	// per table of a level it names).
	FilterProbesPerOp *float64 `json:"filter_probes_per_op"`
	// FilterLinesPerOp is the memory those probes read, in 64-byte
	// lines (cache lines) per op: one per table filter probe (a
	// cache-line Bloom filter reads one line), and the lines each
	// tree-wide probe read (Stats.TreeFilterLines).
	FilterLinesPerOp        *float64 `json:"filter_lines_per_op"`
	MemtableFilterNegatives uint64   `json:"memtable_filter_negatives"`
	BlocksFromFilePerOp     *float64 `json:"blocks_from_file_per_op"`
	BlocksFromCachePerOp    *float64 `json:"blocks_from_cache_per_op"`
	BytesReadPerOp          *float64 `json:"bytes_read_per_op"`
	// MetaFromFilePerOp and MetaFromCachePerOp are the index partitions
	// and filter pages paged tables fetched (-pinned_meta_limit); nil when
	// no table is paged.
	MetaFromFilePerOp  *float64 `json:"meta_from_file_per_op,omitempty"`
	MetaFromCachePerOp *float64 `json:"meta_from_cache_per_op,omitempty"`
	// FilterBytes is the filter memory of the tables at the start of the
	// workload: the sum of their filter blocks, every one in memory
	// (Stats' FilterBytes, which counts the open tables: all of them).
	FilterBytes int64 `json:"filter_bytes"`
	// RangeFilterBytes is the range filters' memory likewise
	// (Stats' RangeFilterBytes, -range_filter_bits), beside FilterBytes.
	RangeFilterBytes int64 `json:"range_filter_bytes"`
	// TreeFilterBytes is the tree-wide filter's memory at the start, off
	// the Go heap, TreeFilterEntries its entries (a key once for each
	// table holding it), and TreeFilterBitsPerEntry 8·bytes/entries: all
	// 0, the last null, under per_table or when it was not built
	// (settle waits for it).
	TreeFilterBytes        int64    `json:"tree_filter_bytes"`
	TreeFilterEntries      uint64   `json:"tree_filter_entries"`
	TreeFilterBitsPerEntry *float64 `json:"tree_filter_bits_per_entry"`
	// ExpectedFalsePositives is the data blocks per op the filters promise
	// a workload of missing keys (Stats.ExpectedFalsePositives at its
	// start), to set beside the blocks it read; nil for other workloads
	// and with filters ignored.
	ExpectedFalsePositives *float64 `json:"expected_false_positives"`
	// SameTree is what uniform and the best sizing of the same filter
	// memory promise the same workload on the same tree; nil where
	// ExpectedFalsePositives is.
	SameTree *sameTree   `json:"same_tree"`
	Levels   []levelRead `json:"levels"`
	// RangeTombstones is where the -range_tombstones were live when the
	// workload started; absent without them.
	RangeTombstones *rangeTombstones `json:"range_tombstones,omitempty"`
	// Prefixes is what the prefix filters did for the iterators of a
	// prefix workload, Ranges what the range filters did for those of a
	// range workload; absent for the others.
	Prefixes *tableSkips `json:"prefixes,omitempty"`
	Ranges   *tableSkips `json:"ranges,omitempty"`

	// blocks is the data blocks touched, from file and from cache.
	blocks uint64
}

// treeWide reports whether the workload had a tree-wide filter to ask:
// built at its start, or asked during it.
func (rd *reads) treeWide() bool { return rd.TreeFilterBytes > 0 || rd.TreeFilterProbes > 0 }

// tableSkips counts, over a workload, the sources whose filter an
// iterator asked and those it left out, their index and data blocks not
// read: for a prefix, memtables and tables (Stats.PrefixProbes,
// PrefixSkips), for a range, tables (RangeProbes, RangeSkips); no probes
// with filters ignored. Promised is, for rangemissing with filters on,
// the data blocks per op the range filters' bound allows: probes per op
// times ℓ/2^(B−2) (filter.Grafite), to set beside the blocks read.
type tableSkips struct {
	Probes   uint64   `json:"probes"`
	Skips    uint64   `json:"skips"`
	Promised *float64 `json:"promised,omitempty"`
}

// levelRead is one level's line of the level table. Tables is the count at
// the start of the workload, TablesWritten those that flushes and
// compactions wrote into the level during it: a level that gained its
// tables mid-run shows 0+2, never 0.
type levelRead struct {
	Level         int   `json:"level"`
	Tables        int   `json:"tables"`
	TablesWritten int   `json:"tables_written"`
	FilterBytes   int64 `json:"filter_bytes"` // at the start
	// RangeFilterBytes is the level's range filters at the start.
	RangeFilterBytes int64    `json:"range_filter_bytes"`
	Probes           uint64   `json:"probes"`
	Negatives        uint64   `json:"negatives"`
	FalsePositives   uint64   `json:"false_positives"`
	FPR              *float64 `json:"fpr"` // nil: no probe to measure it
	// BitsPerKey and TheoryFPR are Stats' FilterBitsPerKey and TheoryFPR
	// of the level: its filters' density over its entries (a fraction
	// under per-level sizing), and the cache-line filter's FPR at each
	// table's bits (the layout the tables use), over L0's tables and
	// deeper levels' entries. StandardFPR is the standard-layout formula
	// at BitsPerKey, for the gap. All three nil when no table of the level
	// was there to describe, at the start or the end.
	BitsPerKey  *float64 `json:"bits_per_key"`
	TheoryFPR   *float64 `json:"theory_fpr"`
	StandardFPR *float64 `json:"standard_fpr"`
	BlocksRead  uint64   `json:"blocks_read"`
	CacheHits   uint64   `json:"cache_hits"`
	BlocksPerOp *float64 `json:"blocks_per_op"` // read and cached, per op
}

// deletes is what Delete did, and what the flush after the workload
// dropped. The drop maps are keyed by dropKeys.
type deletes struct {
	Elided          uint64            `json:"elided"`
	WALBytesSaved   uint64            `json:"wal_bytes_saved"`
	WALBytes        uint64            `json:"wal_bytes_written"`
	ProofProbes     uint64            `json:"proof_probes"` // Stats.DeleteProofProbes
	FlushDrops      map[string]uint64 `json:"flush_drops"`
	CompactionDrops map[string]uint64 `json:"compaction_drops"`
}

// dropReasons name the entries of lsm.Stats.FlushDrops in index order
// (compaction.DropReason, which kvbench does not import: it uses lsm only),
// as the text prints them; JSON keys are their snake forms.
var dropReasons = [...]string{"shadowed", "bottom level", "filter proof"}

// The compiler checks that the names cover every drop reason.
var _ = [len(dropReasons)]struct{}([len(lsm.Stats{}.FlushDrops)]struct{}{})

func newRecord(b *bench, name string, r opsResult) *record {
	rec := &record{Type: "result", Benchmark: name, settingLabel: b.label(), Repeat: b.repeat, Filters: !b.filtersOff,
		Ops: r.ops, Found: r.found, Threads: b.cfg.threads, ElapsedSec: r.elapsed.Seconds()}
	rec.MicrosPerOp, rec.CPUMicrosPerOp = microsPer(r.busy, r.ops), microsPer(r.cpu, r.ops)
	if s := r.elapsed.Seconds(); s > 0 && r.ops > 0 { // a rate of no ops is n/a
		rec.OpsPerSec = ptr(float64(r.ops) / s)
		rec.MBPerSec = ptr(float64(r.bytes) / s / (1 << 20))
	}
	if r.hist.count() > 0 {
		us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
		rec.LatencyUs = map[string]float64{"max": us(r.hist.max())}
		for _, pc := range percentiles {
			rec.LatencyUs[snake(pc.name)] = us(r.hist.percentile(pc.p))
		}
	}
	return rec
}

// microsPer is d in microseconds per op, nil without ops.
func microsPer(d time.Duration, ops int64) *float64 {
	if ops <= 0 {
		return nil
	}
	return ptr(float64(d.Nanoseconds()) / 1e3 / float64(ops))
}

// readsFrom turns the Stats difference d over ops Gets into the reads
// report; written counts the tables written into each level meanwhile, and
// promised asks for the filters' promise (a missing-key workload, filters
// on). The filter figures are Stats' at the start of the window w, so a
// -use_existing_db run is judged by its own filters; a level Stats found
// no table of then (one that gained its tables mid-run) is judged by its
// tables at the end, whose figures d carries (statsDiff keeps the end's
// shape).
func readsFrom(d lsm.Stats, ops int64, w window, written [lsm.NumLevels]int, promised bool) *reads {
	r := &reads{FilterProbes: d.Total.FilterProbes, FilterNegatives: d.Total.FilterNegatives,
		FalsePositives: d.Total.FilterFalsePositives, FPR: levelFPR(d.Total),
		TreeFilterProbes: d.TreeFilterProbes, TreeFilterNegatives: d.TreeFilterNegatives,
		FilterProbesPerOp: perOp(d.TreeFilterProbes+d.Total.FilterProbes, ops), FilterLinesPerOp: perOp(d.TreeFilterLines+d.Total.FilterProbes, ops),
		MemtableFilterNegatives: d.MemtableFilterNegatives,
		BlocksFromFilePerOp:     perOp(d.Total.BlocksRead, ops), BlocksFromCachePerOp: perOp(d.Total.CacheHits, ops),
		BytesReadPerOp: perOp(d.Total.BytesRead, ops), FilterBytes: int64(w.stats.Total.FilterBytes),
		RangeFilterBytes: int64(w.stats.Total.RangeFilterBytes), TreeFilterBytes: int64(w.stats.TreeFilterBytes),
		TreeFilterEntries: w.stats.TreeFilterEntries, TreeFilterBitsPerEntry: treeBitsPerEntry(w.stats),
		blocks: d.Total.BlocksRead + d.Total.CacheHits}
	if w.stats.MetaPagedTables+w.stats.MetaPagedFilterTables > 0 || d.MetaPagedTables+d.MetaPagedFilterTables > 0 {
		r.MetaFromFilePerOp, r.MetaFromCachePerOp = perOp(d.MetaBlocksRead, ops), perOp(d.MetaCacheHits, ops)
	}
	if promised {
		r.ExpectedFalsePositives = ptr(w.stats.ExpectedFalsePositives)
		r.SameTree = sameTreeFrom(w.stats, d, ops)
	}
	for level, l := range d.Levels {
		start := w.stats.Levels[level]
		if start.Files == 0 && written[level] == 0 && l.FilterProbes == 0 && l.BlocksRead == 0 && l.CacheHits == 0 {
			continue
		}
		lr := levelRead{Level: level, Tables: start.Files, TablesWritten: written[level], FilterBytes: int64(start.FilterBytes),
			RangeFilterBytes: int64(start.RangeFilterBytes), Probes: l.FilterProbes, Negatives: l.FilterNegatives, FalsePositives: l.FilterFalsePositives, FPR: levelFPR(l),
			BlocksRead: l.BlocksRead, CacheHits: l.CacheHits, BlocksPerOp: perOp(l.BlocksRead+l.CacheHits, ops)}
		// A level Stats counted a table of has a theory above 0: 1 for a
		// table without a filter.
		for _, f := range []lsm.LevelStats{start, l} {
			if f.TheoryFPR > 0 {
				lr.BitsPerKey, lr.TheoryFPR = ptr(f.FilterBitsPerKey), ptr(f.TheoryFPR)
				lr.StandardFPR = ptr(standardFPR(f.FilterBitsPerKey))
				break
			}
		}
		r.Levels = append(r.Levels, lr)
	}
	return r
}

// treeBitsPerEntry is the tree-wide filter's memory per entry in s, in
// bits; nil without entries.
func treeBitsPerEntry(s lsm.Stats) *float64 {
	if s.TreeFilterEntries == 0 {
		return nil
	}
	return ptr(8 * float64(s.TreeFilterBytes) / float64(s.TreeFilterEntries))
}

// standardFPR is the standard-layout Bloom filter's FPR at b bits per key
// with its best hash count; 1 without a filter.
func standardFPR(b float64) float64 {
	if b <= 0 {
		return 1
	}
	return filter.StandardFPR(b, filter.StandardHashes(b))
}

func deletesFrom(d lsm.Stats) *deletes {
	return &deletes{Elided: d.DeletesElided, WALBytesSaved: d.WALBytesSaved, WALBytes: d.WALBytes,
		ProofProbes: d.DeleteProofProbes, FlushDrops: dropMap(d.FlushDrops), CompactionDrops: dropMap(d.CompactionDrops)}
}

// dropMap keys drop counts by reason, in JSON's snake form.
func dropMap(d [len(dropReasons)]uint64) map[string]uint64 {
	m := map[string]uint64{}
	for i, name := range dropReasons {
		m[snake(name)] = d[i]
	}
	return m
}
