package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/lsm"
)

// optionSet is the part of lsm.Options a cycle varies. It travels to the
// child as JSON, and the parent reopens the DB with the same set, so both
// sides of a kill run the same configuration. Zero fields take lsm's
// defaults.
type optionSet struct {
	Name                  string
	MemtableSize          int64 `json:",omitempty"`
	Sync                  bool  `json:",omitempty"`
	BloomBitsPerKey       int   `json:",omitempty"`
	KeepAbsentDeletes     bool  `json:",omitempty"`
	IgnoreFilters         bool  `json:",omitempty"`
	BlockSize             int   `json:",omitempty"`
	TargetFileSize        int64 `json:",omitempty"`
	FileSizeMultiplier    int   `json:",omitempty"`
	LBaseMaxBytes         int64 `json:",omitempty"`
	L0CompactionThreshold int   `json:",omitempty"`
	L0SlowdownThreshold   int   `json:",omitempty"`
	L0StopThreshold       int   `json:",omitempty"`
	MaxOpenFiles          int   `json:",omitempty"`
	MaxCompactions        int   `json:",omitempty"`
	PerLevelFilters       bool  `json:",omitempty"`
	PinnedMetaLimit       int64 `json:",omitempty"`
	// Split puts each key's first byte in the filters as a prefix
	// (lsm.Options.Split): no answer may change.
	Split bool `json:",omitempty"`
	// RangeFilterBits and RangeFilterLen are lsm.Options.RangeFilter's
	// BitsPerKey (0: no range filter) and RangeLen: iterators with both
	// bounds skip the tables whose filter rules their range out. Every
	// key is 8 bytes (keyName), so the filter tells every key apart.
	RangeFilterBits int    `json:",omitempty"`
	RangeFilterLen  uint64 `json:",omitempty"`
	// TreeWide asks one filter over the tree first
	// (lsm.Options.FilterScope): a level it does not name is never read.
	TreeWide bool `json:",omitempty"`
}

var firstByte = &filter.Split{Name: "first-byte", Len: func(k []byte) int { return min(len(k), 1) }}

func (o optionSet) lsm() *lsm.Options {
	return &lsm.Options{
		MemtableSize:              o.MemtableSize,
		Sync:                      o.Sync,
		BloomBitsPerKey:           o.BloomBitsPerKey,
		KeepAbsentDeletes:         o.KeepAbsentDeletes,
		IgnoreFilters:             o.IgnoreFilters,
		BlockSize:                 o.BlockSize,
		TargetFileSize:            o.TargetFileSize,
		TargetFileSizeMultiplier:  o.FileSizeMultiplier,
		LBaseMaxBytes:             o.LBaseMaxBytes,
		L0CompactionThreshold:     o.L0CompactionThreshold,
		L0SlowdownWritesThreshold: o.L0SlowdownThreshold,
		L0StopWritesThreshold:     o.L0StopThreshold,
		MaxOpenFiles:              o.MaxOpenFiles,
		MaxConcurrentCompactions:  o.MaxCompactions,
		FilterSizing:              map[bool]lsm.FilterSizing{false: lsm.FilterSizingUniform, true: lsm.FilterSizingPerLevel}[o.PerLevelFilters],
		PinnedMetaLimit:           o.PinnedMetaLimit,
		Split:                     map[bool]*filter.Split{true: firstByte}[o.Split],
		RangeFilter:               filter.GrafiteOptions{BitsPerKey: o.RangeFilterBits, RangeLen: o.RangeFilterLen},
		FilterScope:               map[bool]lsm.FilterScope{false: lsm.PerTable, true: lsm.TreeWide}[o.TreeWide],
	}
}

func (o optionSet) String() string {
	b, _ := json.Marshal(o)
	return string(b)
}

// tiny makes memtables and tables a few KiB, so that a cycle of a second
// flushes and compacts dozens of times: the kill then often lands inside
// one.
var tiny = optionSet{Name: "tiny", MemtableSize: 4 << 10, BlockSize: 512, TargetFileSize: 4 << 10,
	LBaseMaxBytes: 16 << 10, L0CompactionThreshold: 2, L0SlowdownThreshold: 4, L0StopThreshold: 6}

