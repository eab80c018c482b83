package lsm

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/monbandb/monban/compaction"
	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/cache"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/internal/offheap"
	"github.com/monbandb/monban/memtable"
	"github.com/monbandb/monban/sstable"
)

// NumLevels is the number of levels of the tree: L0 and L1…L6.
const NumLevels = manifest.NumLevels

// LevelStats describes one level: its shape and what reads did there.
type LevelStats struct {
	Files int
	Bytes uint64
	// Target is the level's size target in bytes (0 above the base level,
	// and for L0, which is bounded by table count); Score how far over it
	// the level is — compaction picks the highest score of at least 1.
	Target int64
	Score  float64

	// FilterProbes counts Get lookups that asked a table's Bloom filter;
	// FilterNegatives those it answered "absent" — each a data-block read
	// saved; FilterFalsePositives those it answered "maybe" for a key the
	// table does not hold — each a wasted read.
	FilterProbes, FilterNegatives, FilterFalsePositives uint64
	// CacheHits and BlocksRead count data blocks Get found in the block
	// cache and read from files; BytesRead the bytes of the latter.
	CacheHits, BlocksRead, BytesRead uint64

	// TableBytesIn counts the table bytes compactions took from this level
	// as inputs; TableBytesWritten the bytes of tables written into it (by
	// flushes and intra-L0 compactions for L0, by compactions below).
	TableBytesIn, TableBytesWritten uint64

	// RangeDels counts the range-tombstone spans in the level's tables:
	// fragments, each with its own set of sequence numbers, so two
	// overlapping DeleteRanges make three where a snapshot between them
	// keeps both, and two where none does (the newer one's overlap hides
	// the older's, and a flush drops it);
	// RangeDelBytes the bytes of the levels below that they were
	// estimated to cover, which the picker adds to the level's bytes in
	// its score, so that a DeleteRange's space comes back without a
	// manual compaction (docs/compaction.md, "Compensated sizes"). A
	// table whose reader has not been opened since Open (past
	// Options.MaxOpenFiles) is left out of both until one is.
	RangeDels     int
	RangeDelBytes uint64

	// FilterBytes is the size of the Bloom filters of the level's open
	// tables, which live in memory unless the table is paged
	// (Options.PinnedMetaLimit; Stats.MetaPinnedBytes); FilterBitsPerKey their density, over
	// those tables' entries (a table without a filter counts 0); TheoryFPR
	// the false-positive rate they promise one probe, to set beside FPR:
	// in L0 the mean over its tables (a read probes every one), deeper the
	// mean over entries (a read probes the table covering its key). Tables
	// the table cache has not opened are left out of all three, and of
	// FilterEntries, the entries of the tables they count.
	FilterBytes, FilterEntries  uint64
	FilterBitsPerKey, TheoryFPR float64
	// RangeFilterBytes is the size of the range filters
	// (Options.RangeFilter) of the level's open tables, which live in
	// memory pinned or paged.
	RangeFilterBytes uint64
}

// FPR returns the measured false-positive rate of the level's filters:
// false positives among the probes whose answer was not a true positive.
func (s LevelStats) FPR() float64 {
	if n := s.FilterNegatives + s.FilterFalsePositives; n > 0 {
		return float64(s.FilterFalsePositives) / float64(n)
	}
	return 0
}

