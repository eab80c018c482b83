package prometheus

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/monbandb/monban/compaction"
	"github.com/monbandb/monban/lsm"
)

// Namespace prefixes every metric name.
const Namespace = "monban"

// Collector is a prometheus.Collector over one DB. It is safe for
// concurrent use, as DB.Stats is.
type Collector struct {
	stats  func() lsm.Stats // db.Stats; tests substitute a fixed snapshot
	levels []levelMetric
	global []globalMetric
	// Labelled families that are not one value per level.
	flushDrops, compactionDrops, compactions *prometheus.Desc
}

var _ prometheus.Collector = (*Collector)(nil)

// levelMetric is one family with a "level" label, read from LevelStats.
type levelMetric struct {
	desc  *prometheus.Desc
	typ   prometheus.ValueType
	value func(lsm.LevelStats) float64
}

// globalMetric is one unlabelled metric, read from Stats.
type globalMetric struct {
	desc  *prometheus.Desc
	typ   prometheus.ValueType
	value func(*lsm.Stats) float64
}

// dropReasons names the label values of the drop families, indexed like
// compaction.Drops.
var dropReasons = [...]struct {
	reason compaction.DropReason
	label  string
}{
	{compaction.DropShadowed, "shadowed"},
	{compaction.DropBottom, "bottom"},
	{compaction.DropFilterProof, "filter_proof"},
}

