package main

// Adapter for monban (github.com/monbandb/monban/lsm), the checkout this
// module sits in (go.mod replaces it with ../..). It uses the public lsm API
// only.
//
// Caveats (also in README.md):
//   - Flush calls DB.Flush, which returns once the memtable is an L0 table
//     but does not wait for the compactions that table triggers. Like the
//     Pebble adapter, it then waits until background work is quiet (see
//     waitQuiet), so every phase pays for its own compactions only.
//   - Compression is the default (snappy), as for the peers; the harness's
//     random values do not compress, so each block costs a compression
//     attempt and is stored as is.
//   - Reads go through os.File.ReadAt (pread64), one syscall per block.

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/lsm"
)

func init() {
	register("monban", func() Engine { return &monbanEngine{} })
	// monban with Options.BufferedWAL: commits do not wait for write(2),
	// as Pebble's (and goleveldb's) do not.
	register("monban-bufwal", func() Engine { return &monbanEngine{bufferedWAL: true} })
	// monban with Options.PinnedMetaLimit -1: no table's index or filter is
	// pinned, all are read a page at a time through the block cache, so its
	// memory is what Pebble's is, the block cache and the memtables.
	register("monban-paged", func() Engine { return &monbanEngine{paged: true} })
}

type monbanEngine struct {
	bufferedWAL   bool
	paged         bool
	db            *lsm.DB
	dir           string
	memtableBytes int64
	// sampled is db for MemParts, which -memsample calls from its own
	// goroutine, across the open workload's Close and Open.
	sampled atomic.Pointer[lsm.DB]
	// running counts flushes and compactions between their Begin and End
	// events: Stats counts running compactions but not flushes.
	running atomic.Int64
}

func (e *monbanEngine) Name() string {
	switch {
	case e.bufferedWAL:
		return "monban-bufwal"
	case e.paged:
		return "monban-paged"
	}
	return "monban"
}

func (e *monbanEngine) Open(dir string, o Options) error {
	opts := &lsm.Options{
		BloomBitsPerKey: o.BitsPerKey,
		BlockCacheSize:  o.CacheBytes,
		MemtableSize:    o.MemtableBytes,
		BufferedWAL:     e.bufferedWAL,
		Sync:            o.Sync,
		PinnedMetaLimit: map[bool]int64{false: o.PinnedMeta, true: -1}[e.paged],
		EventListener: &lsm.EventListener{
			FlushBegin:      func(lsm.FlushInfo) { e.running.Add(1) },
			FlushEnd:        func(lsm.FlushInfo) { e.running.Add(-1) },
			CompactionBegin: func(lsm.CompactionInfo) { e.running.Add(1) },
			CompactionEnd:   func(lsm.CompactionInfo) { e.running.Add(-1) },
		},
	}
	if o.PrefixLen > 0 {
		n := o.PrefixLen
		opts.Split = &filter.Split{Name: fmt.Sprintf("peers.first%d", n), Len: func(k []byte) int { return min(len(k), n) }}
	}
	if o.RangeFilterBits > 0 {
		opts.RangeFilter = filter.GrafiteOptions{BitsPerKey: o.RangeFilterBits, RangeLen: rangeLen}
	}
	if o.BitsPerKey == 0 {
		opts.BloomBitsPerKey = -1 // monban: negative writes no filters; 0 means its default
	}
	if o.CacheBytes == 0 {
		opts.BlockCacheSize = -1 // monban: negative disables the cache; 0 means its default
	}
	db, err := lsm.Open(dir, opts)
	if err != nil {
		return err
	}
	e.db, e.dir, e.memtableBytes = db, dir, o.MemtableBytes
	e.sampled.Store(db)
	return nil
}

// Put, Get and Delete go straight to the lsm.DB, which is safe for
// concurrent use; concurrent Puts form commit groups that share a WAL
// write and, with Sync, one fsync (CommitStats counts them).
func (e *monbanEngine) Put(k, v []byte) error { return e.db.Put(k, v) }

