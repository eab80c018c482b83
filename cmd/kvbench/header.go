package main

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/monbandb/monban/lsm"
)

// header is the run's context: the machine and every option, once at the
// top (JSON type "header"), and on every chart.
type header struct {
	Type       string   `json:"type"` // "header"
	Date       string   `json:"date"`
	GoVersion  string   `json:"go"`
	GOOS       string   `json:"goos"`
	GOARCH     string   `json:"goarch"`
	CPUs       int      `json:"cpus"`
	GOMAXPROCS int      `json:"gomaxprocs"`
	Benchmarks []string `json:"benchmarks"`
	Num        int      `json:"num"`
	Reads      int      `json:"reads"`
	Deletes    int      `json:"deletes"`
	KeySize    int      `json:"key_size"`
	ValueSize  int      `json:"value_size"`
	Threads    int      `json:"threads"`
	Repeat     int      `json:"repeat"`
	BatchSize  int      `json:"batch_size"`
	// RangeTombstones is -range_tombstones: live range tombstones beside
	// the point reads.
	RangeTombstones int `json:"range_tombstones"`
	PrefixSize      int `json:"prefix_size"` // 0: the run uses no prefixes
	// RangeSize is -range_size; RangeFilterBits -range_filter_bits, 0
	// without range filters; BigEndianKeys marks the range workloads'
	// keys (rangescan.go).
	RangeSize       int    `json:"range_size"`
	RangeFilterBits int    `json:"range_filter_bits"`
	BigEndianKeys   bool   `json:"big_endian_keys"`
	Seed            uint64 `json:"seed"`
	BloomBits       []int  `json:"bloom_bits"`
	// FilterSizing lists the -filter_sizing values: "uniform", "per_level";
	// FilterScope the -filter_scope values: "per_table", "tree".
	FilterSizing []string `json:"filter_sizing"`
	FilterScope  []string `json:"filter_scope"`
	CacheSize    int64    `json:"cache_size"`
	OpenFiles    int      `json:"open_files"` // -1: every table
	Memtable     int64    `json:"write_buffer_size"`
	TargetFile   int64    `json:"target_file_size_base"`
	FileMult     int      `json:"target_file_size_multiplier"`
	LevelBase    int64    `json:"max_bytes_for_level_base"`
	Sync         bool     `json:"sync"`
	KeepAbsent   bool     `json:"keep_absent_deletes"`
	Compare      bool     `json:"compare"`
	DB           string   `json:"db"`
}

func newHeader(c *config, dir string) header {
	return header{Type: "header", Date: time.Now().Format(time.DateTime), GoVersion: runtime.Version(),
		GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, CPUs: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0),
		Benchmarks: c.benchmarks, Num: c.num, Reads: c.reads, Deletes: c.deletes, KeySize: c.keySize,
		ValueSize: c.valueSize, Threads: c.threads, Repeat: c.repeat, BatchSize: c.batchSize, RangeTombstones: c.rangeTombstones, PrefixSize: c.prefixSize,
		RangeSize: c.rangeSize, RangeFilterBits: c.rangeFilterBits, BigEndianKeys: c.scanRanges, Seed: c.seed,
		BloomBits: c.bloomBits, FilterSizing: names(c.filterSizings, lsm.FilterSizing.String),
		FilterScope: names(c.filterScopes, scopeName), CacheSize: c.cacheSize, OpenFiles: c.openFiles,
		Memtable: c.writeBufferSize, TargetFile: c.targetFileSize, FileMult: c.fileSizeMult, LevelBase: c.levelBase, Sync: c.sync, KeepAbsent: c.keepAbsentDeletes, Compare: c.compare, DB: dir}
}

// bitsList is "5,10,15".
func bitsList(bits []int) string {
	return strings.Trim(strings.Join(strings.Fields(fmt.Sprint(bits)), ","), "[]")
}

// machine is the Go line of the header: "go1.26 linux/amd64, 2 CPUs
// (GOMAXPROCS 2)".
func (h header) machine() string {
	return fmt.Sprintf("%s %s/%s, %d CPUs (GOMAXPROCS %d)", h.GoVersion, h.GOOS, h.GOARCH, h.CPUs, h.GOMAXPROCS)
}