// NewCollector returns a Collector that reads db.Stats() on every Collect.
func NewCollector(db *lsm.DB) *Collector {
	c := &Collector{stats: db.Stats}
	name := func(s string) string { return prometheus.BuildFQName(Namespace, "", s) }
	level := func(n, help string, typ prometheus.ValueType, f func(lsm.LevelStats) float64) {
		c.levels = append(c.levels, levelMetric{prometheus.NewDesc(name(n), help, []string{"level"}, nil), typ, f})
	}
	global := func(n, help string, typ prometheus.ValueType, f func(*lsm.Stats) float64) {
		c.global = append(c.global, globalMetric{prometheus.NewDesc(name(n), help, nil, nil), typ, f})
	}
	const counter, gauge = prometheus.CounterValue, prometheus.GaugeValue
	u := func(v uint64) float64 { return float64(v) }

	// Shape of each level.
	level("level_files", "Tables in the level.", gauge,
		func(l lsm.LevelStats) float64 { return float64(l.Files) })
	level("level_bytes", "Bytes of the tables in the level.", gauge,
		func(l lsm.LevelStats) float64 { return u(l.Bytes) })
	level("level_target_bytes", "The level's size target (0 for L0 and above the base level).", gauge,
		func(l lsm.LevelStats) float64 { return float64(l.Target) })
	level("level_score", "How far over its target the level is; compaction picks the highest score of at least 1.", gauge,
		func(l lsm.LevelStats) float64 { return l.Score })
	// What Gets did there.
	level("level_filter_probes_total", "Get lookups that asked a table's Bloom filter in the level.", counter,
		func(l lsm.LevelStats) float64 { return u(l.FilterProbes) })
	level("level_filter_negatives_total", "Bloom filter probes answered \"absent\": data-block reads saved.", counter,
		func(l lsm.LevelStats) float64 { return u(l.FilterNegatives) })
	level("level_filter_false_positives_total", "Bloom filter probes answered \"maybe\" for a key the table does not hold: wasted reads.", counter,
		func(l lsm.LevelStats) float64 { return u(l.FilterFalsePositives) })
	level("level_cache_hits_total", "Data blocks Get found in the block cache.", counter,
		func(l lsm.LevelStats) float64 { return u(l.CacheHits) })
	level("level_blocks_read_total", "Data blocks Get read from table files.", counter,
		func(l lsm.LevelStats) float64 { return u(l.BlocksRead) })
	level("level_block_read_bytes_total", "Bytes of the data blocks Get read from table files.", counter,
		func(l lsm.LevelStats) float64 { return u(l.BytesRead) })
	// What flushes and compactions moved.
	level("level_compaction_input_bytes_total", "Table bytes compactions took from the level as inputs.", counter,
		func(l lsm.LevelStats) float64 { return u(l.TableBytesIn) })
	level("level_table_written_bytes_total", "Bytes of tables written into the level (by flushes and intra-L0 compactions for L0, by compactions below).", counter,
		func(l lsm.LevelStats) float64 { return u(l.TableBytesWritten) })
	// Range tombstones the level's tables hold, and what they cover below.
	level("level_range_tombstones", "Range-tombstone fragments in the level's tables (of the tables whose tombstones are known).", gauge,
		func(l lsm.LevelStats) float64 { return float64(l.RangeDels) })
	level("level_range_tombstone_covered_bytes", "Estimated bytes of the levels below that the level's range tombstones cover: what compacting them down would reclaim.", gauge,
		func(l lsm.LevelStats) float64 { return u(l.RangeDelBytes) })

	// Memtables.
	global("memtable_filter_negatives_total", "Memtable probes that a memtable's own quotient filter answered \"absent\".", counter,
		func(s *lsm.Stats) float64 { return u(s.MemtableFilterNegatives) })
	global("immutable_filter_negatives_total", "Gets that the combined filter of the immutable memtables turned away in one probe.", counter,
		func(s *lsm.Stats) float64 { return u(s.ImmutableFilterNegatives) })
	global("memtable_false_positives_total", "Memtable searches that the filter allowed and the tree did not satisfy.", counter,
		func(s *lsm.Stats) float64 { return u(s.MemtableFalsePositives) })
	global("memtables_queued", "Immutable memtables waiting for flush.", gauge,
		func(s *lsm.Stats) float64 { return float64(s.MemtablesQueued) })
	// Prefix iterators.
	global("prefix_probes_total", "Memtable and table filters a prefix iterator asked before reading the source.", counter,
		func(s *lsm.Stats) float64 { return u(s.PrefixProbes) })
	global("prefix_skips_total", "Sources a prefix iterator left out because their filter ruled the prefix out.", counter,
		func(s *lsm.Stats) float64 { return u(s.PrefixSkips) })
	// The tree-wide filter (Options.FilterScope TreeWide; all zero without).
	global("tree_filter_probes_total", "Lookups the tree-wide filter answered: Get and MultiGet keys, and the absent-key proofs of deletes, flushes and compactions.", counter,
		func(s *lsm.Stats) float64 { return u(s.TreeFilterProbes) })
	global("tree_filter_negatives_total", "Tree-wide filter lookups that named no level, so that no table filter was asked.", counter,
		func(s *lsm.Stats) float64 { return u(s.TreeFilterNegatives) })
	global("tree_filter_lines_total", "64-byte lines of the tree-wide filter's table its lookups read.", counter,
		func(s *lsm.Stats) float64 { return u(s.TreeFilterLines) })
	global("tree_filter_bytes", "Memory of the tree-wide filter, outside the Go heap.", gauge,
		func(s *lsm.Stats) float64 { return u(s.TreeFilterBytes) })
	global("tree_filter_entries", "Keys the tree-wide filter holds (a key in two tables counts twice).", gauge,
		func(s *lsm.Stats) float64 { return u(s.TreeFilterEntries) })
	// Deletes.
	global("deletes_elided_total", "Deletes that the filters proved unnecessary and that wrote nothing.", counter,
		func(s *lsm.Stats) float64 { return u(s.DeletesElided) })
	global("wal_bytes_saved_total", "WAL bytes that elided deletes did not write.", counter,
		func(s *lsm.Stats) float64 { return u(s.WALBytesSaved) })
	global("delete_proofs_skipped_total", "Deletes that wrote a tombstone without asking the filters, because recent proofs had kept failing.", counter,
		func(s *lsm.Stats) float64 { return u(s.DeleteProofsSkipped) })
	global("delete_proof_probes_total", "In-memory table filter probes made to prove a deleted key absent.", counter,
		func(s *lsm.Stats) float64 { return u(s.DeleteProofProbes) })
	global("merge_proof_probes_total", "Filter probes made by flushes and compactions to prove a tombstone unnecessary.", counter,
		func(s *lsm.Stats) float64 { return u(s.MergeProofProbes) })
	// Writes.
	global("wal_bytes_total", "Bytes of the commits' records appended to WALs.", counter,
		func(s *lsm.Stats) float64 { return u(s.WALBytes) })
	global("flushes_total", "Memtables flushed (a table written or not: none is when every entry was dropped).", counter,
		func(s *lsm.Stats) float64 { return u(s.Flushes) })
	global("flushed_bytes_total", "Bytes of the L0 tables flushes wrote.", counter,
		func(s *lsm.Stats) float64 { return u(s.FlushedBytes) })
	global("compaction_blocks_read_total", "Blocks compactions read from their input tables.", counter,
		func(s *lsm.Stats) float64 { return u(s.CompactionBlocksRead) })
	global("compaction_read_bytes_total", "Bytes compactions read from their input tables.", counter,
		func(s *lsm.Stats) float64 { return u(s.CompactionBytesRead) })
	global("compaction_debt_bytes", "Estimated bytes compactions must still write to bring every level within its target.", gauge,
		func(s *lsm.Stats) float64 { return u(s.CompactionDebt) })
	global("compactions_running", "Compactions running now.", gauge,
		func(s *lsm.Stats) float64 { return float64(s.CompactionsRunning) })
	global("space_reclaimed_bytes_total", "Table bytes compactions removed: for each that shrank its inputs, their size minus its outputs'.", counter,
		func(s *lsm.Stats) float64 { return u(s.SpaceReclaimed) })
	global("write_amplification", "Bytes written to tables by flushes and compactions per byte flushed from memtables (0 before the first flush).", gauge,
		func(s *lsm.Stats) float64 { return s.WriteAmplification() })
	global("write_slowdowns_total", "Delays of a millisecond because L0 or the flush queue neared its limit, one per commit group (writers delayed together count once).", counter,
		func(s *lsm.Stats) float64 { return u(s.Slowdowns) })
	global("write_stalls_total", "Waits for flushes or compactions to catch up, one per commit group (writers held up together count once).", counter,
		func(s *lsm.Stats) float64 { return u(s.Stalls) })
	global("write_stall_seconds_total", "Total time commits spent stalled.", counter,
		func(s *lsm.Stats) float64 { return s.StallTime.Seconds() })
	global("background_error", "1 once a failed flush, compaction or WAL write made the DB read-only (until it is reopened), else 0.", gauge,
		func(s *lsm.Stats) float64 {
			if s.BackgroundError != nil {
				return 1
			}
			return 0
		})

	c.flushDrops = prometheus.NewDesc(name("flush_dropped_entries_total"),
		"Entries flushes did not write, by reason: shadowed versions no snapshot could see, tombstones at the bottom of the tree, tombstones the filters proved unnecessary.",
		[]string{"reason"}, nil)
	c.compactionDrops = prometheus.NewDesc(name("compaction_dropped_entries_total"),
		"Entries compactions did not write, by reason: shadowed versions no snapshot could see, tombstones at the bottom of the tree, tombstones the filters proved unnecessary.",
		[]string{"reason"}, nil)
	c.compactions = prometheus.NewDesc(name("compactions_total"),
		"Compactions by kind: trivial moves, L0 to base-level merges, L0 into L0 merges, size-triggered merges of deeper levels, rewrites, rest compactions, tables dropped unread under range tombstones (delete_only).",
		[]string{"kind"}, nil)
	return c
}

