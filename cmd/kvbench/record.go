package main

import (
	"time"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/lsm"
)

// record is one result line: the db_bench figures, and for read and delete
// workloads what the filters did. -json prints it as is, one per line; the
// text report is drawn from the same fields.
type record struct {
	Type        string  `json:"type"` // "result"
	Benchmark   string  `json:"benchmark"`
	BloomBits   int     `json:"bloom_bits"`
	Filters     bool    `json:"filters"` // false: the Options.IgnoreFilters comparison run
	Ops         int64   `json:"ops"`
	Found       int64   `json:"found"`
	Threads     int     `json:"threads"`
	ElapsedSec  float64 `json:"elapsed_sec"`
	MicrosPerOp float64 `json:"micros_per_op"`
	// CPUMicrosPerOp is the workers' thread CPU time per op: micros/op
	// without time descheduled by other jobs or spent in background work.
	CPUMicrosPerOp float64  `json:"cpu_micros_per_op"`
	OpsPerSec      float64  `json:"ops_per_sec"`
	MBPerSec       float64  `json:"mb_per_sec"`
	LatencyUs      *latency `json:"latency_us,omitempty"`
	Reads          *reads   `json:"reads,omitempty"`
	Deletes        *deletes `json:"deletes,omitempty"`
	Note           string   `json:"note,omitempty"`

	hist histogram
}

type latency struct {
	P50, P95, P99, P999, Max float64
}

// reads is what Get did during a workload: Stats counters, differenced
// across it, per operation where a rate reads better.
type reads struct {
	FilterProbes            uint64      `json:"filter_probes"`
	FilterNegatives         uint64      `json:"filter_negatives"` // data-block reads avoided
	FalsePositives          uint64      `json:"false_positives"`  // data-block reads wasted
	MemtableFilterNegatives uint64      `json:"memtable_filter_negatives"`
	BlocksFromFilePerOp     float64     `json:"blocks_from_file_per_op"`
	BlocksFromCachePerOp    float64     `json:"blocks_from_cache_per_op"`
	BytesReadPerOp          float64     `json:"bytes_read_per_op"`
	Levels                  []levelRead `json:"levels"`
}

type levelRead struct {
	Level          int      `json:"level"`
	Tables         int      `json:"tables"`
	BitsPerKey     float64  `json:"bits_per_key"` // mean over the level's tables
	Probes         uint64   `json:"probes"`
	Negatives      uint64   `json:"negatives"`
	FalsePositives uint64   `json:"false_positives"`
	FPR            *float64 `json:"fpr"` // nil: no probe to measure it (JSON null)
	// TheoryFPR is filter.CacheLineFPR at each table's bits per key (the
	// layout the tables use), averaged over the level's tables;
	// StandardFPR the standard-layout formula at the same bits, for the gap.
	TheoryFPR   float64 `json:"theory_fpr"`
	StandardFPR float64 `json:"standard_fpr"`
	BlocksRead  uint64  `json:"blocks_read"`
	CacheHits   uint64  `json:"cache_hits"`
}

// deletes is what Delete did, and what the flush after the workload dropped.
type deletes struct {
	Elided          uint64            `json:"elided"`
	WALBytesSaved   uint64            `json:"wal_bytes_saved"`
	WALBytes        uint64            `json:"wal_bytes_written"`
	ProofProbes     uint64            `json:"proof_probes"` // Stats.DeleteProofProbes
	FlushDrops      map[string]uint64 `json:"flush_drops"`
	CompactionDrops map[string]uint64 `json:"compaction_drops"`
}

// dropReasons name the entries of lsm.Stats.FlushDrops in index order
// (compaction.DropReason, which kvbench does not import: it uses lsm only).
var dropReasons = [...]string{"shadowed", "bottom level", "filter proof"}

// The compiler checks that the names cover every drop reason.
var _ = [len(dropReasons)]struct{}([len(lsm.Stats{}.FlushDrops)]struct{}{})

func newRecord(b *bench, name string, r opsResult) *record {
	rec := &record{Type: "result", Benchmark: name, BloomBits: b.bits, Filters: !b.filtersOff,
		Ops: r.ops, Found: r.found, Threads: b.cfg.threads, ElapsedSec: r.elapsed.Seconds(), hist: r.hist}
	if r.ops > 0 {
		rec.MicrosPerOp = float64(r.busy.Nanoseconds()) / 1e3 / float64(r.ops)
		rec.CPUMicrosPerOp = float64(r.cpu.Nanoseconds()) / 1e3 / float64(r.ops)
	}
	if s := r.elapsed.Seconds(); s > 0 {
		rec.OpsPerSec = float64(r.ops) / s
		rec.MBPerSec = float64(r.bytes) / s / (1 << 20)
	}
	us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
	rec.LatencyUs = &latency{P50: us(r.hist.percentile(50)), P95: us(r.hist.percentile(95)),
		P99: us(r.hist.percentile(99)), P999: us(r.hist.percentile(99.9)), Max: us(r.hist.max)}
	return rec
}

