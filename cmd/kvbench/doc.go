// Command kvbench measures what monban's filters save, in the shape RocksDB's
// db_bench users know:
//
//	kvbench [flags]              fill a DB, run workloads, print what the filters saved
//	kvbench filters [flags]      the filter tables: designed against measured FPR
//	kvbench tree -db DIR         the LSM's shape: levels, tables, sizes, key ranges, filter bits
//	kvbench explain -db DIR KEY  the read path of one key, step by step
//	kvbench repair -db DIR       rebuild a DB that Open refuses (lsm.RepairWith; -force for a
//	                             directory of another program's files), print what became of each file
//	kvbench teach -db DIR        build docs/read-path.md's lesson DB, print its traces
//
// With no flags it runs an embedded default (under a minute on a 2-core
// machine) in a temporary directory that it removes afterwards. -db DIR
// builds in DIR instead and, as db_bench does, replaces a monban DB found
// there, saying so on stderr; a directory holding anything else is refused.
// A sweep (below) builds a DB directory per setting in DIR, and refuses a
// DIR holding anything but those.
// -use_existing_db runs on the DB as it is, and refuses a directory that
// is missing or holds no DB file (it would otherwise make a new DB there).
// Every DB kvbench builds holds a file KVBENCH-KEYS, the flags that fix
// its keys (-num, -key_size, -prefix_size, and -range_size for the range
// workloads); -use_existing_db takes each it is not given from there, and
// refuses given ones that ask for other keys (its missing keys would be
// written ones, and its deletes of absent keys would delete them); it
// warns where the file is missing.
// Every flag is checked before anything runs: a float must be finite,
// -num at most 2^30, and the -svg chart's and the -cpuprofile's paths
// writable.
//
// -bloom_bits 0 writes no filter: the origin of a bits-per-key sweep
// (-bloom_bits 0,5,10,15,20), a DB directory bloom-00 and a point at 0 on
// the -svg chart. In lsm.Options it is BloomBitsPerKey -1; Options'
// BloomBitsPerKey 0 means the default, 10, as every zero Options field
// means its default.
//
// # Workloads
//
// -benchmarks names them, run in order on one DB: fillseq, fillrandom,
// overwrite, readrandom, readmissing, multireadrandom, multireadmissing,
// deleteabsent, deleterandom, readwhilewriting, seekrandom, scan,
// prefixmissing, prefixrandom, rangemissing, rangerandom, deleterange,
// compact, stats. Written keys are the even numbers 0, 2, … 2·(num-1) in
// zero-padded decimal; the missing keys of readmissing, multireadmissing
// and deleteabsent are the odd numbers between them, so they fall inside
// every table's key range and nothing but a filter can turn them away
// without a data-block read. -threads goroutines share each
// workload's operations (db_bench gives each thread the full count).
// micros/op is per-thread time per op and ops/sec is ops over wall time,
// as in db_bench; cpu us/op beside micros/op is the workers' thread CPU
// time per op (internal/cpuclock), which a loaded machine does not inflate
// and which leaves out the DB's background flushes and compactions. The
// write workloads and the delete workloads end with an untimed Flush, so
// reads find the data in tables and the report can say which tombstones
// the flush dropped. "compact" runs DB.Compact over the whole key range;
// its merges run on the calling thread, whose CPU its cpu us/op is.
// deleterange deletes -deletes present keys, rounded down to a multiple
// of -range_size (but one range at least), with DB.DeleteRange in
// disjoint random ranges of -range_size (default 1000) consecutive keys,
// one op per call, then flushes and runs DB.Compact untimed; a second line
// gives the keys covered, the commits and WAL bytes the calls wrote, the
// Compact's time, the table bytes (Stats, every level) it reclaimed, the
// bytes compactions read from the first call to the end of the Compact
// and how many delete-only compactions dropped tables unread, and
// the DB directory's bytes when the run opened it, before the calls,
// after the Compact (and a Close, which deletes the tables it replaced)
// and after the DB is opened again (which starts a new manifest).
// -range_tombstones N runs the point reads (readrandom, readmissing, the
// multireads, readwhilewriting) beside N live range tombstones over no key
// they read: short spans in the gaps just above present keys, spread evenly
// over the key space. The fills write them among their keys, so they go
// down the tree into many tables; before each read workload opens its
// window, DB.Explain finds which spans a table still holds (a compaction
// into the last level drops those it carries) and the rest are written
// again into the active memtable. Each read result says how many were
// live, how many it wrote into the memtable and how many each level's
// tables held; the next workload's flush makes those in the memtable an
// L0 table of their own. The Explain calls read like Gets: with filters
// ignored they bring blocks into the cache before the comparison run.
// prefixmissing and prefixrandom run -reads iterators bounded to one
// prefix (lsm.IterOptions.Prefix), over a prefix holding no key or over
// one holding written keys, read to its end; an op is one iterator. A run
// with them (or with -prefix_size) opens the DB with Options.Split
// cutting keys after -prefix_size bytes (default 15 of the 16) and lays
// the keys out by prefix: the written keys fill the prefixes of even runs
// of 10^(key_size-prefix_size) numbers, ten keys each by default, and the
// missing keys, of every workload, those of the odd runs between them.
// lsm.Stats counts the data blocks Gets read, not those iterators read,
// so these workloads count the reads of table files through the DB's
// file system (tablereads.go) less the paged index and filter blocks
// Stats counts: data blocks from file; blocks from the cache are n/a.
// With -cache_size 0 every block an iterator touches is a file read.
// Index blocks: pinned (the default), a table's index is in memory and an
// iterator reads none; with -pinned_meta_limit the paged tables' index
// partitions and filter pages per op are the line readmissing prints,
// from Stats, which counts iterators' there.
// rangemissing and rangerandom run -reads iterators with both bounds set
// (lsm.IterOptions.LowerBound, UpperBound) over -range_size adjacent key
// numbers (default 32 in a run with them), a run holding no key or a run
// of written keys, read to its end; an op is one iterator. A run with
// them opens the DB with Options.RangeFilter at -range_filter_bits bits
// per key (default 16), tuned for ranges of -range_size, and writes other
// keys: a range filter sees a key as its first 8 bytes, big-endian, and
// the decimal keys' first 8 bytes are zeros for any -num, so each key is
// its number as an 8-byte big-endian integer followed by -key_size-8 zero
// bytes (the entries keep their size). The written keys fill the even
// runs of -range_size integers and the missing ranges are the odd runs
// between them, so an empty range lies inside every table's key range
// and only a range filter can rule a table out. The runs start at
// multiples of -range_size, the filter's block length: an empty range is
// one of its blocks (one search), and the written keys fill whole blocks,
// whose codes cluster, so the filters err less often here than their
// bound allows for keys at random (docs/read-path.md, exercise 7). An iterator's upper bound
// is its last key with a zero byte appended, which asks the filters for
// exactly the run's integers (rangescan.go says why not the next run's
// first key). The range workloads cannot share a run with the prefix
// workloads, whose keys are decimal. Their figures come as the prefix
// workloads' do, from table-file reads; the result line adds the tables
// whose range filter was asked and those it left out, for rangemissing
// with filters on the blocks per op the filters' bound allows (range
// filter probes per op times ℓ/2^(B−2)), and the range filters' memory
// (Stats' RangeFilterBytes) beside the Bloom filters'.
// multireadrandom and multireadmissing read -reads keys in DB.MultiGet
// calls of -batch_size keys (default 32, db_bench's name): their per-op
// figures are per key, a second line gives them per batch, and their
// latency percentiles are per batch. A missing key found, or a present key
// MultiGet misses that Get then finds, fails the run.
//
// Every workload starts on a settled DB: the memtable flushed and no
// compaction running (window.go), so background work the workload before
// left neither runs during it nor is cut short by the Close before a
// comparison run. The level tables count each level's tables at that
// start, and +N the tables flushes and compactions wrote into the level
// during the workload: a level that gained its tables mid-run shows 0+2,
// not 0.
//
// Every table stays open (-open_files -1, Options.MaxOpenFiles above any
// table count), so every index and filter is in memory, as the filter
// figures assume: they come from lsm.Stats, which describes the open
// tables only. A run limited by -open_files to fewer tables than its tree
// holds reopens tables on reads and reports the filters of those open.
//
// # What the filters saved
//
// Every read and delete workload that asks the filters (readrandom,
// readmissing, the multireads, deleteabsent, deleterandom,
// readwhilewriting, the prefix and range workloads) runs twice on the same data:
// the DB is closed, its directory copied, the copy opened with
// lsm.Options.IgnoreFilters and the workload run there with the same seeds; then the original is reopened
// and the workload runs with filters on. Both runs start alike (cold block
// cache, WAL replayed, the same tables, copied from a settled DB), so the
// saving printed is measured, never computed. The counters come from lsm.Stats,
// differenced across each run.
//
// readmissing, multireadmissing and prefixmissing print, beside the data
// blocks they read per lookup, those the filters promised: Stats.ExpectedFalsePositives
// at the start, the sum of the theory FPR of each filter a missing key
// probes (every L0 table, one table per deeper level). Read over promised
// near 1 says the filters keep their promise. Below 1 is usual: a level
// of a few tables can leave part of the key range uncovered, and a key
// there probes no filter of the level (the promise counts one). Under it,
// weighing each level by the probes it had instead: what uniform sizing
// of the tree's filter memory promises, what its own filters do, and
// what the best sizing of that memory would (bound.go), so that two
// sizings are compared on one tree, which compaction timing cannot make
// differ.
//
// -bloom_bits, -filter_sizing and -filter_scope take lists. Filters are
// written when tables are built, so for each setting, a bits value, a
// sizing (uniform: every table the same bits per key; per_level: Monkey's
// allocation of the same memory, lsm.FilterSizingPerLevel) and a scope
// (below), the DB is rebuilt from scratch (the same keys, values and order
// from the same seed) and every workload rerun, the scopes of one bits
// value and sizing one after the other; the sweep table at the end has
// one row per read workload and setting (filter memory, blocks per op
// read and promised), and under it one per level: bits per key, filter
// memory, blocks per op and measured FPR against theory.
//
// -filter_scope per_table (the default) has a lookup ask the Bloom filter
// of each table it passes; tree sets lsm.Options.FilterScope to TreeWide
// (experimental): every table is written with a key-hash block, Open
// builds one filter over all of them in the background, and a lookup asks
// it once which levels may hold its key, then the Bloom filters of those
// levels' tables only (the comparison run, Options.IgnoreFilters, ignores
// it too). Every workload waits for that build (a minute at most, then it
// runs without and says so on stderr): kvbench reopens the DB before each
// compared workload. Under tree the read and delete results add the
// tree-wide filter's probes and negatives (lookups for which it named no
// level) and its memory at the workload's start, in bytes and bits per
// entry (a key once for each table holding it), beside the table filters'
// figures; "filter probes" per op counts both kinds, so that per_table
// shows about one probe per level a lookup passes and tree about one per
// lookup, while the data blocks per op are counted as before. Beside the
// probes, the cache lines they read per op (filter_lines_per_op): one per
// table filter probe (a cache-line Bloom filter reads one line), and what
// each tree-wide probe read (Stats.TreeFilterLines: one or two lines in
// the common case): the memory accesses the filters cost a lookup. The
// filters' promise (Stats.ExpectedFalsePositives) is the table filters'
// alone. The stats line and the sweep (a tree-wide row under each tree
// setting) add the same figures, and kvbench tree prints the tree-wide
// filter a DB built under tree gets at Open; kvbench explain traces the
// per-table path. A -use_existing_db DB written under per_table has no
// key-hash blocks: under tree its filter has no entries and names every
// level.
//
// -repeat N runs the whole sequence N times for each setting, each time on a
// fresh DB (with -use_existing_db, on the DB as the repeat before left
// it: there is nothing to rebuild it from), and ends with the median and
// min-max of each workload's ops/sec, micros/op and cpu us/op. The sweep
// table pools the repeats' counts.
//
// The theory printed beside each measured FPR is filter.CacheLineFPR at the
// probe count filter.CacheLineProbes gives, at each table's bits per key
// (lsm.Stats' TheoryFPR of the level): the tables use the cache-line
// Bloom filter, and that is its theory (a Poisson sum over line loads, which
// filter's own tests check). The standard-layout formula is printed next to
// it, to show what the cache-line layout costs (docs/design.md, "The
// filters and their three jobs"). kvbench imports filter for this
// arithmetic and for the filters subcommand, internal/cpuclock for cpu
// us/op, vfs for the file system that counts table reads, and lsm for
// everything else.
//
// # Output
//
// Text by default, one db_bench line per workload
// (`readrandom   :    3.210 micros/op   2.950 cpu us/op  311526 ops/sec;
// 34.5 MB/s`) with the options and machine once at the top. Every line of
// the text report, of tree and of explain fits 80 columns and ends in no
// space: prose wraps under its label, tables are laid out to fit. (Width
// is counted in characters: a key of wide characters, CJK say, that
// explain or tree prints takes two columns for each of them.) A figure
// nothing measured (the FPR of a level whose every probe found its key, a
// ratio over zero, a rate of no operations) prints n/a, never 0. -json
// prints one JSON object per line instead (a "header", then "result" and
// "stats" objects, and with -repeat a "summary" per workload; each result
// carries its "repeat", from 1, and every result, stats and summary line
// its setting: "bloom_bits", "filter_sizing" and "filter_scope"), with
// snake_case keys throughout and null for n/a. -histogram adds latency
// percentiles from an HdrHistogram (github.com/HdrHistogram/hdrhistogram-go, three significant digits): p50,
// p90, p99, p99.9, p99.99 and max. -svg writes two hand-drawn charts, each
// with the run's context (svg.go says why not gonum/plot). A progress bar
// (github.com/schollz/progressbar) with an ETA appears on stderr for
// phases longer than two seconds, only when stderr is a terminal.
// -cpuprofile FILE writes a CPU profile of the whole run (runtime/pprof).
//
// Exit status: 0 done, 1 a benchmark failed (the message names it), 2 bad
// usage (every subcommand: the reason, and one line pointing to -h, on
// stderr), 130 interrupted: the first Ctrl-C stops the workload at its
// next op and removes the temporary DB before kvbench exits.
package main