// Stats is a snapshot of a DB's counters since Open.
type Stats struct {
	// BackgroundError is the sticky error of a failed flush, compaction or
	// WAL write, nil while there is none. Once set, the DB is read-only:
	// every write returns it (elided deletes too) until it is reopened.
	BackgroundError error

	Levels [NumLevels]LevelStats
	// Total sums Levels (FilterBitsPerKey is over all entries; TheoryFPR
	// is 0: see ExpectedFalsePositives).
	Total LevelStats
	// ExpectedFalsePositives is the data blocks the filters promise a Get
	// of a key no table holds will read: the sum over L0 tables and deeper
	// levels of the rate of the filter it probes there. It is what
	// FilterSizingPerLevel makes as small as the memory allows.
	ExpectedFalsePositives float64

	// MemtableFilterNegatives counts memtable probes that a memtable's own
	// quotient filter answered "absent" (no tree search);
	// ImmutableFilterNegatives the Gets that the combined filter of the
	// immutable memtables turned away in one probe.
	MemtableFilterNegatives, ImmutableFilterNegatives uint64
	// MemtableFalsePositives counts memtable searches that the filter
	// allowed and the tree did not satisfy.
	MemtableFalsePositives uint64

	// TreeFilterProbes counts the lookups the tree-wide filter answered
	// (Options.FilterScope TreeWide, once built): the keys of Get and
	// MultiGet, and the absent-key proofs of Delete and of the
	// tombstones flushes and compactions drop. TreeFilterNegatives
	// those for which it named no level, so that no table filter was
	// asked; TreeFilterLines the 64-byte lines of its table those
	// lookups read (the cache lines they touched: one or two each in
	// the common case, where a table filter's probe reads one line per
	// table); TreeFilterBytes is its memory, outside the Go heap, and
	// TreeFilterEntries the keys it holds (a key in two tables counts
	// twice).
	TreeFilterProbes, TreeFilterNegatives, TreeFilterLines uint64
	TreeFilterBytes, TreeFilterEntries                     uint64

	// PrefixProbes counts the memtables and tables whose filter an
	// iterator bounded to a prefix asked (IterOptions.Prefix; none under
	// Options.IgnoreFilters); PrefixSkips those it left out because the
	// filter ruled the prefix out: a memtable not merged, a table whose
	// index and data blocks were not read.
	PrefixProbes, PrefixSkips uint64
	// RangeProbes counts the tables whose range filter an iterator with
	// both bounds set asked (Options.RangeFilter; none under
	// Options.IgnoreFilters); RangeSkips those whose filter ruled the
	// bounds out, so that their index and data blocks were not read.
	RangeProbes, RangeSkips uint64

	// DeletesElided counts Deletes that the filters proved unnecessary and
	// that wrote nothing; WALBytesSaved the WAL bytes they did not write.
	DeletesElided, WALBytesSaved uint64
	// DeleteProofsSkipped counts Deletes that wrote their tombstone without
	// asking the filters, because recent proofs had kept failing: the
	// deletes were of keys that exist (lsm/proof.go).
	DeleteProofsSkipped uint64
	// DeleteProofProbes counts in-memory table filter probes made to prove
	// a deleted key absent (delete elision);
	// MergeProofProbes those made by flushes and compactions to prove a
	// tombstone unnecessary.
	DeleteProofProbes, MergeProofProbes uint64

	// WALBytes counts bytes of the commits' records appended to WALs: not
	// their framing, nor the identity record each WAL begins with and the
	// successor record a rotation ends one with (docs/format.md, "Batch").
	WALBytes uint64
	// Commits counts the writes (Put, Delete, Write) committed;
	// WALSyncs the fsyncs of the WAL that commits waited for. Sync
	// writers committed together share one, so WALSyncs/Commits is what
	// group commit saved.
	Commits, WALSyncs uint64
	// Flushes counts memtables flushed, a table written or not (none is
	// when every entry was dropped); FlushedBytes the bytes of the L0
	// tables they wrote; MemtablesQueued is the number of immutable
	// memtables waiting now.
	Flushes, FlushedBytes uint64
	MemtablesQueued       int

	// FlushDrops and CompactionDrops count entries that flushes and
	// compactions did not write, by reason: shadowed versions no snapshot
	// could see, and tombstones that hid nothing (bottom level, or the
	// filters' absent-key proof).
	FlushDrops, CompactionDrops compaction.Drops

	// Compactions counts the compactions begun since Open, by kind.
	Compactions CompactionCounts
	// CompactionBlocksRead and CompactionBytesRead count what compactions
	// read from their input tables — and from nothing else: tombstone
	// elision decides from in-memory filters only.
	CompactionBlocksRead, CompactionBytesRead uint64
	// SpaceReclaimed is the table bytes compactions removed: for each
	// compaction whose outputs are smaller than its inputs, the difference
	// (shadowed versions, dropped tombstones and the keys they deleted,
	// and the per-table overhead of tables merged into fewer); one whose
	// outputs are larger (compressed differently, its blocks cut
	// elsewhere) adds nothing: the counter only grows.
	SpaceReclaimed uint64

	// CompactionsRunning is the number of compactions running now.
	// CompactionDebt estimates the bytes compactions must still write to
	// bring every level within its target: each due level's excess (all of
	// L0 once it is due), times 1 + LevelMultiplier for the bytes of the
	// next level it is merged with.
	CompactionsRunning int
	CompactionDebt     uint64

	// Slowdowns counts the delays of a millisecond because L0 passed
	// Options.L0SlowdownWritesThreshold or two memtables were queued for
	// flush. Stalls counts the waits for flushes or compactions to catch
	// up (three memtables queued, or L0 at Options.L0StopWritesThreshold);
	// StallTime is their total. Each is a commit group's leader's, which
	// the commits queued behind it share: concurrent writers held up
	// together count once.
	Slowdowns uint64
	Stalls    uint64
	StallTime time.Duration

	// OffHeapMapped is the bytes mapped outside the Go heap now, for the
	// open tables' index and filter blocks, those of closed tables the
	// block cache keeps, memtable arenas (internal/offheap), and the block
	// buffers of the block cache and of reads in flight (internal/cache);
	// OffHeapLeaked counts the buffers the collector had to free because
	// their holder never released them, a bug. Both count every DB in the
	// process.
	OffHeapMapped int64
	OffHeapLeaked uint64

	// MetaPinnedBytes is the bytes of index and filter blocks the open
	// tables pin (Options.PinnedMetaLimit), MetaPagedTables the open
	// tables that read both paged instead, and MetaPagedFilterTables the
	// last-level tables that pin their index and read only their filter
	// paged (counted in neither: an index, a fourth of a filter's bytes,
	// saves a read on every Get that finds its key there).
	// MetaCacheHits, MetaBlocksRead and MetaBytesRead count the index
	// partitions and filter pages found in the block cache and read from
	// files by Gets and iterators.
	MetaPinnedBytes                              int64
	MetaPagedTables, MetaPagedFilterTables       int64
	MetaCacheHits, MetaBlocksRead, MetaBytesRead uint64
}