// readsFrom turns the Stats difference d over ops Gets into the reads
// report. Theory comes from the bits each table was really written with
// (DB.Tables), so a -use_existing_db run is judged by its own filters.
func readsFrom(d lsm.Stats, ops int64, tables []lsm.TableInfo, bits int) *reads {
	per := func(n uint64) float64 {
		if ops == 0 {
			return 0
		}
		return float64(n) / float64(ops)
	}
	r := &reads{FilterProbes: d.Total.FilterProbes, FilterNegatives: d.Total.FilterNegatives,
		FalsePositives: d.Total.FilterFalsePositives, MemtableFilterNegatives: d.MemtableFilterNegatives,
		BlocksFromFilePerOp: per(d.Total.BlocksRead), BlocksFromCachePerOp: per(d.Total.CacheHits),
		BytesReadPerOp: per(d.Total.BytesRead)}
	for level, l := range d.Levels {
		if l.FilterProbes == 0 && l.BlocksRead == 0 && l.CacheHits == 0 {
			continue
		}
		lr := levelRead{Level: level, Tables: l.Files, Probes: l.FilterProbes, Negatives: l.FilterNegatives,
			FalsePositives: l.FilterFalsePositives, FPR: levelFPR(l), BlocksRead: l.BlocksRead, CacheHits: l.CacheHits}
		lr.BitsPerKey, lr.TheoryFPR, lr.StandardFPR = levelTheory(tables, level)
		if lr.BitsPerKey == 0 && lr.TheoryFPR == 0 {
			// The level's tables are gone (compacted away since): judge it
			// by the bits the run writes.
			lr.BitsPerKey, lr.TheoryFPR, lr.StandardFPR = float64(bits), theoryFPR(bits), standardFPR(bits)
		}
		r.Levels = append(r.Levels, lr)
	}
	return r
}

// levelTheory averages, over the level's tables, their bits per key and the
// cache-line and standard-layout FPR at those bits (1 for a table without
// a filter: every lookup reads a block).
func levelTheory(tables []lsm.TableInfo, level int) (bits, cacheLine, standard float64) {
	n := 0
	for _, t := range tables {
		if t.Level != level || t.FilterBitsPerKey < 0 {
			continue
		}
		n++
		bits += float64(t.FilterBitsPerKey)
		cacheLine += theoryFPR(t.FilterBitsPerKey)
		standard += standardFPR(t.FilterBitsPerKey)
	}
	if n == 0 {
		return 0, 0, 0 // no tables: the caller decides
	}
	return bits / float64(n), cacheLine / float64(n), standard / float64(n)
}

// theoryFPR is the cache-line Bloom filter's expected FPR at b bits per key
// with the probe count the filter really uses; 1 without a filter.
func theoryFPR(b int) float64 {
	if b <= 0 {
		return 1
	}
	return filter.CacheLineFPR(float64(b), filter.CacheLineProbes(b))
}

func standardFPR(b int) float64 {
	if b <= 0 {
		return 1
	}
	return filter.StandardFPR(float64(b), filter.StandardHashes(float64(b)))
}

func deletesFrom(d lsm.Stats) *deletes {
	del := &deletes{Elided: d.DeletesElided, WALBytesSaved: d.WALBytesSaved, WALBytes: d.WALBytes,
		ProofProbes: d.DeleteProofProbes, FlushDrops: map[string]uint64{}, CompactionDrops: map[string]uint64{}}
	for i, name := range dropReasons {
		del.FlushDrops[name] = d.FlushDrops[i]
		del.CompactionDrops[name] = d.CompactionDrops[i]
	}
	return del
}

// statsDiff returns the counters of b minus those of a; the shape fields
// (Files, Bytes, MemtablesQueued) are b's.
func statsDiff(a, b lsm.Stats) lsm.Stats {
	d := b
	d.Total = lsm.LevelStats{}
	for i := range d.Levels {
		x, y := a.Levels[i], b.Levels[i]
		l := &d.Levels[i]
		l.FilterProbes, l.FilterNegatives = y.FilterProbes-x.FilterProbes, y.FilterNegatives-x.FilterNegatives
		l.FilterFalsePositives = y.FilterFalsePositives - x.FilterFalsePositives
		l.CacheHits, l.BlocksRead, l.BytesRead = y.CacheHits-x.CacheHits, y.BlocksRead-x.BlocksRead, y.BytesRead-x.BytesRead
		l.TableBytesIn, l.TableBytesWritten = y.TableBytesIn-x.TableBytesIn, y.TableBytesWritten-x.TableBytesWritten
		t := &d.Total
		t.Files += l.Files
		t.Bytes += l.Bytes
		t.FilterProbes += l.FilterProbes
		t.FilterNegatives += l.FilterNegatives
		t.FilterFalsePositives += l.FilterFalsePositives
		t.CacheHits += l.CacheHits
		t.BlocksRead += l.BlocksRead
		t.BytesRead += l.BytesRead
		t.TableBytesIn += l.TableBytesIn
		t.TableBytesWritten += l.TableBytesWritten
	}
	d.MemtableFilterNegatives -= a.MemtableFilterNegatives
	d.ImmutableFilterNegatives -= a.ImmutableFilterNegatives
	d.MemtableFalsePositives -= a.MemtableFalsePositives
	d.DeletesElided -= a.DeletesElided
	d.WALBytesSaved -= a.WALBytesSaved
	d.DeleteProofProbes -= a.DeleteProofProbes
	d.MergeProofProbes -= a.MergeProofProbes
	d.WALBytes -= a.WALBytes
	d.Flushes -= a.Flushes
	for i := range d.FlushDrops {
		d.FlushDrops[i] -= a.FlushDrops[i]
		d.CompactionDrops[i] -= a.CompactionDrops[i]
	}
	d.Compactions.Move -= a.Compactions.Move
	d.Compactions.L0 -= a.Compactions.L0
	d.Compactions.Size -= a.Compactions.Size
	d.Compactions.Rewrite -= a.Compactions.Rewrite
	d.CompactionBlocksRead -= a.CompactionBlocksRead
	d.CompactionBytesRead -= a.CompactionBytesRead
	d.Stalls -= a.Stalls
	d.StallTime -= a.StallTime
	return d
}
