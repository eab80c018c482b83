package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/monbandb/monban/lsm"
)

// A read or delete workload is measured over a window: from a settled DB
// (settle) to the end of its operations. Its counters are the difference
// of lsm.Stats across the window (statsDiff); its level shape is the one at
// the start, plus the tables written into each level meanwhile (levelWatch).

// window is the state a workload is measured against: the DB's counters,
// level shape and filters when it started.
type window struct {
	stats lsm.Stats
	// tombstones is where the -range_tombstones were live, for a read
	// workload; nil without them.
	tombstones *rangeTombstones
	// tableReads and tableBytes are the table-file reads and their bytes
	// so far (tableReads), for the iterator workloads' data blocks.
	tableReads, tableBytes uint64
}

// startWindow settles the DB and opens a window on it; for a workload of
// point reads (reads), after making the -range_tombstones live. DB.Tables
// opens every table first: Stats' filter figures cover only the open
// tables.
func (b *bench) startWindow(reads bool) (w window, err error) {
	if err := b.settle(); err != nil {
		return window{}, err
	}
	if reads {
		if w.tombstones, err = b.placeRangeTombstones(); err != nil {
			return window{}, err
		}
	}
	_, err = b.db.Tables()
	b.watch.reset()
	w.stats = b.db.Stats()
	w.tableReads, w.tableBytes = b.files.reads.Load(), b.files.bytes.Load()
	return w, err
}

// settleInterval is how often settle looks whether compactions have
// stopped.
const settleInterval = 5 * time.Millisecond

// settle waits until the DB is quiet: its memtable flushed (Flush returns
// with the compactions it made due already counted as running) and no
// compaction running. A workload that starts on a settled DB neither
// competes with the debt the one before left nor has it cut short by the
// Close before a comparison run, which would let the runs with filters on
// and off read different trees.
//
// Stats counts running compactions without the DB's lock, so between one
// compaction's end and the start of the one it made due it can read 0 for
// an instant; the debt is not 0 then. So the DB is quiet at a look that
// finds no compaction running and no debt, or no compaction running at
// two looks in a row (debt that nothing works off: a DB stopped by a
// background error, which settle returns). Under -filter_scope tree the
// DB is quiet once the tree-wide filter is built, too (waitTreeFilter).
func (b *bench) settle() error {
	if err := b.db.Flush(); err != nil {
		return err
	}
	idle := false
	for {
		s := b.db.Stats()
		switch {
		case s.BackgroundError != nil:
			return s.BackgroundError
		case s.CompactionsRunning == 0 && (s.CompactionDebt == 0 || idle):
			return b.waitTreeFilter()
		case b.ctx.Err() != nil:
			return errInterrupted
		}
		idle = s.CompactionsRunning == 0
		time.Sleep(settleInterval)
	}
}

// treeFilterWait bounds how long settle waits for the tree-wide filter: a
// build lsm cannot finish (a tree too large for the hash bits a table
// stores) must not hang the run.
const treeFilterWait = time.Minute

// waitTreeFilter waits, under -filter_scope tree, until the tree-wide
// filter is built. Open builds it in the background, asking the table
// filters meanwhile, and kvbench reopens the DB before every compared
// workload: without the wait such a workload would start on the table
// filters, and the build would run during it. The filters-off copy waits
// too (lsm builds the filter it ignores), so that both runs start alike.
// After treeFilterWait the workload runs without it, saying so on stderr.
func (b *bench) waitTreeFilter() error {
	switch {
	case b.scope != lsm.TreeWide || treeFilterBuilt(b.ctx, b.db):
		return nil
	case b.ctx.Err() != nil:
		return errInterrupted
	}
	fmt.Fprintf(b.stderr, "kvbench: the tree-wide filter was not built within %v of the DB settling; the workload starts on the table filters alone\n", treeFilterWait)
	return nil
}

// treeFilterBuilt waits until the tree-wide filter of db, opened with
// FilterScope TreeWide, is built, which Stats' TreeFilterBytes shows
// (above 0 once it is, even over no table), and reports whether it was
// within treeFilterWait and before ctx was done.
func treeFilterBuilt(ctx context.Context, db *lsm.DB) bool {
	deadline := time.Now().Add(treeFilterWait)
	for db.Stats().TreeFilterBytes == 0 {
		if ctx.Err() != nil || time.Now().After(deadline) {
			return false
		}
		time.Sleep(settleInterval)
	}
	return true
}

