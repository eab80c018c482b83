package lsm

import (
	"errors"
	"fmt"
	"log/slog"
	"math"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/vfs"
)

// Options configures a DB. The zero value (and a nil *Options) selects the
// defaults documented on each field.
type Options struct {
	// MemtableSize is the approximate size in bytes at which the active
	// memtable becomes immutable and is queued for flush. Default 4 MiB.
	MemtableSize int64

	// BloomBitsPerKey sizes the Bloom filter block written into every
	// SSTable: 0 selects the default of 10 bits per key (about 1% false
	// positives); a negative value writes no filters, so that every read of
	// an absent key inside a table's key range costs an index and a data
	// block lookup. The value in force when a table is written is recorded in
	// that table; changing it affects new tables only.
	BloomBitsPerKey int

	// FilterSizing spreads the filter memory over the tables:
	// FilterSizingUniform (the default) gives each BloomBitsPerKey;
	// FilterSizingPerLevel spends the same total, BloomBitsPerKey bits per
	// entry of the tree, unevenly, for fewer false positives per read of a
	// missing key (see its doc).
	FilterSizing FilterSizing

	// Split, if not nil, cuts keys into prefixes (filter.Split, whose
	// contract it must keep: Len deterministic and monotone in the key
	// order), and every memtable and table written from then on holds
	// each key's prefix in its filter beside the key, so that an iterator
	// bounded to a prefix (IterOptions.Prefix) leaves out the memtables
	// and tables whose filter rules the prefix out. A table records the
	// Split's Name, and only a table of the same Name is ever skipped: a
	// DB reopened with another Split, or none, reads the tables built
	// otherwise as "maybe" until compactions rewrite them. Nil (the
	// default): no prefix filtering, and IterOptions.Prefix is refused.
	Split *filter.Split

	// RangeFilter, when its BitsPerKey is not 0, puts a range filter in
	// every table written from then on (filter.Grafite over the keys'
	// first 8 bytes, BitsPerKey bits per key, tuned for ranges of
	// RangeLen keys, default 32), and an iterator with both LowerBound
	// and UpperBound set asks each table's range filter before reading
	// its index, skipping the tables that hold no key in the bounds
	// (Stats.RangeProbes, RangeSkips). It separates keys only by their
	// first 8 bytes: it suits fixed-width big-endian integer or timestamp
	// keys, and answers "maybe" for ranges of keys that share 8 bytes or
	// more (false-positive rates by bits per key: filter/README.md,
	// "Ranges"). Tables written without it, or before, are never skipped.
	// BitsPerKey is 3 to 40 (filter.GrafiteMinBitsPerKey,
	// GrafiteMaxBitsPerKey); outside that Open fails with
	// ErrInvalidOptions. The zero value (the default): no range
	// filters.
	RangeFilter filter.GrafiteOptions

	// BlockSize is the target size of an SSTable data block before
	// compression. Default 4096.
	BlockSize int

	// Compression compresses SSTable data blocks: SnappyCompression (the
	// default, as in LevelDB and Pebble) or NoCompression. A block is kept
	// compressed only where snappy saves at least 1/8 of it, so random
	// values cost a compression attempt per block and nothing on disk or in
	// reads. Tables record it per block, so a DB may mix both.
	Compression Compression

	// BlockCacheSize is the byte capacity of the block cache shared by all
	// tables. Default 8 MiB; negative disables the cache: every data block,
	// and every index partition and filter page of a table PinnedMetaLimit
	// leaves paged, is then read from the file at each use.
	BlockCacheSize int64

	// MaxOpenFiles bounds the number of SSTables kept open, each with its
	// file and index. A table's filter, once loaded, stays in memory for as
	// long as the table is live, even after the table cache closes it
	// (counted in PinnedMetaLimit while it is):
	// Gets and the absent-key proofs of deletes and merges ask it first,
	// without a lock, and a Get reopens the table only when the filter
	// admits the key. A table the cache closed to make room leaves its
	// verified index, filter and properties in the block cache, charged to
	// its budget, and while they are there a reopen reads only the table's
	// tail (docs/design.md, "The table cache and closed tables"). Open
	// checks every table's identity but opens only those holding range
	// tombstones; after it returns, a background load opens the first
	// MaxOpenFiles in level order. A table not opened yet has no filter
	// in memory: the first Get that reaches it opens it, and until then
	// the proofs count it as "maybe". Default 1000. An open table costs a file descriptor and its
	// index and filter (what they weigh per key: docs/design.md, "Memory").
	//
	// It bounds the table cache, not the process's descriptors: a running
	// compaction opens each of its input tables once more, for reads of
	// its own that skip the block cache, and a table the cache closed
	// stays open while an iterator still reads it. Leave room for those
	// (up to MaxConcurrentCompactions compactions, and every open
	// iterator's tables) under the process's limit (ulimit -n): a
	// compaction that cannot open a file fails, and makes the DB
	// read-only as any failed compaction does.
	MaxOpenFiles int

	// PinnedMetaLimit caps the bytes of table indexes and filters held in
	// memory outside the block cache (Stats.MetaPinnedBytes). A table whose
	// index and filter fit in what is left pins them for as long as it is
	// open, the last level's only within what the other levels' open
	// tables leave (an upper level's filter is probed far more often per
	// byte). One that does not is read paged: its index a 4 KiB partition
	// at a time and its filter a 4 KiB page at a time, through the block
	// cache, where they outrank data blocks in up to half of it
	// (Stats.MetaPagedTables), or from the file at every use when
	// BlockCacheSize disables the cache; a last-level table that cannot pin both
	// pins its index alone if that fits and pages only its filter
	// (Stats.MetaPagedFilterTables). A Get of a paged table costs a block-cache
	// lookup or a page read for its filter and for its index, where a
	// pinned one costs neither, and the delete proofs ask a paged filter
	// only about pages the cache holds. A pinned table's bytes count until
	// their memory is freed: the filter kept for a table the table cache
	// closed (MaxOpenFiles) counts until the table is deleted.
	//
	// Default 20 MiB (DefaultPinnedMetaLimit); NoPinnedMetaLimit pins every
	// open table's; a negative limit pins none (the memory of the block
	// cache and memtables alone, as Pebble's). Tables written before
	// format version 2 are always pinned. How many keys the default holds
	// and what a smaller limit costs in reads: docs/design.md, "Pinned or
	// paged".
	PinnedMetaLimit int64

	// Sync makes every commit fsync the WAL before it is acknowledged, so
	// acknowledged writes survive a machine crash. Without it they survive a
	// process crash only (but see BufferedWAL). Default false. It is the
	// default of the writes that do not say otherwise: Put, Delete and
	// Write take a WriteOptions (lsm.Sync, lsm.NoSync) for one write.
	Sync bool

	// BufferedWAL lets a commit return before its WAL record reaches the
	// OS: the record waits in memory for a background writer, which hands
	// what has gathered to the file in one write(2) while the next commits
	// go on (wal.BufferedWriter; Pebble's default). A process crash then
	// keeps a prefix of the commits (never a torn batch, never a later
	// commit without the earlier ones) that can stop short of the last
	// commits acknowledged; so does a background write that fails, which
	// turns the DB read-only (Stats.BackgroundError): the commits it held
	// are in the memtable until Close, and not in the WAL a reopen
	// replays. Close, a memtable rotation and Sync write
	// everything out. With Sync, each commit still waits for its fsync and
	// BufferedWAL changes nothing. Default false: an acknowledged commit
	// has reached the OS.
	BufferedWAL bool

	// KeepAbsentDeletes turns off the absent-key proof for Delete. By
	// default a Delete of a key that no filter on its path admits writes
	// nothing (no WAL record, no tombstone, counted in Stats.DeletesElided),
	// as long as such proofs keep succeeding often enough to pay for their
	// probes (proof.go; Stats.DeleteProofsSkipped counts the deletes
	// that did not ask). Set it when every delete must leave a WAL record. Flushes and
	// compactions still drop tombstones that hide nothing.
	KeepAbsentDeletes bool

	// IgnoreFilters makes reads and absent-key proofs behave as if no
	// filter existed: memtables keep no quotient filter, Get searches every
	// memtable tree and reads an index and data block from every table whose
	// key range covers the key, no Delete is elided, and flushes and
	// compactions drop a tombstone only where no deeper table's key range
	// covers its key (never on a filter's word). Table filters are still
	// written. It exists to measure, on the same data, what the filters save
	// (kvbench's comparison runs).
	IgnoreFilters bool

	// FilterScope chooses the filters a point lookup asks first: PerTable
	// (the default), one Bloom filter per L0 table and per level, or
	// TreeWide (experimental), one filter over the keys of every table
	// that names the levels that may hold a key, so that a lookup of an
	// absent key costs one probe at any depth (docs/design.md, "Tree-wide
	// filter"). With TreeWide every table written gets a key-hash block
	// (about 3 bytes a key; docs/format.md), Open builds the filter from
	// those in the background, asking the per-table filters meanwhile,
	// and a table written without one keeps its level always asked. The
	// per-table filters stay in the tables and are asked for the levels
	// the tree-wide filter names, so a DB can switch back at any Open.
	FilterScope FilterScope

	// L0CompactionThreshold is the number of L0 tables that triggers a
	// compaction of L0 into the base level, once L0 holds at least half
	// the base level's bytes (every one of which the compaction rewrites);
	// until then L0 grows to L0SlowdownWritesThreshold-2 tables first
	// (compaction.Options.Score). Default 4. An unset L0 threshold
	// defaults within the ones set: setting any one alone stays valid.
	L0CompactionThreshold int

	// L0SlowdownWritesThreshold is the number of L0 tables at which each
	// commit is delayed by a millisecond, handing the disk and a core to
	// compaction before L0 reaches the stop threshold. Default 20.
	//
	// The defaults are RocksDB's (20 and 36), not LevelDB's (8 and 12):
	// an L0 table costs a read one filter probe, not a disk read, unless
	// the filter errs, so L0 can run deeper here, and an L0 compaction
	// that waits for more tables rewrites fewer bytes per byte flushed
	// (docs/benchmarks.md, "L0 thresholds", has the measured fill).
	L0SlowdownWritesThreshold int

	// L0StopWritesThreshold is the number of L0 tables at which writes wait
	// for compaction. Default 36.
	L0StopWritesThreshold int

	// LBaseMaxBytes is the size target of the base level, the level L0
	// compacts into. Level targets are dynamic: the last level's is its
	// actual size, and the base level is the first, going up, at which
	// dividing that size by LevelMultiplier once per level gets to
	// LBaseMaxBytes or below; its target is LBaseMaxBytes, the levels
	// between grow from it to the last by one ratio, and the levels above
	// it stay empty (compaction.Options.Targets). Default 64 MiB.
	LBaseMaxBytes int64

	// LevelMultiplier is the size ratio between adjacent levels. Default 10.
	LevelMultiplier int

	// TargetFileSize is the size at which a compaction into the base level
	// splits its output tables. Default 4 MiB.
	TargetFileSize int64

	// TargetFileSizeMultiplier multiplies TargetFileSize for each level
	// below the base level (compaction.Options.FileSize), so the deep
	// levels, where the data is, hold fewer, larger tables: with the
	// default 2 (Pebble's doubling) and the base at L4, L6 tables are
	// 4 × TargetFileSize. 1 makes every level's tables one size.
	TargetFileSizeMultiplier int

	// MaxConcurrentCompactions is how many background compactions may run
	// at once, each on inputs no other holds and, into the same level, on
	// a key range no other writes (compaction.Conflicts). Default 2: on a
	// 2-core machine an L0 compaction can run beside a deeper one, so L0
	// drains while the levels below it are still rebalancing.
	MaxConcurrentCompactions int

	// ReadOnly opens an existing DB without writing anything to its
	// directory: no new manifest, WAL or table, no file deleted; the WALs'
	// contents are replayed into memory only. Every write returns
	// ErrReadOnly. It still takes the directory lock, so it fails with
	// ErrLocked while another DB has the directory open — on a read-only
	// descriptor of LOCK where the process may not write it, so a DB the
	// process can read but not write opens (vfs, invariant 3). A
	// directory without a LOCK file (a copy that left it out) opens
	// unlocked, since locking would create one: nothing then keeps a
	// writer out meanwhile. For inspecting a DB (kvbench tree, explain) or
	// serving a copy.
	ReadOnly bool

	// ErrorIfExists makes Open fail, with an error wrapping fs.ErrExist,
	// if dir already holds a DB; ErrorIfNotExists, with fs.ErrNotExist, if
	// it holds none (a missing directory included), instead of creating
	// one. Either way the refused Open leaves the directory as it was.
	// LevelDB's and Pebble's names.
	ErrorIfExists, ErrorIfNotExists bool

	// FS is the file system the DB runs on. Default: the operating system's.
	// Tests use vfs.NewMem or vfs.NewFault.
	FS vfs.FS

	// Logger receives rare, noteworthy events: a torn tail dropped at
	// recovery, a file that could not be removed, a background error.
	// Default: discard.
	Logger *slog.Logger

	// EventListener is told of flushes, compactions, write stalls, files
	// created and deleted, and a background error. Default: none.
	EventListener *EventListener
}

