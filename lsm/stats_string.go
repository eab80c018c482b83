package lsm

import (
	"expvar"
	"fmt"
	"strings"
	"text/tabwriter"
)

// String lays the counters out for a person: a row per level, then one
// line per subsystem. An FPR with no probe that could measure it prints
// as "-", not 0.
func (s Stats) String() string {
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "level\ttables\tbytes\tfilter probes\tnegatives\tfalse pos\tFPR\tblocks read\tcache hits\tbytes in\tbytes out\t")
	row := func(name string, l LevelStats) {
		fpr := "-"
		if l.FilterNegatives+l.FilterFalsePositives > 0 {
			fpr = fmt.Sprintf("%.4f%%", 100*l.FPR())
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%d\t%d\t%d\t%d\t\n", name, l.Files, l.Bytes,
			l.FilterProbes, l.FilterNegatives, l.FilterFalsePositives, fpr, l.BlocksRead, l.CacheHits,
			l.TableBytesIn, l.TableBytesWritten)
	}
	for i, l := range s.Levels {
		if l.Files > 0 || l.FilterProbes > 0 || l.TableBytesWritten > 0 {
			row(fmt.Sprintf("L%d", i), l)
		}
	}
	row("total", s.Total)
	w.Flush()
	fmt.Fprintf(&b, "memtables: %d queued for flush; filter negatives %d (own) + %d (combined immutables); false positives %d\n",
		s.MemtablesQueued, s.MemtableFilterNegatives, s.ImmutableFilterNegatives, s.MemtableFalsePositives)
	if s.PrefixProbes > 0 {
		fmt.Fprintf(&b, "prefix iterators: %d filters asked, %d memtables and tables skipped\n", s.PrefixProbes, s.PrefixSkips)
	}
	if s.RangeProbes > 0 {
		fmt.Fprintf(&b, "bounded iterators: %d range filters asked, %d tables skipped\n", s.RangeProbes, s.RangeSkips)
	}
	fmt.Fprintf(&b, "deletes:   %d elided (%d WAL bytes saved), %d not proved (proofs kept failing); proof probes %d by deletes, %d by merges\n",
		s.DeletesElided, s.WALBytesSaved, s.DeleteProofsSkipped, s.DeleteProofProbes, s.MergeProofProbes)
	fmt.Fprintf(&b, "flushes:   %d; dropped %s\n", s.Flushes, s.FlushDrops)
	fmt.Fprintf(&b, "compactions: %d moves, %d L0, %d intra-L0, %d size, %d rewrites, %d rest; dropped %s; read %d blocks (%d bytes); reclaimed %d bytes\n",
		s.Compactions.Move, s.Compactions.L0, s.Compactions.IntraL0, s.Compactions.Size, s.Compactions.Rewrite, s.Compactions.Rest, s.CompactionDrops,
		s.CompactionBlocksRead, s.CompactionBytesRead, s.SpaceReclaimed)
	fmt.Fprintf(&b, "compaction debt: %d bytes; running now: %d\n", s.CompactionDebt, s.CompactionsRunning)
	fmt.Fprintf(&b, "range tombstones: %d spans in tables, covering an estimated %d bytes below them\n", s.Total.RangeDels, s.Total.RangeDelBytes)
	fmt.Fprintf(&b, "writes:    WAL %d bytes; write amplification %.2f; %d slowdowns, %d stalls (%v)\n",
		s.WALBytes, s.WriteAmplification(), s.Slowdowns, s.Stalls, s.StallTime)
	fmt.Fprintf(&b, "off-heap:  %d bytes mapped (process); %d buffers never released\n", s.OffHeapMapped, s.OffHeapLeaked)
	if s.BackgroundError != nil {
		fmt.Fprintf(&b, "READ-ONLY after a background error: %v\n", s.BackgroundError)
	}
	return b.String()
}

// PublishExpvar publishes the DB's Stats under name in the expvar registry
// (and so on /debug/vars), computed afresh at every read. The sticky error
// appears as its text. Like expvar.Publish, it panics if name is taken.
func (d *DB) PublishExpvar(name string) {
	expvar.Publish(name, expvar.Func(func() any {
		s := d.Stats()
		out := struct {
			Stats
			BackgroundError string `json:",omitempty"`
		}{Stats: s}
		if s.BackgroundError != nil {
			out.BackgroundError = s.BackgroundError.Error()
		}
		return out
	}))
}