// CompactionCounts counts compactions by kind (compaction.Kind), one
// field per kind.
type CompactionCounts struct {
	// Move counts trivial moves: tables that changed level unrewritten.
	Move uint64
	// L0 counts merges of L0 into the level below it (due, or asked for by
	// CompactRange).
	L0 uint64
	// IntraL0 counts merges of L0 tables into one L0 table, made while an
	// L0 compaction holds the level below.
	IntraL0 uint64
	// Size counts merges of a deeper level into the next (over its size
	// target, or asked for by CompactRange).
	Size uint64
	// Rewrite counts tables rewritten in place to drop what no snapshot
	// needs.
	Rewrite uint64
	// Rest counts merges of L0 into the level below, though not due, once
	// writes stopped (compaction.PickRest).
	Rest uint64
	// DeleteOnly counts delete-only compactions: tables that range
	// tombstones above them deleted wholly, dropped by a manifest edit
	// without being read (compaction.PickDeleteOnly). Their bytes count
	// in SpaceReclaimed, not in CompactionBytesRead nor TableBytesIn.
	DeleteOnly uint64
}

// of returns the field that counts kind k. It panics on a kind it does
// not know: a kind added to package compaction must get a field here, not
// be counted as another.
func (c *CompactionCounts) of(k compaction.Kind) *uint64 {
	fields := [compaction.NumKinds]*uint64{
		compaction.KindMove: &c.Move, compaction.KindL0: &c.L0, compaction.KindIntraL0: &c.IntraL0,
		compaction.KindSize: &c.Size, compaction.KindRewrite: &c.Rewrite, compaction.KindRest: &c.Rest,
		compaction.KindDeleteOnly: &c.DeleteOnly,
	}
	if k < compaction.NumKinds && fields[k] != nil {
		return fields[k]
	}
	panic(fmt.Sprintf("lsm: compaction kind %v has no Stats.Compactions field", k))
}