// Compression selects how SSTable data blocks are compressed.
type Compression int

const (
	// DefaultCompression is the zero value: SnappyCompression.
	DefaultCompression Compression = iota
	// NoCompression stores every block as is.
	NoCompression
	// SnappyCompression compresses each data block with snappy.
	SnappyCompression
)

// DefaultPinnedMetaLimit is Options.PinnedMetaLimit's default, and
// NoPinnedMetaLimit the limit that pins every open table's index and
// filter.
const (
	DefaultPinnedMetaLimit = 20 << 20
	NoPinnedMetaLimit      = math.MaxInt64
)

// l0Defaults sets the unset (zero) L0 thresholds of compact <= slowdown <=
// stop to their defaults (4, 20, 36), each kept within the ones the user
// set, so that setting any one alone (a stop at 3, a compaction at 25)
// stays valid; two set out of order are the user's, for validate.
func l0Defaults(compact, slowdown, stop int) (int, int, int) {
	if compact == 0 {
		compact = 4
		for _, above := range []int{slowdown, stop} {
			if above > 0 {
				compact = min(compact, above)
			}
		}
	}
	if slowdown == 0 {
		slowdown = max(20, compact)
		if stop > 0 {
			slowdown = min(slowdown, stop)
		}
	}
	if stop == 0 {
		stop = max(36, slowdown)
	}
	return compact, slowdown, stop
}

