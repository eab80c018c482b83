package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/monbandb/monban/lsm"
)

// config is the parsed command line of a benchmark run. Names follow
// RocksDB's db_bench where it has the same knob.
type config struct {
	cpuProfile string
	benchmarks []string
	num        int
	reads      int
	deletes    int
	keySize    int
	valueSize  int
	// compression is "snappy" or "none"; compressionRatio the size values
	// compress to (db_bench's -compression_ratio: 1 is incompressible).
	compression       string
	compressionRatio  float64
	threads           int
	repeat            int // runs of the whole sequence, each on a fresh DB
	batchSize         int // keys per MultiGet in the multiread workloads
	rangeSize         int // present keys per DeleteRange call in deleterange; adjacent key numbers per iterator in the range workloads
	rangeTombstones   int // live range tombstones beside the point reads (rangetombstones.go)
	seed              uint64
	bloomBits         []int // kvbench's 0 means "no filter" (lsm's -1)
	filterSizings     []lsm.FilterSizing
	filterScopes      []lsm.FilterScope
	cacheSize         int64
	openFiles         int // lsm's MaxOpenFiles; -1: every table
	sync              bool
	keepAbsentDeletes bool
	db                string
	useExisting       bool
	histogram         bool
	json              bool
	svg               string
	compare           bool

	writeBufferSize int64
	targetFileSize  int64
	fileSizeMult    int
	pinnedMeta      int64
	levelBase       int64

	// prefixSize is the bytes of a key that form its prefix (prefix.go), 0
	// when the run uses no prefixes: neither -prefix_size nor a prefix
	// workload given.
	prefixSize int
	// scanRanges is set when a range workload runs: keys are big-endian
	// integers in runs of rangeSize (rangescan.go). rangeFilterBits is
	// Options.RangeFilter's bits per key, 0 for none.
	scanRanges      bool
	rangeFilterBits int

	defaulted bool // no flags at all: the embedded default run
}

// defaultBenchmarks is the embedded default run: with the default -num and
// -reads, 25 to 60 seconds on the shared 2-core test machine (depending on
// what else runs), a third of it in the comparison runs with filters off.
const defaultBenchmarks = "fillrandom,readrandom,readmissing,deleteabsent,deleterandom,readwhilewriting,seekrandom,scan,stats"

// workloadNames lists every -benchmarks value, in the order -h shows them.
var workloadNames = []string{"fillseq", "fillrandom", "overwrite", "readrandom", "readmissing",
	"multireadrandom", "multireadmissing", "deleteabsent", "deleterandom", "readwhilewriting",
	"seekrandom", "scan", "prefixmissing", "prefixrandom", "rangemissing", "rangerandom", "deleterange", "compact", "stats"}

// errUsage marks a command line that cannot run: the error and a line
// pointing to -h are printed, and kvbench exits with status 2, as package
// flag does.
var errUsage = errors.New("bad usage")

func usageError(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}

// mainUsage heads kvbench -h: every command, then the benchmarks' flags.
const mainUsage = `usage: kvbench [flags]              run benchmarks (no flags: the default run)
       kvbench filters [flags]      the filter tables: designed vs measured FPR
       kvbench tree -db DIR         the LSM's shape: levels, tables, key ranges
       kvbench explain -db DIR KEY  the read path of one key, step by step
       kvbench repair -db DIR       rebuild a DB that Open refuses
       kvbench teach -db DIR        build docs/read-path.md's lesson DB, print
                                    its traces
(kvbench CMD -h: that command's flags)

flags:
`