// Describe sends the descriptor of every metric Collect sends.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, m := range c.levels {
		ch <- m.desc
	}
	for _, m := range c.global {
		ch <- m.desc
	}
	ch <- c.flushDrops
	ch <- c.compactionDrops
	ch <- c.compactions
}

// Collect reads one Stats snapshot and sends every metric from it.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	s := c.stats()
	for _, m := range c.levels {
		for i, l := range s.Levels {
			ch <- prometheus.MustNewConstMetric(m.desc, m.typ, m.value(l), strconv.Itoa(i))
		}
	}
	for _, m := range c.global {
		ch <- prometheus.MustNewConstMetric(m.desc, m.typ, m.value(&s))
	}
	for _, r := range dropReasons {
		ch <- prometheus.MustNewConstMetric(c.flushDrops, prometheus.CounterValue, float64(s.FlushDrops[r.reason]), r.label)
		ch <- prometheus.MustNewConstMetric(c.compactionDrops, prometheus.CounterValue, float64(s.CompactionDrops[r.reason]), r.label)
	}
	for _, k := range []struct {
		kind string
		n    uint64
	}{{"move", s.Compactions.Move}, {"l0", s.Compactions.L0}, {"intra_l0", s.Compactions.IntraL0}, {"size", s.Compactions.Size}, {"rewrite", s.Compactions.Rewrite}, {"rest", s.Compactions.Rest}, {"delete_only", s.Compactions.DeleteOnly}} {
		ch <- prometheus.MustNewConstMetric(c.compactions, prometheus.CounterValue, float64(k.n), k.kind)
	}
}