// withDefaults returns a copy of o with every zero field set to its default.
func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	setDefault(&r.MemtableSize, 4<<20)
	setDefault(&r.BloomBitsPerKey, 10)
	setDefault(&r.BlockSize, 4096)
	setDefault(&r.BlockCacheSize, 8<<20)
	setDefault(&r.MaxOpenFiles, 1000)
	setDefault(&r.PinnedMetaLimit, DefaultPinnedMetaLimit)
	r.L0CompactionThreshold, r.L0SlowdownWritesThreshold, r.L0StopWritesThreshold = l0Defaults(
		r.L0CompactionThreshold, r.L0SlowdownWritesThreshold, r.L0StopWritesThreshold)
	setDefault(&r.LBaseMaxBytes, 64<<20)
	setDefault(&r.LevelMultiplier, 10)
	setDefault(&r.TargetFileSize, 4<<20)
	setDefault(&r.TargetFileSizeMultiplier, 2)
	setDefault(&r.MaxConcurrentCompactions, 2)
	if r.Compression == DefaultCompression {
		r.Compression = SnappyCompression
	}
	if r.FS == nil {
		r.FS = vfs.Default
	}
	if r.Logger == nil {
		r.Logger = slog.New(slog.DiscardHandler)
	}
	r.EventListener = r.EventListener.withDefaults()
	return r
}