// levelWatch counts, per level, the tables that flushes and compactions
// (trivial moves included) write while a window is open, from the DB's
// event listener.
type levelWatch struct {
	mu      sync.Mutex
	written [lsm.NumLevels]int
}

func (w *levelWatch) listener() *lsm.EventListener {
	return &lsm.EventListener{
		FlushEnd: func(i lsm.FlushInfo) {
			if i.Err == nil {
				w.add(0, len(i.Output))
			}
		},
		CompactionEnd: func(i lsm.CompactionInfo) {
			if i.Err == nil {
				for _, t := range i.Outputs {
					w.add(t.Level, 1)
				}
			}
		},
	}
}

func (w *levelWatch) add(level, n int) {
	w.mu.Lock()
	w.written[level] += n
	w.mu.Unlock()
}

func (w *levelWatch) reset() {
	w.mu.Lock()
	w.written = [lsm.NumLevels]int{}
	w.mu.Unlock()
}

func (w *levelWatch) counts() [lsm.NumLevels]int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.written
}

// statsDiff returns the counters of b minus those of a; the fields that
// say what is now (Files, Bytes, MemtablesQueued, the filters' sizes, ...)
// are b's. TestStatsDiffSubtractsEveryCounter holds it to every field.
func statsDiff(a, b lsm.Stats) lsm.Stats {
	d := b
	for i := range d.Levels {
		d.Levels[i] = levelDiff(a.Levels[i], b.Levels[i])
	}
	d.Total = levelDiff(a.Total, b.Total)
	d.MemtableFilterNegatives -= a.MemtableFilterNegatives
	d.ImmutableFilterNegatives -= a.ImmutableFilterNegatives
	d.MemtableFalsePositives -= a.MemtableFalsePositives
	d.TreeFilterProbes -= a.TreeFilterProbes
	d.TreeFilterNegatives -= a.TreeFilterNegatives
	d.TreeFilterLines -= a.TreeFilterLines
	d.PrefixProbes -= a.PrefixProbes
	d.PrefixSkips -= a.PrefixSkips
	d.RangeProbes -= a.RangeProbes
	d.RangeSkips -= a.RangeSkips
	d.DeletesElided -= a.DeletesElided
	d.WALBytesSaved -= a.WALBytesSaved
	d.DeleteProofsSkipped -= a.DeleteProofsSkipped
	d.DeleteProofProbes -= a.DeleteProofProbes
	d.MergeProofProbes -= a.MergeProofProbes
	d.WALBytes -= a.WALBytes
	d.Commits -= a.Commits
	d.WALSyncs -= a.WALSyncs
	d.Flushes -= a.Flushes
	d.FlushedBytes -= a.FlushedBytes
	for i := range d.FlushDrops {
		d.FlushDrops[i] -= a.FlushDrops[i]
		d.CompactionDrops[i] -= a.CompactionDrops[i]
	}
	d.Compactions.Move -= a.Compactions.Move
	d.Compactions.L0 -= a.Compactions.L0
	d.Compactions.IntraL0 -= a.Compactions.IntraL0
	d.Compactions.Size -= a.Compactions.Size
	d.Compactions.Rewrite -= a.Compactions.Rewrite
	d.Compactions.Rest -= a.Compactions.Rest
	d.Compactions.DeleteOnly -= a.Compactions.DeleteOnly
	d.CompactionBlocksRead -= a.CompactionBlocksRead
	d.CompactionBytesRead -= a.CompactionBytesRead
	d.SpaceReclaimed -= a.SpaceReclaimed
	d.Slowdowns -= a.Slowdowns
	d.Stalls -= a.Stalls
	d.StallTime -= a.StallTime
	d.MetaCacheHits -= a.MetaCacheHits
	d.MetaBlocksRead -= a.MetaBlocksRead
	d.MetaBytesRead -= a.MetaBytesRead
	return d
}

// levelDiff is statsDiff of one level's counters (or the total's).
func levelDiff(x, y lsm.LevelStats) lsm.LevelStats {
	l := y
	l.FilterProbes, l.FilterNegatives = y.FilterProbes-x.FilterProbes, y.FilterNegatives-x.FilterNegatives
	l.FilterFalsePositives = y.FilterFalsePositives - x.FilterFalsePositives
	l.CacheHits, l.BlocksRead, l.BytesRead = y.CacheHits-x.CacheHits, y.BlocksRead-x.BlocksRead, y.BytesRead-x.BytesRead
	l.TableBytesIn, l.TableBytesWritten = y.TableBytesIn-x.TableBytesIn, y.TableBytesWritten-x.TableBytesWritten
	return l
}
