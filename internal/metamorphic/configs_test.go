package metamorphic

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/lsm"
	"github.com/monbandb/monban/vfs"
)

// config is a named set of options. None may change what a read returns.
type config struct {
	name string
	opts lsm.Options
	// splits, if not empty, replaces opts.Split at each Open in turn, the
	// first Open included: tables written under one Split are read under
	// the next.
	splits []*filter.Split
	// wrapFS, if set, wraps the DB's in-memory file system.
	wrapFS func(vfs.FS) vfs.FS
}

// Most configurations shrink the memtable as well, so that the option they
// are about meets many tables rather than one memtable.
const smallMem = 16 << 10

// fixedConfigs are run for every seed. Snappy is the default, so every
// configuration but no-compression compresses.
var fixedConfigs = []config{
	{name: "default", opts: lsm.Options{}},
	{name: "memtable-4k", opts: lsm.Options{MemtableSize: 4 << 10}},
	{name: "no-filters", opts: lsm.Options{MemtableSize: smallMem, BloomBitsPerKey: -1}},
	{name: "filters-1bit", opts: lsm.Options{MemtableSize: smallMem, BloomBitsPerKey: 1}},
	{name: "ignore-filters", opts: lsm.Options{MemtableSize: smallMem, IgnoreFilters: true}},
	{name: "cache-1k", opts: lsm.Options{MemtableSize: smallMem, BlockCacheSize: 1 << 10, BlockSize: 512}},
	{name: "cache-off", opts: lsm.Options{MemtableSize: smallMem, BlockCacheSize: -1}},
	{name: "open-files-1", opts: lsm.Options{MemtableSize: 8 << 10, MaxOpenFiles: 1}},
	{name: "keep-absent-deletes", opts: lsm.Options{MemtableSize: smallMem, KeepAbsentDeletes: true}},
	{name: "sync", opts: lsm.Options{MemtableSize: smallMem, Sync: true}},
	{name: "buffered-wal", opts: lsm.Options{MemtableSize: smallMem, BufferedWAL: true}},
	// Files that are no vfs.Mapper (a FaultFS injecting nothing): every
	// WAL record goes through Write, and nothing maps or cuts a file.
	{name: "no-mapper", opts: lsm.Options{MemtableSize: smallMem}, wrapFS: func(fs vfs.FS) vfs.FS { return vfs.NewFault(fs) }},
	{name: "small-levels", opts: lsm.Options{
		MemtableSize: 4 << 10, LBaseMaxBytes: 8 << 10, LevelMultiplier: 2,
		TargetFileSize: 2 << 10, L0CompactionThreshold: 2,
	}},
	{name: "blocks-64", opts: lsm.Options{MemtableSize: 8 << 10, BlockSize: 64}},
	{name: "no-compression", opts: lsm.Options{MemtableSize: smallMem, Compression: lsm.NoCompression}},
	{name: "per-level-filters", opts: lsm.Options{
		MemtableSize: 4 << 10, LBaseMaxBytes: 8 << 10, LevelMultiplier: 2,
		TargetFileSize: 2 << 10, L0CompactionThreshold: 2, FilterSizing: lsm.FilterSizingPerLevel, BloomBitsPerKey: 4,
	}},
	{name: "one-compaction", opts: lsm.Options{MemtableSize: smallMem, L0CompactionThreshold: 2, MaxConcurrentCompactions: 1}},
	{name: "one-file-size", opts: lsm.Options{
		MemtableSize: 4 << 10, LBaseMaxBytes: 8 << 10, LevelMultiplier: 2,
		TargetFileSize: 2 << 10, TargetFileSizeMultiplier: 1, L0CompactionThreshold: 2,
	}},
	// Every table read paged: index partitions and filter pages through a
	// small block cache that evicts them.
	{name: "paged-meta", opts: lsm.Options{MemtableSize: 4 << 10, BlockSize: 64, BlockCacheSize: 16 << 10, PinnedMetaLimit: -1}},
	// Paged without a block cache: every index partition and filter page
	// read from the file at each use.
	{name: "paged-no-cache", opts: lsm.Options{MemtableSize: 4 << 10, BlockSize: 64, BlockCacheSize: -1, PinnedMetaLimit: -1}},
	// Room for a few tables' meta: some pinned, the rest paged.
	{name: "meta-limit", opts: lsm.Options{MemtableSize: 4 << 10, BlockSize: 256, TargetFileSize: 2 << 10, PinnedMetaLimit: 4 << 10}},
	{name: "four-compactions", opts: lsm.Options{
		MemtableSize: 4 << 10, LBaseMaxBytes: 8 << 10, LevelMultiplier: 2,
		TargetFileSize: 1 << 10, L0CompactionThreshold: 2, MaxConcurrentCompactions: 4,
	}},
	// Prefixes in every filter beside the keys: no Get, proof or bound
	// iterator may answer otherwise, and prefix iterators leave out the
	// memtables and tables whose filters rule their prefix out. The
	// configurations without a Split answer prefix iterators by bounds
	// (runner.newIter), so what the filters skip is checked against what
	// a plain iterator reads.
	{name: "split", opts: lsm.Options{MemtableSize: smallMem, Split: firstByte}},
	// Many small tables, their filters read page by page through a block
	// cache that evicts them: a prefix probe may read a filter page.
	{name: "split-paged-meta", opts: lsm.Options{
		MemtableSize: 4 << 10, LBaseMaxBytes: 8 << 10, LevelMultiplier: 2, TargetFileSize: 2 << 10,
		L0CompactionThreshold: 2, BlockSize: 64, BlockCacheSize: 16 << 10, PinnedMetaLimit: -1, Split: firstByte,
	}},
	// Range filters in every table: an iterator with both bounds leaves out
	// the tables whose filter rules its range out, and must read what a
	// DB without them reads. At 3 bits a key and ranges of 1, many small
	// tables answer "maybe" wrongly, and a wrong "no" shows at once.
	{name: "range-filter", opts: lsm.Options{MemtableSize: smallMem, RangeFilter: filter.GrafiteOptions{BitsPerKey: 16, RangeLen: 8}}},
	{name: "range-filter-3bit", opts: lsm.Options{
		MemtableSize: 4 << 10, LBaseMaxBytes: 8 << 10, LevelMultiplier: 2, TargetFileSize: 2 << 10,
		L0CompactionThreshold: 2, RangeFilter: filter.GrafiteOptions{BitsPerKey: 3, RangeLen: 1},
	}},
	// One filter over the tree first (experimental): a level it does not
	// name is never read, so a key it lost shows as a wrong read; 1-bit
	// table filters leave most "no"s to it. Small levels make many
	// compactions and moves, each filing and removing keys.
	{name: "tree-wide-filter", opts: lsm.Options{
		MemtableSize: 4 << 10, LBaseMaxBytes: 8 << 10, LevelMultiplier: 2,
		TargetFileSize: 2 << 10, L0CompactionThreshold: 2, BloomBitsPerKey: 1, FilterScope: lsm.TreeWide,
	}},
	// Each reopen reads the tables written before it under another Split:
	// none, then firstByte, twoBytes, firstByte under another name. A
	// table built with no Split or another Name must never be skipped;
	// twoBytes's filters hold prefixes firstByte's probes do not find.
	{name: "split-reopened", opts: lsm.Options{MemtableSize: smallMem},
		splits: []*filter.Split{nil, firstByte, twoBytes, firstByteRenamed}},
}