// parseConfig parses the flags of the default benchmark command. Usage
// errors are written to stderr, with a line pointing to -h, and returned
// wrapping errUsage.
func parseConfig(args []string, stderr io.Writer) (*config, error) {
	c := &config{defaulted: len(args) == 0}
	fs := flag.NewFlagSet("kvbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	benchmarks := fs.String("benchmarks", defaultBenchmarks, "comma-separated workloads, run in order: "+strings.Join(workloadNames, ", "))
	fs.IntVar(&c.num, "num", 1_000_000, "number of keys written by the fill benchmarks (present keys are 0, 2, 4, … 2·(num-1))")
	fs.IntVar(&c.reads, "reads", 200_000, "operations per read workload (readrandom, readmissing, readwhilewriting, seekrandom; keys for the multiread workloads; iterators for the prefix and range workloads)")
	fs.IntVar(&c.deletes, "deletes", -1, "operations per delete workload; -1: same as -reads")
	fs.IntVar(&c.keySize, "key_size", 16, "key size in bytes (zero-padded decimal; with the range workloads an 8-byte big-endian integer, zero-padded after)")
	fs.IntVar(&c.valueSize, "value_size", 100, "value size in bytes")
	fs.StringVar(&c.compression, "compression_type", "snappy", "data block compression: snappy or none")
	fs.Float64Var(&c.compressionRatio, "compression_ratio", 1, "fraction of its size a value compresses to: 1 is random bytes, 0.5 halves")
	fs.IntVar(&c.threads, "threads", 1, "goroutines sharing each workload's operations")
	fs.IntVar(&c.repeat, "repeat", 1, "run the whole sequence this many times, each on a fresh DB, and report the median and min-max of the timings")
	fs.IntVar(&c.batchSize, "batch_size", 32, "keys per MultiGet call in multireadrandom and multireadmissing")
	fs.IntVar(&c.rangeSize, "range_size", 1000, "present keys per DB.DeleteRange call in deleterange, which deletes -deletes keys, rounded down to a multiple of this (at least one call), in disjoint random ranges of this many; with rangemissing or rangerandom, adjacent key numbers per bounded iterator and the range filter's range length, default 32 then (one value serves the whole run)")
	fs.IntVar(&c.rangeFilterBits, "range_filter_bits", 0, "range filter bits per key (lsm.Options.RangeFilter, Grafite over a key's first 8 bytes, tuned for -range_size); 0: none. Default 16 in a run with rangemissing or rangerandom")
	fs.IntVar(&c.rangeTombstones, "range_tombstones", 0, "live range tombstones over no key read, spread over the key space, beside readrandom, readmissing, the multireads and readwhilewriting: the fills write them among their keys, and each read workload first writes again, into the memtable, those compactions dropped")
	fs.IntVar(&c.prefixSize, "prefix_size", 15, "bytes of a key that form its prefix (lsm.Options.Split, a fixed-length split), for prefixmissing and prefixrandom: written keys come in runs of 10^(key_size-prefix_size) numbers, one prefix each, between prefixes holding no key; the default leaves one digit, 10 keys a prefix. Unused unless set or a prefix workload runs; -use_existing_db takes the DB's (its KVBENCH-KEYS file) unless given")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of key order and value bytes; equal seeds give equal operations")
	bits := fs.String("bloom_bits", "10", "Bloom bits per key for new tables, or a list (0,5,10,15,20): the DB is rebuilt per value. 0 writes no filter (lsm.Options.BloomBitsPerKey -1); unlike Options, where 0 means the default, 10")
	sizings := fs.String("filter_sizing", "uniform", "how the bits are spread over the tables, or a list: uniform (every table alike) or per_level (Monkey: the same memory, spread by level); the DB is rebuilt per sizing and bits value")
	scopes := fs.String("filter_scope", "per_table", "which filters a lookup asks, or a list: per_table (each table's Bloom filter) or tree (lsm.Options.FilterScope TreeWide, experimental: one filter over every table's keys, asked once per lookup for the levels that may hold the key, whose tables' Bloom filters are then asked); the DB is rebuilt per scope, sizing and bits value")
	fs.Int64Var(&c.cacheSize, "cache_size", 8<<20, "block cache bytes; 0 or negative disables the cache")
	fs.IntVar(&c.openFiles, "open_files", -1, "tables kept open, each with its index and filter in memory (Options.MaxOpenFiles); -1: every table, as the filter figures assume (lsm.Stats describes the open tables only)")
	fs.BoolVar(&c.sync, "sync", false, "fsync the WAL on every commit")
	fs.BoolVar(&c.keepAbsentDeletes, "keep_absent_deletes", false, "write every Delete (Options.KeepAbsentDeletes): no absent-key proof, the baseline for what the proof costs deletes of present keys")
	fs.StringVar(&c.db, "db", "", "DB directory (default: a temporary one, removed afterwards). A monban DB already there is replaced, as db_bench does, with a line on stderr saying so; a directory holding anything else is refused. A sweep builds a DB directory per setting in it (bloom-00, ...), and refuses one holding anything but those")
	fs.BoolVar(&c.useExisting, "use_existing_db", false, "run on the DB in -db as it is: no fill benchmarks, no rebuild; -num, -key_size and -prefix_size (and the range workloads' -range_size) are taken from the DB's KVBENCH-KEYS unless given, and must match it if given")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile of the whole run to this file, for go tool pprof")
	fs.BoolVar(&c.histogram, "histogram", false, "print p50/p90/p99/p99.9/p99.99/max latencies per benchmark (HdrHistogram, 3 significant digits)")
	fs.BoolVar(&c.json, "json", false, "print one JSON object per line instead of text")
	fs.StringVar(&c.svg, "svg", "", "write charts to this SVG file: block reads per missing-key lookup vs bits per key, and latency percentiles")
	fs.BoolVar(&c.compare, "compare", true, "rerun each read and delete workload with Options.IgnoreFilters on a copy of the same DB")
	fs.Int64Var(&c.writeBufferSize, "write_buffer_size", 1<<20, "memtable bytes before a flush (lsm default 4 MiB; smaller makes a deeper tree from less data)")
	fs.Int64Var(&c.targetFileSize, "target_file_size_base", 1<<20, "compaction output table size in the base level")
	fs.IntVar(&c.fileSizeMult, "target_file_size_multiplier", 2, "Options.TargetFileSizeMultiplier: how much larger tables get per level below the base")
	fs.Int64Var(&c.pinnedMeta, "pinned_meta_limit", 0, "Options.PinnedMetaLimit: bytes of table indexes and filters pinned in memory; tables beyond it read them a page at a time through the block cache (0: the default, 20 MiB; negative: none pinned)")
	fs.Int64Var(&c.levelBase, "max_bytes_for_level_base", 4<<20, "Options.LBaseMaxBytes: the base level's size target (levels are dynamic)")
	hint := func() { usageHint(stderr, "", "[flags]") }
	if err := parseFlags(fs, args, stderr, mainUsage, hint); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		err := usageError("unexpected argument %q", fs.Arg(0))
		fmt.Fprintf(stderr, "kvbench: %v\n", err)
		hint()
		return nil, err
	}
	if c.deletes == -1 { // the documented "same as -reads"; other negatives are refused by validate
		c.deletes = c.reads
	}
	var err error
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	if c.benchmarks, err = parseBenchmarks(*benchmarks); err == nil {
		if err = c.usePrefixes(given); err == nil {
			if err = c.useRanges(given); err == nil && c.useExisting && c.db != "" {
				err = c.adoptKeyLayout(c.db, given)
			}
			if err == nil {
				if c.bloomBits, err = parseIntList(*bits); err == nil {
					if c.filterSizings, err = parseNames("filter_sizing", *sizings, sizingMeaning, lsm.FilterSizing.String); err == nil {
						if c.filterScopes, err = parseNames("filter_scope", *scopes, scopeMeaning, scopeName); err == nil {
							err = c.validate()
						}
					}
				}
			}
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "kvbench: %v\n", err)
		hint()
		return nil, err
	}
	return c, nil
}