// WriteAmplification returns the bytes written to tables (by flushes and
// compactions) per byte flushed from memtables (FlushedBytes): 1 for a
// tree that never compacts, growing with each level data is rewritten
// into, an L0 merged into itself included.
func (s Stats) WriteAmplification() float64 {
	if s.FlushedBytes == 0 {
		return 0
	}
	return float64(s.Total.TableBytesWritten) / float64(s.FlushedBytes)
}

type levelCounters struct {
	filterProbes, filterNegatives, filterFalsePositives atomic.Uint64
	cacheHits, blocksRead, bytesRead                    atomic.Uint64
	compactedBytesRead, compactedBytesWritten           atomic.Uint64
}

// count adds what one table lookup did.
func (c *levelCounters) count(l *sstable.Lookup) {
	var n sstable.LookupCounts
	n.Count(l)
	c.add(&n)
}

// add adds counts made without atomics, as MultiGet makes them for a
// whole batch: one atomic add per counter and batch, not per key.
func (c *levelCounters) add(n *sstable.LookupCounts) {
	addNonZero := func(c *atomic.Uint64, n uint64) {
		if n > 0 {
			c.Add(n)
		}
	}
	addNonZero(&c.filterProbes, n.FilterProbes)
	addNonZero(&c.filterNegatives, n.FilterNegatives)
	addNonZero(&c.filterFalsePositives, n.FilterFalsePositives)
	addNonZero(&c.cacheHits, n.CacheHits)
	addNonZero(&c.blocksRead, n.BlocksRead)
	addNonZero(&c.bytesRead, n.BytesRead)
}

type dbStats struct {
	levels [NumLevels]levelCounters

	memtableFilterNegatives, immutableFilterNegatives, memtableFalsePositives atomic.Uint64
	prefixProbes, prefixSkips                                                 atomic.Uint64
	rangeProbes, rangeSkips                                                   atomic.Uint64
	deletesElided, walBytesSaved                                              atomic.Uint64
	deleteProofProbes, mergeProofProbes                                       atomic.Uint64
	walBytes, flushes, flushedBytes                                           atomic.Uint64
	commits, walSyncs                                                         atomic.Uint64
	stalls, stallNanos, slowdowns                                             atomic.Uint64
	flushDrops, compactionDrops                                               [len(compaction.Drops{})]atomic.Uint64
	compactions                                                               [compaction.NumKinds]atomic.Uint64
	compactionsRunning                                                        atomic.Int64
	compactionBlocksRead, compactionBytesRead, spaceReclaimed                 atomic.Uint64
	// l0WasDue is set once Pick has chosen a compaction of L0 since Open
	// or the last manual compaction: a write load made L0 due, and rest
	// compactions may follow (compact.go, restDue). Not a counter: no
	// Stats field reads it.
	l0WasDue atomic.Bool
}

func (s *dbStats) countDrops(d compaction.Drops, flush bool) {
	dst := &s.compactionDrops
	if flush {
		dst = &s.flushDrops
	}
	for i, n := range d {
		dst[i].Add(n)
	}
}

func (s *dbStats) countMemtable(res memtable.Result) {
	switch res {
	case memtable.FilteredOut:
		s.memtableFilterNegatives.Add(1)
	case memtable.Absent:
		s.memtableFalsePositives.Add(1)
	}
}