// firstByte is a Split whose prefixes are keys' first bytes; it cuts the
// prefixes of the generator's prefix iterators (op.prefix).
var firstByte = &filter.Split{Name: "first-byte", Len: func(k []byte) int { return min(len(k), 1) }}

// firstByteRenamed cuts as firstByte but its Name is another, so the
// tables each builds are never skipped under the other.
var firstByteRenamed = &filter.Split{Name: "first-byte-renamed", Len: firstByte.Len}

// twoBytes cuts keys after two bytes: under it a DB cannot answer
// firstByte's prefixes, but the tables it builds must still be read by
// prefix iterators under firstByte.
var twoBytes = &filter.Split{Name: "two-bytes", Len: func(k []byte) int { return min(len(k), 2) }}

// cutsAsFirstByte reports whether a DB with Split s answers firstByte's
// prefixes.
func cutsAsFirstByte(s *filter.Split) bool { return s == firstByte || s == firstByteRenamed }

// configs returns the fixed configurations and one drawn from seed, which
// combines the options at random.
func configs(seed uint64) []config {
	rng := rand.New(rand.NewPCG(seed, 0x6f707473))
	pick := func(vals ...int64) int64 { return vals[rng.IntN(len(vals))] }
	o := lsm.Options{
		MemtableSize:      pick(2<<10, 4<<10, 32<<10, 0),
		BloomBitsPerKey:   int(pick(-1, 1, 4, 0, 20)),
		BlockSize:         int(pick(1, 64, 256, 0)),
		BlockCacheSize:    pick(-1, 1, 8<<10, 0),
		MaxOpenFiles:      int(pick(1, 2, 5, 0)),
		Sync:              rng.IntN(4) == 0,
		BufferedWAL:       rng.IntN(3) == 0,
		KeepAbsentDeletes: rng.IntN(2) == 0,
		IgnoreFilters:     rng.IntN(4) == 0,
		LBaseMaxBytes:     pick(4<<10, 16<<10, 256<<10, 0),
		LevelMultiplier:   int(pick(2, 3, 10)),
		TargetFileSize:    pick(1<<10, 4<<10, 64<<10, 0),

		TargetFileSizeMultiplier: int(pick(1, 3, 0)),
		PinnedMetaLimit:          pick(-1, 2<<10, 0, lsm.NoPinnedMetaLimit),

		MaxConcurrentCompactions: int(pick(1, 3, 0)),
		FilterSizing:             lsm.FilterSizing(pick(0, 1)),
		FilterScope:              lsm.FilterScope(pick(0, 0, 1)),
	}
	ranges := []filter.GrafiteOptions{{}, {BitsPerKey: 3, RangeLen: 1}, {BitsPerKey: 10, RangeLen: 8}, {BitsPerKey: 16}}
	o.RangeFilter = ranges[rng.IntN(len(ranges))]
	o.L0CompactionThreshold = int(pick(1, 2, 4))
	o.L0SlowdownWritesThreshold = o.L0CompactionThreshold + int(pick(2, 4, 8))
	o.L0StopWritesThreshold = o.L0SlowdownWritesThreshold + int(pick(0, 4))
	if rng.IntN(2) == 0 {
		o.Compression = lsm.NoCompression
	}
	splits := []*filter.Split{nil, firstByte, twoBytes, firstByteRenamed}
	o.Split = splits[rng.IntN(len(splits))]
	random := config{opts: o}
	if rng.IntN(3) == 0 {
		random.splits = []*filter.Split{o.Split, splits[rng.IntN(len(splits))]}
	}
	random.name = "random(" + optionsString(o, random.splits) + ")"
	return append(fixedConfigs[:len(fixedConfigs):len(fixedConfigs)], random)
}

// optionsString lists o's non-zero fields, a Split by its Name, and the
// Splits of the reopens, if any.
func optionsString(o lsm.Options, splits []*filter.Split) string {
	var parts []string
	v := reflect.ValueOf(o)
	for i := range v.NumField() {
		if f := v.Field(i); !f.IsZero() {
			val := f.Interface()
			if s, ok := val.(*filter.Split); ok {
				val = s.Name
			}
			parts = append(parts, fmt.Sprintf("%s:%v", v.Type().Field(i).Name, val))
		}
	}
	if len(splits) > 0 {
		names := make([]string, len(splits))
		for i, s := range splits {
			names[i] = "none"
			if s != nil {
				names[i] = s.Name
			}
		}
		parts = append(parts, "Splits at each Open:"+strings.Join(names, ","))
	}
	return strings.Join(parts, " ")
}