func parseBenchmarks(s string) ([]string, error) {
	var out []string
	for name := range strings.SplitSeq(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(workloadNames, name) {
			return nil, usageError("unknown benchmark %q", name)
		}
		out = append(out, name)
	}
	if len(out) == 0 {
		return nil, usageError("-benchmarks is empty")
	}
	return out, nil
}

func (c *config) validate() error {
	switch {
	case c.num < 1:
		return usageError("-num must be at least 1")
	case c.num > maxNum:
		return usageError("-num must be at most %d: the fills' key order is a permutation of every key, held in memory", maxNum)
	case c.reads < 0:
		return usageError("-reads must not be negative")
	case c.deletes < 0: // -1 was replaced by -reads
		return usageError("-deletes must be -1 (same as -reads) or at least 0, not %d", c.deletes)
	case c.threads < 1 || c.threads > 1024:
		return usageError("-threads must be in 1..1024")
	case c.repeat < 1 || c.repeat > 1000:
		return usageError("-repeat must be in 1..1000")
	case c.openFiles == 0 || c.openFiles < -1:
		return usageError("-open_files must be -1 (every table) or at least 1")
	case c.rangeTombstones < 0 || c.rangeTombstones > c.num:
		return usageError("-range_tombstones must be in 0..-num (one per gap between present keys)")
	case c.batchSize < 1 || c.batchSize > 1<<16:
		return usageError("-batch_size must be in 1..65536")
	case c.valueSize < 0 || c.valueSize > 1<<20:
		return usageError("-value_size must be in 0..1048576")
	case c.compression != "snappy" && c.compression != "none":
		return usageError("-compression_type must be snappy or none")
	case !(c.compressionRatio > 0 && c.compressionRatio <= 1): // NaN too
		return usageError("-compression_ratio must be in (0, 1]")
	case c.keySize > 1<<10:
		return usageError("-key_size must be at most 1024")
	case !c.scanRanges && c.keySize < digits(c.keys().missing(c.num-1)):
		return usageError("-key_size %d cannot hold key %d of -num %d: need %d digits", c.keySize, c.keys().missing(c.num-1), c.num, digits(c.keys().missing(c.num-1)))
	case c.useExisting && c.db == "":
		return usageError("-use_existing_db needs -db")
	case c.useExisting && len(c.settings()) > 1:
		return usageError("-use_existing_db cannot rebuild the DB per -bloom_bits, -filter_sizing and -filter_scope setting (%d asked for)", len(c.settings()))
	case c.fileSizeMult < 1:
		return usageError("-target_file_size_multiplier must be at least 1")
	case slices.Contains(c.benchmarks, "deleterange") && c.rangeSize < 1:
		return usageError("-range_size %d: deleterange needs ranges of at least one key", c.rangeSize)
	case slices.Contains(c.benchmarks, "deleterange") && c.num/c.rangeCalls() < c.rangeSize:
		return usageError("-range_size %d: deleterange's %d disjoint ranges do not fit in -num %d", c.rangeSize, c.rangeCalls(), c.num)
	case c.writeBufferSize < 1<<10 || c.targetFileSize < 1<<10 || c.levelBase < 1<<10:
		return usageError("-write_buffer_size, -target_file_size_base and -max_bytes_for_level_base must be at least 1024")
	}
	if c.useExisting {
		for _, b := range c.benchmarks {
			if isFill(b) {
				return usageError("%s would overwrite the -use_existing_db DB", b)
			}
		}
	}
	return nil
}

func isFill(name string) bool { return strings.HasPrefix(name, "fill") }

// maxNum bounds -num: a fill's key order (permutation) takes 4 bytes a
// key, 4 GiB here, and numbers its keys in 32 bits.
const maxNum = 1 << 30
