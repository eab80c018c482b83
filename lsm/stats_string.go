package lsm

import (
	"expvar"
	"fmt"
	"strings"
	"text/tabwriter"
	"unicode/utf8"
)

// String lays the counters out for a person, within 80 columns (a
// terminal's, a code review's): two tables with a row per level, what the
// filters did and what the level read and wrote, then a few lines per
// subsystem. An FPR with no probe that could measure it prints as "n/a",
// as kvbench prints it, not 0.
func (s Stats) String() string {
	var b strings.Builder
	table := func(header string, row func(LevelStats) string) {
		w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(w, header)
		for i, l := range s.Levels {
			if l.Files > 0 || l.FilterProbes > 0 || l.TableBytesWritten > 0 {
				fmt.Fprintf(w, "L%d\t%s\t\n", i, row(l))
			}
		}
		fmt.Fprintf(w, "total\t%s\t\n", row(s.Total))
		w.Flush()
	}
	table("level\ttables\tbytes\tfilter probes\tnegatives\tfalse pos\tFPR\t", func(l LevelStats) string {
		fpr := "n/a"
		if l.FilterNegatives+l.FilterFalsePositives > 0 {
			fpr = fmt.Sprintf("%.4f%%", 100*l.FPR())
		}
		return fmt.Sprintf("%d\t%d\t%d\t%d\t%d\t%s", l.Files, l.Bytes, l.FilterProbes, l.FilterNegatives, l.FilterFalsePositives, fpr)
	})
	table("level\tblocks read\tcache hits\tbytes in\tbytes out\t", func(l LevelStats) string {
		return fmt.Sprintf("%d\t%d\t%d\t%d", l.BlocksRead, l.CacheHits, l.TableBytesIn, l.TableBytesWritten)
	})
	// Each line below starts with a label of at most labelWidth columns;
	// wrapStatsLine breaks the longer ones under the first figure.
	line := func(label, format string, args ...any) {
		b.WriteString(wrapStatsLine(fmt.Sprintf("%-*s", labelWidth, label) + fmt.Sprintf(format, args...)))
	}
	line("memtables:", "%d queued for flush; filter negatives %d (own) + %d (combined immutables); false positives %d",
		s.MemtablesQueued, s.MemtableFilterNegatives, s.ImmutableFilterNegatives, s.MemtableFalsePositives)
	if s.PrefixProbes > 0 {
		line("prefixes:", "%d filters asked by prefix iterators, %d memtables and tables skipped", s.PrefixProbes, s.PrefixSkips)
	}
	if s.RangeProbes > 0 {
		line("ranges:", "%d range filters asked by bounded iterators, %d tables skipped", s.RangeProbes, s.RangeSkips)
	}
	if s.TreeFilterBytes > 0 || s.TreeFilterProbes > 0 {
		line("tree filter:", "%d probes reading %d cache lines, %d negatives; %d entries in %d bytes",
			s.TreeFilterProbes, s.TreeFilterLines, s.TreeFilterNegatives, s.TreeFilterEntries, s.TreeFilterBytes)
	}
	line("deletes:", "%d elided (%d WAL bytes saved), %d not proved (proofs kept failing); proof probes %d by deletes, %d by merges",
		s.DeletesElided, s.WALBytesSaved, s.DeleteProofsSkipped, s.DeleteProofProbes, s.MergeProofProbes)
	line("flushes:", "%d; dropped %s", s.Flushes, s.FlushDrops)
	line("compactions:", "%d moves, %d L0, %d intra-L0, %d size, %d rewrites, %d rest, %d delete-only; dropped %s; read %d blocks (%d bytes); reclaimed %d bytes",
		s.Compactions.Move, s.Compactions.L0, s.Compactions.IntraL0, s.Compactions.Size, s.Compactions.Rewrite, s.Compactions.Rest, s.Compactions.DeleteOnly, s.CompactionDrops,
		s.CompactionBlocksRead, s.CompactionBytesRead, s.SpaceReclaimed)
	line("debt:", "%d bytes of compaction; running now: %d", s.CompactionDebt, s.CompactionsRunning)
	line("range dels:", "%d spans in tables, covering an estimated %d bytes below them", s.Total.RangeDels, s.Total.RangeDelBytes)
	line("writes:", "WAL %d bytes; write amplification %.2f; %d slowdowns, %d stalls (%v)",
		s.WALBytes, s.WriteAmplification(), s.Slowdowns, s.Stalls, s.StallTime)
	line("off-heap:", "%d bytes mapped (process); %d buffers never released", s.OffHeapMapped, s.OffHeapLeaked)
	if s.BackgroundError != nil {
		line("READ-ONLY", "after a background error: %v", s.BackgroundError)
	}
	return b.String()
}

// labelWidth is the column where the figures of String's subsystem lines
// begin, and continuation lines too.
const labelWidth = len("compactions: ")

// wrapStatsLine returns line, ending in "\n", broken into lines of at most
// 80 columns. A break goes after the last "; " that fits, else the last
// ", ", else the last space, and the rest continues at labelWidth, under
// the first figure. A single word too long for a line (an error's text may
// hold one) stays whole.
func wrapStatsLine(line string) string {
	const width = 80
	indent := strings.Repeat(" ", labelWidth)
	var out strings.Builder
	for utf8.RuneCountInString(line) > width {
		head := string([]rune(line)[:width]) // a cut in it leaves at most width runes
		cut := -1
		for _, sep := range []string{"; ", ", ", " "} {
			if i := strings.LastIndex(head, sep); i > labelWidth {
				cut = i + len(sep) - 1 // keep ";" or "," on the line, drop the space
				break
			}
		}
		if cut < 0 {
			break
		}
		out.WriteString(strings.TrimRight(line[:cut], " ") + "\n")
		line = indent + strings.TrimLeft(line[cut:], " ")
	}
	out.WriteString(line + "\n")
	return out.String()
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
