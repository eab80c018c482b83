package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/monbandb/monban/lsm"
)

// statsLine is the "stats" workload's JSON line: lsm.Stats under snake_case
// keys, with null where lsm's zero means "none" (a level without a size
// target, a write amplification before any flush).
type statsLine struct {
	Type string `json:"type"` // "stats"
	settingLabel
	Repeat                   int              `json:"repeat"`
	BackgroundError          *string          `json:"background_error"`
	Levels                   []levelStatsLine `json:"levels"`
	Total                    levelStatsLine   `json:"total"`
	MemtableFilterNegatives  uint64           `json:"memtable_filter_negatives"`
	ImmutableFilterNegatives uint64           `json:"immutable_filter_negatives"`
	MemtableFalsePositives   uint64           `json:"memtable_false_positives"`
	// The tree-wide filter's counters since the DB was opened, and its
	// size (reads' fields of the same names say what they count); 0, and
	// null bits per entry, under per_table.
	TreeFilterProbes       uint64            `json:"tree_filter_probes"`
	TreeFilterNegatives    uint64            `json:"tree_filter_negatives"`
	TreeFilterLines        uint64            `json:"tree_filter_lines"`
	TreeFilterBytes        uint64            `json:"tree_filter_bytes"`
	TreeFilterEntries      uint64            `json:"tree_filter_entries"`
	TreeFilterBitsPerEntry *float64          `json:"tree_filter_bits_per_entry"`
	DeletesElided          uint64            `json:"deletes_elided"`
	WALBytesSaved          uint64            `json:"wal_bytes_saved"`
	DeleteProofProbes      uint64            `json:"delete_proof_probes"`
	MergeProofProbes       uint64            `json:"merge_proof_probes"`
	WALBytes               uint64            `json:"wal_bytes"`
	Commits                uint64            `json:"commits"`
	WALSyncs               uint64            `json:"wal_syncs"`
	Flushes                uint64            `json:"flushes"`
	MemtablesQueued        int               `json:"memtables_queued"`
	FlushDrops             map[string]uint64 `json:"flush_drops"`
	CompactionDrops        map[string]uint64 `json:"compaction_drops"`
	Compactions            struct {
		Move    uint64 `json:"move"`
		L0      uint64 `json:"l0"`
		IntraL0 uint64 `json:"intra_l0"`
		Size    uint64 `json:"size"`
		Rewrite uint64 `json:"rewrite"`
		Rest    uint64 `json:"rest"`
		// DeleteOnly counts tables' drops by a manifest edit alone, unread.
		DeleteOnly uint64 `json:"delete_only"`
	} `json:"compactions"`
	CompactionBlocksRead uint64   `json:"compaction_blocks_read"`
	CompactionBytesRead  uint64   `json:"compaction_bytes_read"`
	SpaceReclaimed       uint64   `json:"space_reclaimed"`
	CompactionsRunning   int      `json:"compactions_running"`
	CompactionDebt       uint64   `json:"compaction_debt"`
	Slowdowns            uint64   `json:"slowdowns"`
	Stalls               uint64   `json:"stalls"`
	StallSec             float64  `json:"stall_sec"`
	WriteAmplification   *float64 `json:"write_amplification"`
}

type levelStatsLine struct {
	Level             *int     `json:"level"` // null in total
	Tables            int      `json:"tables"`
	Bytes             uint64   `json:"bytes"`
	Target            *int64   `json:"target"` // null: no size target (L0, levels above the base)
	Score             *float64 `json:"score"`  // null in total
	FilterProbes      uint64   `json:"filter_probes"`
	FilterNegatives   uint64   `json:"filter_negatives"`
	FalsePositives    uint64   `json:"false_positives"`
	FPR               *float64 `json:"fpr"`
	CacheHits         uint64   `json:"cache_hits"`
	BlocksRead        uint64   `json:"blocks_read"`
	BytesRead         uint64   `json:"bytes_read"`
	TableBytesIn      uint64   `json:"table_bytes_in"`
	TableBytesWritten uint64   `json:"table_bytes_written"`
	RangeDels         int      `json:"range_dels"`      // spans in the level's tables
	RangeDelBytes     uint64   `json:"range_del_bytes"` // estimated bytes below they cover
}

func newLevelStatsLine(level *int, l lsm.LevelStats) levelStatsLine {
	out := levelStatsLine{Level: level, Tables: l.Files, Bytes: l.Bytes,
		FilterProbes: l.FilterProbes, FilterNegatives: l.FilterNegatives, FalsePositives: l.FilterFalsePositives,
		FPR: levelFPR(l), CacheHits: l.CacheHits, BlocksRead: l.BlocksRead, BytesRead: l.BytesRead,
		TableBytesIn: l.TableBytesIn, TableBytesWritten: l.TableBytesWritten,
		RangeDels: l.RangeDels, RangeDelBytes: l.RangeDelBytes}
	if l.Target > 0 {
		out.Target = &l.Target
	}
	if level != nil {
		out.Score = &l.Score
	}
	return out
}