// Stats returns a snapshot of the DB's counters and shape. After Close the
// counters remain readable; the shape (files, bytes, queued memtables)
// reads zero.
func (d *DB) Stats() Stats {
	var s Stats
	if err := d.stickyErr.Load(); err != nil {
		s.BackgroundError = *err
	}
	rs := d.loadReadState()
	var targets [NumLevels]int64
	if rs != nil {
		defer rs.unref()
		s.MemtablesQueued = len(rs.mem.Immutables())
		targets, _ = d.compactionOptions().Targets(rs.version)
	}
	s.CompactionsRunning = int(d.stats.compactionsRunning.Load())
	var filterEntries, filterBitEntries float64
	for i := range s.Levels {
		l, c := &s.Levels[i], &d.stats.levels[i]
		if rs != nil {
			l.Files = rs.version.NumFiles(i)
			l.Bytes = rs.version.LevelSize(i)
			l.Score = d.compactionOptions().Score(rs.version, i, nil)
			for _, f := range rs.version.Levels[i] {
				spans, _ := f.RangeDels()
				l.RangeDels += spans.Len()
				l.RangeDelBytes += f.RangeDelBytes()
			}
			if i > 0 {
				l.Target = targets[i]
			}
			if excess := int64(l.Bytes) - l.Target; i < NumLevels-1 && l.Score >= 1 && excess > 0 {
				s.CompactionDebt += uint64(excess) * uint64(1+d.opts.LevelMultiplier)
			}
		}
		l.FilterProbes, l.FilterNegatives = c.filterProbes.Load(), c.filterNegatives.Load()
		l.FilterFalsePositives = c.filterFalsePositives.Load()
		l.CacheHits, l.BlocksRead, l.BytesRead = c.cacheHits.Load(), c.blocksRead.Load(), c.bytesRead.Load()
		l.TableBytesIn, l.TableBytesWritten = c.compactedBytesRead.Load(), c.compactedBytesWritten.Load()
		if rs != nil {
			expected, entries := d.levelFilters(rs.version, i, l)
			s.ExpectedFalsePositives += expected
			filterEntries += entries
			filterBitEntries += l.FilterBitsPerKey * entries
		}
		s.Total.add(*l)
	}
	if filterEntries > 0 {
		s.Total.FilterBitsPerKey = filterBitEntries / filterEntries
	}
	s.MemtableFilterNegatives = d.stats.memtableFilterNegatives.Load()
	s.ImmutableFilterNegatives = d.stats.immutableFilterNegatives.Load()
	s.MemtableFalsePositives = d.stats.memtableFalsePositives.Load()
	if d.tree != nil {
		s.TreeFilterProbes, s.TreeFilterNegatives, s.TreeFilterLines = d.tree.probes.Load(), d.tree.negatives.Load(), d.tree.lines.Load()
		s.TreeFilterBytes, s.TreeFilterEntries = d.tree.size()
	}
	s.PrefixProbes, s.PrefixSkips = d.stats.prefixProbes.Load(), d.stats.prefixSkips.Load()
	s.RangeProbes, s.RangeSkips = d.stats.rangeProbes.Load(), d.stats.rangeSkips.Load()
	s.DeletesElided, s.WALBytesSaved = d.stats.deletesElided.Load(), d.stats.walBytesSaved.Load()
	s.DeleteProofProbes, s.MergeProofProbes = d.stats.deleteProofProbes.Load(), d.stats.mergeProofProbes.Load()
	s.DeleteProofsSkipped = d.proofs.skippedProofs()
	s.WALBytes, s.Flushes, s.FlushedBytes = d.stats.walBytes.Load(), d.stats.flushes.Load(), d.stats.flushedBytes.Load()
	s.Commits, s.WALSyncs = d.stats.commits.Load(), d.stats.walSyncs.Load()
	for i := range s.FlushDrops {
		s.FlushDrops[i] = d.stats.flushDrops[i].Load()
		s.CompactionDrops[i] = d.stats.compactionDrops[i].Load()
	}
	for k := range compaction.NumKinds {
		*s.Compactions.of(k) = d.stats.compactions[k].Load()
	}
	s.CompactionBlocksRead, s.CompactionBytesRead = d.stats.compactionBlocksRead.Load(), d.stats.compactionBytesRead.Load()
	s.SpaceReclaimed = d.stats.spaceReclaimed.Load()
	s.Slowdowns = d.stats.slowdowns.Load()
	s.Stalls, s.StallTime = d.stats.stalls.Load(), time.Duration(d.stats.stallNanos.Load())
	oh := offheap.Stats()
	s.OffHeapMapped, s.OffHeapLeaked = oh.Mapped, oh.Leaked+cache.Leaked()
	s.MetaPinnedBytes, s.MetaPagedTables = d.metaBudget.Pinned(), d.metaBudget.PagedTables()
	s.MetaPagedFilterTables = d.metaBudget.PagedFilterTables()
	s.MetaCacheHits, s.MetaBlocksRead, s.MetaBytesRead = d.metaBudget.MetaReads()
	return s
}