// namedSets are the -options values other than "random".
var namedSets = map[string]optionSet{
	"default": {Name: "default"},
	"tiny":    tiny,
	"sync":    with(tiny, "sync", func(o *optionSet) { o.Sync = true }),
	"nofilters": with(tiny, "nofilters", func(o *optionSet) {
		o.BloomBitsPerKey, o.IgnoreFilters, o.KeepAbsentDeletes = -1, true, true
	}),
	// One open table: every read past the first table reopens files, and
	// a table's identity is checked on each reopen.
	"fewfiles": with(tiny, "fewfiles", func(o *optionSet) { o.MaxOpenFiles = 1 }),
	// Every table paged: index partitions and filter pages read through
	// the block cache, so a damaged page surfaces on the read path.
	"paged": with(tiny, "paged", func(o *optionSet) { o.PinnedMetaLimit = -1 }),
	// Range filters of ranges of 8 points in every table: short bounded
	// iterators skip most tables.
	"rangefilter": with(tiny, "rangefilter", func(o *optionSet) { o.RangeFilterBits, o.RangeFilterLen = 16, 8 }),
	// One filter over the tree, with 1-bit table filters behind it, so
	// that most "absent"s are its own.
	"treewide": with(tiny, "treewide", func(o *optionSet) { o.TreeWide, o.BloomBitsPerKey = true, 1 }),
}

func with(o optionSet, name string, f func(*optionSet)) optionSet {
	o.Name = name
	f(&o)
	return o
}

// optionChooser returns, for -options name, a function that picks each
// cycle's set: the named set every time, or with "random" a new set per
// cycle drawn from rng (so the seed fixes the sequence of sets).
func optionChooser(name string) (func(rng *rand.Rand) optionSet, error) {
	if name == "random" {
		return randomSet, nil
	}
	o, ok := namedSets[name]
	if !ok {
		names := slices.Sorted(maps.Keys(namedSets))
		return nil, fmt.Errorf("-options %q: want random or one of %s", name, strings.Join(names, ", "))
	}
	return func(*rand.Rand) optionSet { return o }, nil
}

// randomSet draws every field the brief of the tool names. Sizes are
// log-uniform, so small memtables (many flushes per cycle) are as likely
// as large ones (recovery replays a long WAL).
func randomSet(rng *rand.Rand) optionSet {
	logUniform := func(lo, hi int64) int64 {
		return lo << rng.IntN(bits.Len64(uint64(hi/lo)))
	}
	pick := func(xs ...int) int { return xs[rng.IntN(len(xs))] }
	o := optionSet{
		Name:               "random",
		MemtableSize:       logUniform(4<<10, 4<<20),
		Sync:               rng.IntN(4) == 0,
		BloomBitsPerKey:    pick(-1, 0, 1, 4, 10, 20),
		KeepAbsentDeletes:  rng.IntN(2) == 0,
		IgnoreFilters:      rng.IntN(4) == 0,
		BlockSize:          pick(256, 1024, 4096),
		TargetFileSize:     logUniform(2<<10, 4<<20),
		FileSizeMultiplier: pick(0, 1, 3),
		LBaseMaxBytes:      logUniform(8<<10, 64<<20),
		MaxOpenFiles:       pick(1, 2, 8, 1000),
		MaxCompactions:     pick(1, 2, 4),
		PerLevelFilters:    rng.IntN(2) == 0,
		PinnedMetaLimit:    []int64{-1, 0, 0, 16 << 10}[rng.IntN(4)],
	}
	o.L0CompactionThreshold = 1 + rng.IntN(4)
	o.L0SlowdownThreshold = o.L0CompactionThreshold + rng.IntN(5)
	o.L0StopThreshold = o.L0SlowdownThreshold + rng.IntN(5)
	o.Split = rng.IntN(2) == 0
	o.TreeWide = rng.IntN(3) == 0
	if rng.IntN(2) == 0 {
		o.RangeFilterBits = pick(filter.GrafiteMinBitsPerKey, 10, 16, 24)
		o.RangeFilterLen = uint64(pick(0, 1, 8, 1000))
	}
	return o
}
