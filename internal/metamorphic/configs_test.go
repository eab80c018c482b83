package metamorphic

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/lsm"
)

// config is a named set of options. None may change what a read returns.
type config struct {
	name string
	opts lsm.Options
}

// Most configurations shrink the memtable as well, so that the option they
// are about meets many tables rather than one memtable.
const smallMem = 16 << 10

// fixedConfigs are run for every seed. Snappy is the default, so every
// configuration but no-compression compresses.
var fixedConfigs = []config{
	{"default", lsm.Options{}},
	{"memtable-4k", lsm.Options{MemtableSize: 4 << 10}},
	{"no-filters", lsm.Options{MemtableSize: smallMem, BloomBitsPerKey: -1}},
	{"filters-1bit", lsm.Options{MemtableSize: smallMem, BloomBitsPerKey: 1}},
	{"ignore-filters", lsm.Options{MemtableSize: smallMem, IgnoreFilters: true}},
	{"cache-1k", lsm.Options{MemtableSize: smallMem, BlockCacheSize: 1 << 10, BlockSize: 512}},
	{"cache-off", lsm.Options{MemtableSize: smallMem, BlockCacheSize: -1}},
	{"open-files-1", lsm.Options{MemtableSize: 8 << 10, MaxOpenFiles: 1}},
	{"keep-absent-deletes", lsm.Options{MemtableSize: smallMem, KeepAbsentDeletes: true}},
	{"sync", lsm.Options{MemtableSize: smallMem, Sync: true}},
	{"buffered-wal", lsm.Options{MemtableSize: smallMem, BufferedWAL: true}},
	{"small-levels", lsm.Options{
		MemtableSize: 4 << 10, LBaseMaxBytes: 8 << 10, LevelMultiplier: 2,
		TargetFileSize: 2 << 10, L0CompactionThreshold: 2,
	}},
	{"blocks-64", lsm.Options{MemtableSize: 8 << 10, BlockSize: 64}},
	{"no-compression", lsm.Options{MemtableSize: smallMem, Compression: lsm.NoCompression}},
	{"per-level-filters", lsm.Options{
		MemtableSize: 4 << 10, LBaseMaxBytes: 8 << 10, LevelMultiplier: 2,
		TargetFileSize: 2 << 10, L0CompactionThreshold: 2, FilterSizing: lsm.FilterSizingPerLevel, BloomBitsPerKey: 4,
	}},
	{"one-compaction", lsm.Options{MemtableSize: smallMem, L0CompactionThreshold: 2, MaxConcurrentCompactions: 1}},
	{"one-file-size", lsm.Options{
		MemtableSize: 4 << 10, LBaseMaxBytes: 8 << 10, LevelMultiplier: 2,
		TargetFileSize: 2 << 10, TargetFileSizeMultiplier: 1, L0CompactionThreshold: 2,
	}},
	// Every table read paged: index partitions and filter pages through a
	// small block cache that evicts them.
	{"paged-meta", lsm.Options{MemtableSize: 4 << 10, BlockSize: 64, BlockCacheSize: 16 << 10, PinnedMetaLimit: -1}},
	// Room for a few tables' meta: some pinned, the rest paged.
	{"meta-limit", lsm.Options{MemtableSize: 4 << 10, BlockSize: 256, TargetFileSize: 2 << 10, PinnedMetaLimit: 4 << 10}},
	{"four-compactions", lsm.Options{
		MemtableSize: 4 << 10, LBaseMaxBytes: 8 << 10, LevelMultiplier: 2,
		TargetFileSize: 1 << 10, L0CompactionThreshold: 2, MaxConcurrentCompactions: 4,
	}},
	// Prefixes in every filter beside the keys: no Get, proof or bound
	// iterator may answer otherwise (prefix iterators are the lsm model
	// test's, TestPrefixIterMatchesModel).
	{"split", lsm.Options{MemtableSize: smallMem, Split: firstByte}},
}

// firstByte is a Split whose prefixes are keys' first bytes.
var firstByte = &filter.Split{Name: "first-byte", Len: func(k []byte) int { return min(len(k), 1) }}

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
	}
	o.L0CompactionThreshold = int(pick(1, 2, 4))
	o.L0SlowdownWritesThreshold = o.L0CompactionThreshold + int(pick(2, 4, 8))
	o.L0StopWritesThreshold = o.L0SlowdownWritesThreshold + int(pick(0, 4))
	if rng.IntN(2) == 0 {
		o.Compression = lsm.NoCompression
	}
	random := config{"random(" + optionsString(o) + ")", o}
	return append(fixedConfigs[:len(fixedConfigs):len(fixedConfigs)], random)
}

// optionsString lists o's non-zero fields.
func optionsString(o lsm.Options) string {
	var parts []string
	v := reflect.ValueOf(o)
	for i := range v.NumField() {
		if f := v.Field(i); !f.IsZero() {
			parts = append(parts, fmt.Sprintf("%s:%v", v.Type().Field(i).Name, f.Interface()))
		}
	}
	return strings.Join(parts, " ")
}