func newStatsLine(b *bench, s lsm.Stats) statsLine {
	out := statsLine{Type: "stats", settingLabel: b.label(), Repeat: b.repeat,
		Total:                   newLevelStatsLine(nil, s.Total),
		MemtableFilterNegatives: s.MemtableFilterNegatives, ImmutableFilterNegatives: s.ImmutableFilterNegatives,
		MemtableFalsePositives: s.MemtableFalsePositives,
		TreeFilterProbes:       s.TreeFilterProbes, TreeFilterNegatives: s.TreeFilterNegatives, TreeFilterLines: s.TreeFilterLines,
		TreeFilterBytes: s.TreeFilterBytes, TreeFilterEntries: s.TreeFilterEntries, TreeFilterBitsPerEntry: treeBitsPerEntry(s),
		DeletesElided: s.DeletesElided, WALBytesSaved: s.WALBytesSaved,
		DeleteProofProbes: s.DeleteProofProbes, MergeProofProbes: s.MergeProofProbes, WALBytes: s.WALBytes,
		Commits: s.Commits, WALSyncs: s.WALSyncs,
		Flushes: s.Flushes, MemtablesQueued: s.MemtablesQueued, FlushDrops: dropMap(s.FlushDrops),
		CompactionDrops: dropMap(s.CompactionDrops), CompactionBlocksRead: s.CompactionBlocksRead,
		CompactionBytesRead: s.CompactionBytesRead, SpaceReclaimed: s.SpaceReclaimed,
		CompactionsRunning: s.CompactionsRunning, CompactionDebt: s.CompactionDebt, Slowdowns: s.Slowdowns,
		Stalls: s.Stalls, StallSec: s.StallTime.Seconds(), WriteAmplification: writeAmp(s)}
	if s.BackgroundError != nil {
		msg := s.BackgroundError.Error()
		out.BackgroundError = &msg
	}
	for i, l := range s.Levels {
		out.Levels = append(out.Levels, newLevelStatsLine(&i, l))
	}
	c := &out.Compactions
	c.Move, c.L0, c.IntraL0, c.Size, c.Rewrite, c.Rest = s.Compactions.Move, s.Compactions.L0, s.Compactions.IntraL0, s.Compactions.Size, s.Compactions.Rewrite, s.Compactions.Rest
	c.DeleteOnly = s.Compactions.DeleteOnly
	return out
}

// writeAmp is Stats.WriteAmplification, nil before anything was flushed
// (which it returns as 0).
func writeAmp(s lsm.Stats) *float64 {
	if s.FlushedBytes == 0 {
		return nil
	}
	return ptr(s.WriteAmplification())
}

// stats prints the counters of b's DB since it was last opened, and its
// shape now.
func (r *reporter) stats(b *bench, s lsm.Stats) {
	if r.enc != nil {
		r.emit(newStatsLine(b, s))
		return
	}
	fmt.Fprintf(r.w, "stats (bloom_bits %d, %s sizing, %s scope; tables and sizes now, counters since the DB was last opened: each compared workload reopens it):\n",
		b.bits, b.sizing, scopeName(b.scope))
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
	if b.scope == lsm.TreeWide {
		fmt.Fprintf(r.w, "  tree-wide filter: %d probes reading %d cache lines, %d negatives (no level named); %s in memory, %d entries (%s bits/entry)\n",
			s.TreeFilterProbes, s.TreeFilterLines, s.TreeFilterNegatives, size(int64(s.TreeFilterBytes)), s.TreeFilterEntries, fixed(2, treeBitsPerEntry(s)))
	}
	fmt.Fprintf(r.w, "  deletes elided %d (WAL %s saved), WAL written %s, flushes %d, compactions %d move / %d L0 / %d intra-L0 / %d size / %d rest / %d delete-only, write amplification %s\n",
		s.DeletesElided, size(int64(s.WALBytesSaved)), size(int64(s.WALBytes)), s.Flushes,
		s.Compactions.Move, s.Compactions.L0, s.Compactions.IntraL0, s.Compactions.Size, s.Compactions.Rest, s.Compactions.DeleteOnly, fixed(2, writeAmp(s)))
	fmt.Fprintf(r.w, "  commits %d, WAL syncs %d (%s per commit: what group commit shared)\n",
		s.Commits, s.WALSyncs, fixed(3, perOp(s.WALSyncs, int64(s.Commits))))
	fmt.Fprintf(r.w, "  dropped at flush: %s; at compaction: %s; stalls %d (%v)\n",
		drops(dropMap(s.FlushDrops)), drops(dropMap(s.CompactionDrops)), s.Stalls, s.StallTime.Round(time.Millisecond))
	if s.Total.RangeDels > 0 {
		fmt.Fprintf(r.w, "  range tombstones: %d spans in tables, covering an estimated %s below them\n",
			s.Total.RangeDels, size(int64(s.Total.RangeDelBytes)))
	}
}