func (e *monbanEngine) Get(k []byte) (bool, error) {
	_, err := e.db.Get(k)
	if errors.Is(err, lsm.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

func (e *monbanEngine) Delete(k []byte) error { return e.db.Delete(k) }

// CommitStats counts every committed write, and the WAL fsyncs commits
// waited for; a Delete the filters elided commits nothing.
func (e *monbanEngine) CommitStats() (commits, walSyncs uint64) {
	s := e.db.Stats()
	return s.Commits, s.WALSyncs
}

// Flush writes the memtable as an L0 table and then waits until background
// work is quiet, so that no engine's later phases pay for an earlier phase's
// compaction debt.
func (e *monbanEngine) Flush() error {
	if err := e.db.Flush(); err != nil {
		return err
	}
	return e.waitQuiet(10 * time.Minute)
}

// waitQuiet polls every millisecond until, for quietPolls polls in a row, no
// flush or compaction ran (the EventListener's count), none was scheduled
// (Stats.CompactionsRunning: on a busy machine a scheduled compaction's
// goroutine can start, and fire CompactionBegin, tens of milliseconds
// later), no memtable was queued and no flush, compaction or
// compaction-read counter in Stats moved, and, at the last of them, the
// directory held no table the tree no longer does. A finished compaction
// may schedule the next one a moment later, hence several quiet polls, as
// in the Pebble adapter. The last check is the Pebble adapter's obsolete-table one: a
// deleter goroutine unlinks a compaction's inputs some 20-100 ms after it
// ends, and without waiting for it the directory size measured after Flush
// counted them (dir-after-fill 154 MiB of which 122 MiB live, at 1M keys).
func (e *monbanEngine) waitQuiet(limit time.Duration) error {
	const quietPolls = 20
	deadline := time.Now().Add(limit)
	progress := func() [9]uint64 {
		s := e.db.Stats()
		c := s.Compactions
		return [9]uint64{s.Flushes, uint64(s.MemtablesQueued), c.Move, c.L0, c.IntraL0, c.Size, c.Rewrite,
			s.CompactionBlocksRead, s.CompactionBytesRead}
	}
	last, quiet := progress(), 0
	for quiet < quietPolls {
		time.Sleep(time.Millisecond)
		now := progress()
		busy := now != last || now[1] > 0 || e.running.Load() > 0 || e.db.Stats().CompactionsRunning > 0
		if !busy && quiet == quietPolls-1 {
			// Listing the directory allocates, and the garbage is this
			// process's, counted in the engine's phase: list it only
			// when every other sign says the engine is done.
			obsolete, err := e.obsoleteTables()
			if err != nil {
				return err
			}
			busy = obsolete
		}
		if busy {
			quiet = 0
		} else {
			quiet++
		}
		last = now
		if err := e.db.Stats().BackgroundError; err != nil {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("monban: background work did not quiesce within %v", limit)
		}
	}
	return nil
}

// obsoleteTables reports whether the directory holds more tables than the
// tree's levels do: tables a compaction replaced that are not yet unlinked.
func (e *monbanEngine) obsoleteTables() (bool, error) {
	onDisk, err := filepath.Glob(filepath.Join(e.dir, "*.sst"))
	if err != nil {
		return false, err
	}
	live := 0
	for _, l := range e.db.Stats().Levels {
		live += l.Files
	}
	return len(onDisk) > live, nil
}

func (e *monbanEngine) Close() error {
	if e.db == nil {
		return nil
	}
	e.sampled.Store(nil)
	err := e.db.Close()
	e.db = nil
	return err
}

// Describe summarizes the tree's shape and write amplification in the same
// terms as the Pebble adapter's: table bytes written by flushes and
// compactions over bytes flushed.
func (e *monbanEngine) Describe() string {
	s := e.db.Stats()
	b := []byte("files/level:")
	for i, l := range s.Levels {
		if l.Files > 0 {
			b = fmt.Appendf(b, " L%d=%d", i, l.Files)
		}
	}
	b = fmt.Appendf(b, "; filter negatives=%d false-pos=%d; deletes elided=%d", s.Total.FilterNegatives,
		s.Total.FilterFalsePositives, s.DeletesElided)
	b = fmt.Appendf(b, "; WA(tables/flushed)=%.2f; slowdowns=%d stalls=%d", s.WriteAmplification(), s.Slowdowns, s.Stalls)
	b = fmt.Appendf(b, "; meta pinned=%.1fMiB paged-tables=%d paged-filter-tables=%d meta-reads=%d meta-cache-hits=%d",
		float64(s.MetaPinnedBytes)/(1<<20), s.MetaPagedTables, s.MetaPagedFilterTables, s.MetaBlocksRead, s.MetaCacheHits)
	return string(b)
}

func (e *monbanEngine) L0Tables() int { return e.db.Stats().Levels[0].Files }

func (e *monbanEngine) Scan(start []byte, n int) (int, error) {
	it := e.db.NewIter(nil)
	return visit(it, it.SeekGE(start), n)
}

// ScanPrefix iterates with IterOptions.Prefix, which leaves out every
// memtable and table whose filter rules the prefix out (Options.Split).
func (e *monbanEngine) ScanPrefix(prefix []byte) (int, error) {
	it := e.db.NewIter(&lsm.IterOptions{Prefix: prefix})
	return visit(it, it.First(), math.MaxInt)
}

// visit touches the value of up to n entries of it, from its position (ok:
// valid) on, closes it and returns how many it visited.
func visit(it *lsm.Iter, ok bool, n int) (int, error) {
	seen := 0
	for ; ok && seen < n; ok = it.Next() {
		_ = it.Value()
		seen++
	}
	if err := it.Err(); err != nil {
		it.Close()
		return seen, err
	}
	return seen, it.Close()
}

func (e *monbanEngine) PrefixHow() string { return "IterOptions.Prefix, Options.Split" }

// ScanRange iterates with both bounds set, which asks each table's range
// filter (Options.RangeFilter) before its index and leaves out the tables
// that rule the range out.
func (e *monbanEngine) ScanRange(lower, upper []byte) (int, error) {
	it := e.db.NewIter(&lsm.IterOptions{LowerBound: lower, UpperBound: upper})
	return visit(it, it.First(), math.MaxInt)
}

func (e *monbanEngine) RangeHow() string { return "LowerBound/UpperBound, Options.RangeFilter" }

// DeleteRange is lsm.DB.DeleteRange: one range tombstone, one WAL record.
func (e *monbanEngine) DeleteRange(start, end []byte) error { return e.db.DeleteRange(start, end) }

func (e *monbanEngine) RangeDeleteHow() string { return "" }

// MemParts names what the DB holds off the Go heap (Stats.OffHeapMapped:
// pinned metadata, memtable arenas, block buffers), the part of it that is
// pinned index and filter blocks, and the memtables' arenas at most (the
// mutable one and those queued for flush, each of the configured size).
func (e *monbanEngine) MemParts() []memPart {
	db := e.sampled.Load()
	if db == nil {
		return nil
	}
	s := db.Stats()
	return []memPart{{"offheap", s.OffHeapMapped}, {"pinned", s.MetaPinnedBytes},
		{"memtables", int64(1+s.MemtablesQueued) * e.memtableBytes}}
}