func setDefault[T int | int64](p *T, def T) {
	if *p == 0 {
		*p = def
	}
}

// ErrInvalidOptions is wrapped by Open's error for options that cannot work
// (a negative size, a level multiplier below 2, thresholds out of order),
// and by an Iter's Err for IterOptions that cannot (a Prefix without
// Options.Split).
var ErrInvalidOptions = errors.New("monban: invalid options")

// validate checks options after defaults are applied.
func (o *Options) validate() error {
	for _, f := range []struct {
		name string
		v    int64
	}{
		{"MemtableSize", o.MemtableSize}, {"BlockSize", int64(o.BlockSize)}, {"MaxOpenFiles", int64(o.MaxOpenFiles)},
		{"LBaseMaxBytes", o.LBaseMaxBytes}, {"TargetFileSize", o.TargetFileSize},
		{"TargetFileSizeMultiplier", int64(o.TargetFileSizeMultiplier)},
		{"MaxConcurrentCompactions", int64(o.MaxConcurrentCompactions)},
	} {
		if f.v < 0 {
			return fmt.Errorf("%w: %s %d is negative (0 selects the default)", ErrInvalidOptions, f.name, f.v)
		}
	}
	switch {
	case o.Compression != NoCompression && o.Compression != SnappyCompression:
		return fmt.Errorf("%w: Compression %d is none of NoCompression, SnappyCompression", ErrInvalidOptions, o.Compression)
	case o.FilterSizing != FilterSizingUniform && o.FilterSizing != FilterSizingPerLevel:
		return fmt.Errorf("%w: FilterSizing %d is neither FilterSizingUniform nor FilterSizingPerLevel", ErrInvalidOptions, o.FilterSizing)
	case o.Split != nil && (o.Split.Name == "" || o.Split.Len == nil):
		return fmt.Errorf("%w: Split needs a Name and a Len", ErrInvalidOptions)
	case o.RangeFilter.BitsPerKey != 0 &&
		(o.RangeFilter.BitsPerKey < filter.GrafiteMinBitsPerKey || o.RangeFilter.BitsPerKey > filter.GrafiteMaxBitsPerKey):
		return fmt.Errorf("%w: RangeFilter.BitsPerKey %d outside %d..%d", ErrInvalidOptions,
			o.RangeFilter.BitsPerKey, filter.GrafiteMinBitsPerKey, filter.GrafiteMaxBitsPerKey)
	case o.BloomBitsPerKey > 64:
		return fmt.Errorf("%w: BloomBitsPerKey %d above 64", ErrInvalidOptions, o.BloomBitsPerKey)
	case o.LevelMultiplier < 2:
		return fmt.Errorf("%w: LevelMultiplier %d below 2", ErrInvalidOptions, o.LevelMultiplier)
	case o.L0CompactionThreshold < 1 ||
		o.L0SlowdownWritesThreshold < o.L0CompactionThreshold ||
		o.L0StopWritesThreshold < o.L0SlowdownWritesThreshold:
		return fmt.Errorf("%w: need 1 <= L0CompactionThreshold (%d) <= L0SlowdownWritesThreshold (%d) <= L0StopWritesThreshold (%d)",
			ErrInvalidOptions, o.L0CompactionThreshold, o.L0SlowdownWritesThreshold, o.L0StopWritesThreshold)
	case o.FilterScope != PerTable && o.FilterScope != TreeWide:
		return fmt.Errorf("%w: FilterScope %d is neither PerTable nor TreeWide", ErrInvalidOptions, o.FilterScope)
	}
	return nil
}

// bloomBits returns the bits per key to write, 0 meaning no filter.
func (o *Options) bloomBits() int { return max(o.BloomBitsPerKey, 0) }

// FilterScope is Options.FilterScope.
type FilterScope uint8

const (
	// PerTable asks each table's own filter.
	PerTable FilterScope = iota
	// TreeWide asks one filter over the whole tree first (experimental).
	TreeWide
)