// levelFilters sets l's filter figures from the open tables of v's level
// and returns the false positives a read of a missing key expects there,
// and the entries of the tables it counted.
func (d *DB) levelFilters(v *manifest.Version, level int, l *LevelStats) (expected, entries float64) {
	var tables int
	var bitEntries, fpSum, fpEntries float64
	for _, f := range v.Levels[level] {
		r, release, ok := d.tables.Peek(f.FileNum)
		if !ok {
			continue
		}
		p := *r.Properties()
		release()
		bits := p.FilterBitsPerKey
		if p.FilterLayout == "" {
			bits = 0
		}
		fp := theoryFPR(bits)
		n := float64(p.NumEntries)
		tables++
		l.FilterBytes += p.FilterBytes
		l.RangeFilterBytes += p.RangeFilterBytes
		entries += n
		bitEntries += bits * n
		fpSum += fp
		fpEntries += fp * n
	}
	if tables == 0 || entries == 0 {
		return 0, 0
	}
	l.FilterEntries = uint64(entries)
	l.FilterBitsPerKey = bitEntries / entries
	if level == 0 {
		l.TheoryFPR = fpSum / float64(tables)
		return fpSum, entries
	}
	l.TheoryFPR = fpEntries / entries
	return l.TheoryFPR, entries
}

// theoryFPR is the false-positive rate of a table filter of bitsPerKey
// (filter.ExpectedFalsePositives), memoized for the process: the Poisson sum
// behind it costs microseconds, Stats asks it for every open table, and
// tables share few densities (per-level sizing records them to the
// thousandth of a bit).
func theoryFPR(bitsPerKey float64) float64 {
	if fp, ok := theoryFPRs.Load(bitsPerKey); ok {
		return fp.(float64)
	}
	fp := filter.ExpectedFalsePositives([]float64{bitsPerKey})
	theoryFPRs.Store(bitsPerKey, fp)
	return fp
}

var theoryFPRs sync.Map // float64 bits per key -> float64 FPR

func (s *LevelStats) add(o LevelStats) {
	s.Files += o.Files
	s.Bytes += o.Bytes
	s.FilterProbes += o.FilterProbes
	s.FilterNegatives += o.FilterNegatives
	s.FilterFalsePositives += o.FilterFalsePositives
	s.CacheHits += o.CacheHits
	s.BlocksRead += o.BlocksRead
	s.BytesRead += o.BytesRead
	s.TableBytesIn += o.TableBytesIn
	s.TableBytesWritten += o.TableBytesWritten
	s.RangeDels += o.RangeDels
	s.RangeDelBytes += o.RangeDelBytes
	s.FilterBytes += o.FilterBytes
	s.FilterEntries += o.FilterEntries
	s.RangeFilterBytes += o.RangeFilterBytes
}