func (r *reporter) header(dir string) {
	c := r.cfg
	r.head = newHeader(c, dir)
	if r.enc != nil {
		r.emit(r.head)
		return
	}
	p := func(k, format string, args ...any) {
		fmt.Fprintf(r.w, "%-12s %s\n", k+":", fmt.Sprintf(format, args...))
	}
	p("kvbench", "monban LSM: what the filters save on reads and deletes")
	if c.defaulted {
		p("Default run", "embedded workload, under a minute on a 2-core machine (kvbench -h for the flags)")
	}
	p("Date", "%s", r.head.Date)
	p("Go", "%s", r.head.machine())
	if k := c.keys(); k.bigEndian {
		p("Keys", "%d bytes each (an 8-byte big-endian integer, then zeros; written keys in the even runs of %d integers, the missing ranges the odd runs between)", c.keySize, k.group)
	} else if g := k.group; g > 1 {
		p("Keys", "%d bytes each (zero-padded decimal; written keys in the even runs of %d numbers, missing keys in the odd runs, same range)", c.keySize, g)
	} else {
		p("Keys", "%d bytes each (zero-padded decimal; written keys even-numbered, missing keys odd, same range)", c.keySize)
	}
	p("Values", "%d bytes each (incompressible)", c.valueSize)
	p("Entries", "%d", c.num)
	p("Ops", "%d per read workload, %d per delete workload, on %d thread(s); seed %d", c.reads, c.deletes, c.threads, c.seed)
	if s := c.split(); s != nil {
		p("Prefixes", "a key's first %d bytes (Options.Split %s): a run of numbers is one prefix", c.prefixSize, s.Name)
	}
	if f := c.rangeFilter(); f.BitsPerKey > 0 {
		p("Range filter", "%d bits per key (Options.RangeFilter, Grafite over a key's first 8 bytes), tuned for ranges of %d", f.BitsPerKey, f.RangeLen)
	}
	if c.rangeTombstones > 0 {
		p("Range dels", "%d range tombstones live beside the point reads, over no key read: written among the fill's keys, and before each read workload into the memtable where compactions dropped them", c.rangeTombstones)
	}
	if c.repeat > 1 {
		fresh := "each on a fresh DB"
		if c.useExisting {
			fresh = "each on the -use_existing_db DB as the run before left it"
		}
		p("Repeats", "%d runs of the whole sequence, %s; median and min-max at the end", c.repeat, fresh)
	}
	bits := bitsList(c.bloomBits)
	if len(c.bloomBits) > 1 {
		p("Bloom bits", "%s per key: filters are written when tables are built, so the DB is rebuilt for each value", bits)
	} else {
		p("Bloom bits", "%s per key (0: no filter)", bits)
	}
	p("Sizing", "%s", choices(c.filterSizings, lsm.FilterSizing.String, sizingMeaning, "at each bits value"))
	p("Scope", "%s", choices(c.filterScopes, scopeName, scopeMeaning, "at each bits value and sizing"))
	p("Theory", "FPR of the cache-line Bloom filter the tables use (filter.CacheLineFPR), standard layout beside it")
	open := "" // every table, unsaid
	if c.openFiles > 0 {
		open = fmt.Sprintf(", at most %d tables open (filter figures cover those only)", c.openFiles)
	}
	if c.keepAbsentDeletes {
		open += ", every Delete written (KeepAbsentDeletes)"
	}
	switch {
	case c.pinnedMeta < 0:
		open += ", no index or filter pinned (PinnedMetaLimit): every table paged"
	case c.pinnedMeta > 0:
		open += fmt.Sprintf(", indexes and filters pinned up to %s (PinnedMetaLimit), the rest paged", size(c.pinnedMeta))
	}
	p("Options", "block cache %s, memtable %s, table %s (x%d per level below the base), base level %s (levels dynamic), sync %v, %s (values compress to %.2f)%s",
		cacheSize(c.cacheSize), size(c.writeBufferSize), size(c.targetFileSize), c.fileSizeMult, size(c.levelBase), c.sync, c.compression,
		c.compressionRatio, open)
	where := dir
	if c.db == "" {
		where += " (temporary, removed afterwards)"
	}
	p("DB", "%s", where)
	p("Workloads", "each starts when the DB is settled: memtable flushed, no compaction running; level tables count the tables at that start")
	if c.compare {
		p("Comparison", "each read/delete workload also runs with Options.IgnoreFilters on a copy of the same DB")
	}
	fmt.Fprintln(r.w, strings.Repeat("-", 72))
}
