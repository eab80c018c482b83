// Command peers runs the same deterministic workloads against several
// embedded key-value engines, one after another in one process, and reports
// wall time, CPU time and the read syscalls / bytes each engine asked the OS
// for. See README.md.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"time"
)

// logOut receives progress lines and warnings (stderr; tests silence it).
var logOut io.Writer = os.Stderr

func logf(format string, args ...any) {
	fmt.Fprintf(logOut, format+"\n", args...)
}

func main() {
	if err := mainErr(); err != nil {
		logf("peers: %v", err)
		os.Exit(1)
	}
}

// runSpec is one entry of the run list: an engine and its options.
type runSpec struct {
	engine string
	opts   Options
}

type phaseResult struct {
	Type          string  `json:"type"` // "phase"
	Run           int     `json:"run"`
	Engine        string  `json:"engine"`
	Bits          int     `json:"bits"`
	CacheBytes    int64   `json:"cache_bytes"`
	MemtableBytes int64   `json:"memtable_bytes"`
	Workload      string  `json:"workload"`
	Ops           int64   `json:"ops"`
	Secs          float64 `json:"secs"`
	OpsPerSec     float64 `json:"ops_per_sec"`
	CPUSecs       float64 `json:"cpu_secs"`
	CPUusPerOp    float64 `json:"cpu_us_per_op"`
	SyscrPerOp    float64 `json:"syscr_per_op"`
	RcharPerOp    float64 `json:"rchar_per_op"`
	WcharPerOp    float64 `json:"wchar_per_op"`
	Syscr         int64   `json:"syscr"`
	Rchar         int64   `json:"rchar"`
	Syscw         int64   `json:"syscw"`
	Wchar         int64   `json:"wchar"`
	DiskReadBytes int64   `json:"disk_read_bytes"`
	Bad           int64   `json:"bad"`
	Items         int64   `json:"items,omitempty"`
	FlushSecs     float64 `json:"flush_secs,omitempty"`
	Commits       uint64  `json:"commits,omitempty"`     // engines that count them (monban)
	WALSyncs      uint64  `json:"wal_syncs,omitempty"`   // fsyncs those commits waited for
	L0AtStart     *int    `json:"l0_at_start,omitempty"` // L0 tables when the phase began (not for fill)
	PeakRSSBytes  int64   `json:"peak_rss_bytes,omitempty"`
	MemAtPeak     string  `json:"mem_at_peak,omitempty"`
	Note          string  `json:"note,omitempty"`
}

type runResult struct {
	Type          string  `json:"type"` // "run"
	Run           int     `json:"run"`
	Engine        string  `json:"engine"`
	Bits          int     `json:"bits"`
	CacheBytes    int64   `json:"cache_bytes"`
	MemtableBytes int64   `json:"memtable_bytes"`
	OpenSecs      float64 `json:"open_secs"`
	DirBytes      int64   `json:"dir_bytes"`       // after fill+flush
	TableBytes    int64   `json:"table_bytes"`     // .sst/.ldb part of dir_bytes
	StartRSSBytes int64   `json:"start_rss_bytes"` // RSS when the run began (after GC)
	PeakRSSBytes  int64   `json:"peak_rss_bytes"`
	PeakRSSScope  string  `json:"peak_rss_scope"`        // "run" or "process" (reset failed)
	PinnedMeta    int64   `json:"pinned_meta,omitempty"` // monban's PinnedMetaLimit, when the entry set it
	Shape         string  `json:"shape,omitempty"`
	Error         string  `json:"error,omitempty"`
}

type configRecord struct {
	Type       string   `json:"type"` // "config"
	Date       string   `json:"date"`
	GoVersion  string   `json:"go_version"`
	GOOS       string   `json:"goos"`
	GOARCH     string   `json:"goarch"`
	GOMAXPROCS int      `json:"gomaxprocs"`
	NumCPU     int      `json:"num_cpu"`
	N          int      `json:"n"`
	M          int      `json:"m"`
	KeySize    int      `json:"key_size"`
	ValSize    int      `json:"val_size"`
	Scans      int      `json:"scans"`
	ScanLen    int      `json:"scan_len"`
	Seed       uint64   `json:"seed"`
	Reopen     bool     `json:"reopen"`
	Threads    int      `json:"threads"`
	Dist       string   `json:"dist"`
	Workloads  []string `json:"workloads"`
	Runs       []string `json:"runs"`
}

func mainErr() error {
	var (
		enginesFlag   = flag.String("engines", "monban,pebble,pebble-l6,goleveldb", "comma-separated engines to run, in order; repeats allowed. Entry syntax: name[:bits=N][:cache=SIZE][:memtable=SIZE][:pinned=SIZE] (pinned: monban's PinnedMetaLimit). Registered: "+strings.Join(engineNames(), ","))
		n             = flag.Int("n", 1000000, "keys written by fill")
		m             = flag.Int("m", 200000, "operations in readhit, readmiss, delmiss and mixed")
		bits          = flag.Int("bits", 10, "bloom filter bits per key (0 = no filter)")
		bitsweep      = flag.String("bitsweep", "", "comma-separated bits values; each engine is run once per value (workloads default to readmiss)")
		cacheFlag     = flag.String("cache", "8MiB", "block cache size (0 = none)")
		memtableFlag  = flag.String("memtable", "4MiB", "memtable size (0 = engine default)")
		dirFlag       = flag.String("dir", "", "parent directory for the per-run databases (default: a temp dir, removed at the end)")
		keep          = flag.Bool("keep", false, "keep each run's database directory instead of removing it after the run")
		workloadsFlag = flag.String("workloads", strings.Join(allWorkloads, ","), "comma-separated workloads, run in this order after fill (fill always runs first); also mixed (50% reads, 50% updates of present keys, by -dist), delrange (m/1000 DeleteRange calls of -range_size present keys), open (close and reopen: open time, reads, RSS after) prefixmiss (m iterators over 8-byte prefixes no key has; gives every engine prefix filters from the fill on) and rangemiss (m bounded iterators over 32 adjacent integers of the keys' first 8 bytes that hold no key; gives monban 16-bit range filters from the fill on)")
		scans         = flag.Int("scans", 1000, "number of scans in the scan workload")
		scanLen       = flag.Int("scanlen", 1000, "entries per scan")
		valSize       = flag.Int("valsize", 100, "value size in bytes (keys are 16 bytes)")
		seed          = flag.Uint64("seed", 1, "seed for keys, values and access order")
		reopen        = flag.Bool("reopen", false, "close and reopen the engine after each Flush (fill, delmiss, mixed), so every engine starts the next phase with cold caches")
		jsonOut       = flag.Bool("json", false, "emit JSON lines (config, phase and run records) instead of the tables")
		syncFlag      = flag.Bool("sync", false, "every engine fsyncs its log on every Put and Delete (monban Options.Sync, pebble.Sync, goleveldb WriteOptions.Sync)")
		threads       = flag.Int("threads", 1, "goroutines that fill, readhit, readmiss, delmiss and mixed split their operations among")
		rangeSize     = flag.Int("range_size", 1000, "present keys each delrange call deletes (delrange makes m/1000 calls, at least one)")
		dist          = flag.String("dist", "uniform", "mixed's key choice: uniform, or zipfian (YCSB's, constant 0.99, over the n filled keys)")
		memSample     = flag.Duration("memsample", 0, "sample memory at this interval during every phase (e.g. 20ms) and note at its peak the split between the Go heap, the runtime, and what the engine says it holds off the heap (0 = off)")
		cpuProfile    = flag.String("cpuprofile", "", "write a CPU profile of every phase into this directory, named after the run's database directory and the workload (go tool pprof reads them)")
		memProfile    = flag.String("memprofile", "", "write a heap profile at the end of every phase into this directory, named as -cpuprofile's with -heap (in use as of the last collection, and allocated since the program began: go tool pprof -sample_index=alloc_space -diff_base PREVIOUS)")
		fresh         = flag.Bool("fresh", false, "run each engine in a process of its own (this program again, with one engine), so every run starts at the same memory and peak-RSS compares like with like")
	)
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", flag.Args())
	}
	explicit := map[string]bool{}
	flag.Visit(func(f *flag.Flag) { explicit[f.Name] = true })

	if *n <= 0 || *m < 0 || *valSize < 0 || *scans < 0 || *scanLen <= 0 || *threads <= 0 || *rangeSize <= 0 {
		return errors.New("-n, -scanlen, -threads and -range_size must be > 0; -m, -scans and -valsize >= 0")
	}
	var zipf *zipfian
	switch *dist {
	case "uniform":
	case "zipfian":
		zipf = newZipfian(uint64(*n), *seed)
	default:
		return fmt.Errorf("-dist: %q is neither uniform nor zipfian", *dist)
	}
	cacheBytes, err := parseSize(*cacheFlag)
	if err != nil {
		return fmt.Errorf("-cache: %w", err)
	}
	memtableBytes, err := parseSize(*memtableFlag)
	if err != nil {
		return fmt.Errorf("-memtable: %w", err)
	}

	// Workloads.
	var workloads []string
	wl := *workloadsFlag
	if *bitsweep != "" && !explicit["workloads"] {
		wl = wReadMiss
	}
	for _, w := range splitList(wl) {
		if !slices.Contains(knownWorkloads, w) {
			return fmt.Errorf("unknown workload %q (known: %s)", w, strings.Join(knownWorkloads, ","))
		}
		if w != wFill {
			workloads = append(workloads, w)
		}
	}

	// Bits values.
	bitsList := []int{*bits}
	if *bitsweep != "" {
		bitsList = nil
		for _, s := range splitList(*bitsweep) {
			b, err := strconv.Atoi(s)
			if err != nil || b < 0 {
				return fmt.Errorf("-bitsweep: bad value %q", s)
			}
			bitsList = append(bitsList, b)
		}
	}

	// Run list.
	var runs []runSpec
	for _, entry := range splitList(*enginesFlag) {
		name, kvs, _ := strings.Cut(entry, ":")
		if _, ok := registry[name]; !ok {
			return fmt.Errorf("unknown engine %q (registered: %s)", name, strings.Join(engineNames(), ","))
		}
		base := Options{BitsPerKey: *bits, CacheBytes: cacheBytes, MemtableBytes: memtableBytes, Sync: *syncFlag}
		if slices.Contains(workloads, wPrefixMiss) {
			base.PrefixLen = prefixLen
		}
		if slices.Contains(workloads, wRangeMiss) {
			base.RangeFilterBits = rangeFilterBits
		}
		bitsFixed := false
		if kvs != "" {
			for _, kv := range strings.Split(kvs, ":") {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return fmt.Errorf("engine entry %q: want key=value, got %q", entry, kv)
				}
				switch k {
				case "bits":
					b, err := strconv.Atoi(v)
					if err != nil || b < 0 {
						return fmt.Errorf("engine entry %q: bad bits", entry)
					}
					base.BitsPerKey, bitsFixed = b, true
				case "cache":
					if base.CacheBytes, err = parseSize(v); err != nil {
						return fmt.Errorf("engine entry %q: %w", entry, err)
					}
				case "memtable":
					if base.MemtableBytes, err = parseSize(v); err != nil {
						return fmt.Errorf("engine entry %q: %w", entry, err)
					}
				case "pinned":
					if !strings.HasPrefix(name, "monban") {
						return fmt.Errorf("engine entry %q: pinned is monban's PinnedMetaLimit", entry)
					}
					if base.PinnedMeta, err = parseSize(v); err != nil || base.PinnedMeta == 0 {
						return fmt.Errorf("engine entry %q: bad pinned size %q", entry, v)
					}
				default:
					return fmt.Errorf("engine entry %q: unknown key %q (bits, cache, memtable, pinned)", entry, k)
				}
			}
		}
		if bitsFixed {
			runs = append(runs, runSpec{name, base})
			continue
		}
		for _, b := range bitsList {
			o := base
			o.BitsPerKey = b
			runs = append(runs, runSpec{name, o})
		}
	}
	if len(runs) == 0 {
		return errors.New("no engines given")
	}

	// Directories.
	parent := *dirFlag
	removeParent := false
	if parent == "" {
		if parent, err = os.MkdirTemp("", "monban-peers-"); err != nil {
			return err
		}
		removeParent = true
	} else if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	cleanup := func() {
		if removeParent && !*keep {
			os.RemoveAll(parent)
		}
	}
	defer cleanup()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		stopChild(s)
		if *keep {
			logf("peers: %v", s)
		} else {
			logf("peers: %v, removing the run's directory", s)
			inFlight.remove()
		}
		cleanup()
		os.Exit(130)
	}()

	pio, err := openProcIO()
	if err != nil {
		return fmt.Errorf("need /proc/self/io: %w", err)
	}

	if *memProfile != "" {
		// The default rate samples one allocation per 512 KiB, a score of
		// samples in a heap of ten MiB; one per 4 KiB names every holder.
		runtime.MemProfileRate = 4096
	}
	p := &params{
		n: *n, m: *m, valSize: *valSize, scans: *scans, scanLen: *scanLen,
		seed: *seed, reopen: *reopen, keys: newKeyGen(*seed), workloads: workloads,
		threads: *threads, zipf: zipf, rangeSize: *rangeSize, memSample: *memSample,
		profileDir: *cpuProfile, heapProfileDir: *memProfile,
	}
	cfg := configRecord{
		Type: "config", Date: time.Now().Format(time.RFC3339), GoVersion: runtime.Version(),
		GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, GOMAXPROCS: runtime.GOMAXPROCS(0), NumCPU: runtime.NumCPU(),
		N: *n, M: *m, KeySize: keySize, ValSize: *valSize, Scans: *scans, ScanLen: *scanLen, Seed: *seed,
		Reopen: *reopen, Threads: *threads, Dist: *dist, Workloads: append([]string{wFill}, workloads...),
	}
	for i, r := range runs {
		cfg.Runs = append(cfg.Runs, fmt.Sprintf("%d:%s %s", i+1, r.engine, r.opts))
	}

	out := newReporter(os.Stdout, *jsonOut)
	out.config(cfg, parent)

	var firstErr error
	for i, r := range runs {
		var phases []phaseResult
		var summary runResult
		if *fresh {
			phases, summary, err = runFresh(i+1, r, workloads)
		} else {
			phases, summary, err = runOne(i+1, len(runs), r, p, pio, parent, *keep)
		}
		for _, ph := range phases {
			out.phase(ph)
		}
		if err != nil {
			summary.Error = err.Error()
			logf("run %d (%s): %v", i+1, r.engine, err)
			if firstErr == nil {
				firstErr = err
			}
		}
		out.run(summary)
	}
	out.flush()
	return firstErr
}

// inFlight is the directory of the run under way, removed at its end or
// on an interrupt (which exits before deferred calls run), unless -keep.
var inFlight runDir

type runDir struct {
	sync.Mutex
	dir string
}

func (r *runDir) set(dir string) {
	r.Lock()
	r.dir = dir
	r.Unlock()
}

// remove deletes the run's directory. On an interrupt the engine is still
// running and may create a file between RemoveAll's listing and its
// removal of the directory, which then fails as not empty: it tries again
// until the directory is gone, after which no file can be made in it.
func (r *runDir) remove() {
	r.Lock()
	defer r.Unlock()
	if r.dir == "" {
		return
	}
	for range 100 {
		if os.RemoveAll(r.dir) == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.dir = ""
}

// runOne opens a fresh database for r, fills it, runs the workloads, and
// reports a result per phase plus a summary of the run.
func runOne(idx, total int, r runSpec, p *params, pio *procIO, parent string, keep bool) ([]phaseResult, runResult, error) {
	tag := fmt.Sprintf("[run %d/%d %s %s]", idx, total, r.engine, r.opts)
	sum := runResult{Type: "run", Run: idx, Engine: r.engine, Bits: r.opts.BitsPerKey,
		CacheBytes: r.opts.CacheBytes, MemtableBytes: r.opts.MemtableBytes, PeakRSSScope: "run", PinnedMeta: r.opts.PinnedMeta}
	var phases []phaseResult

	dir, err := os.MkdirTemp(parent, fmt.Sprintf("run%02d-%s-b%d-", idx, r.engine, r.opts.BitsPerKey))
	if err != nil {
		return nil, sum, err
	}
	if !keep {
		inFlight.set(dir)
		defer inFlight.remove()
	}
	// The runs before this one wrote their tables and removed them, and
	// the disk may still be writing them back: a sync lets this run start
	// on a disk that does nothing else. Without it, the first engine of
	// each -sync run met fsyncs slower than the next engines did
	// (disk-fsync before its fill 223-346 us, against 144-259 for the
	// others, in six runs of three engines, results/2026-12-04-sync8-pwrite.txt).
	syscall.Sync()
	peak := runPeak{perPhase: true}
	if err := resetPeakRSS(); err != nil {
		sum.PeakRSSScope = "process"
		peak.perPhase = false
		logf("%s cannot reset peak RSS (%v); peak RSS is process-wide", tag, err)
	}
	// Memory freed by earlier runs is not always returned to the OS (e.g.
	// pebble's manually managed memory goes through the C allocator), so the
	// starting RSS is reported next to the peak.
	sum.StartRSSBytes, _ = currentRSS()

	e := registry[r.engine]()
	t0 := time.Now()
	if err := e.Open(dir, r.opts); err != nil {
		return nil, sum, fmt.Errorf("open: %w", err)
	}
	sum.OpenSecs = time.Since(t0).Seconds()
	closed := false
	defer func() {
		if !closed {
			e.Close()
		}
	}()

	flush := func() (float64, error) {
		t := time.Now()
		err := e.Flush()
		return time.Since(t).Seconds(), err
	}
	reopen := func() error {
		if !p.reopen {
			return nil
		}
		if err := e.Close(); err != nil {
			return fmt.Errorf("reopen: close: %w", err)
		}
		if err := e.Open(dir, r.opts); err != nil {
			return fmt.Errorf("reopen: open: %w", err)
		}
		return nil
	}

	measure := func(workload string, f func() (phaseOutcome, error)) error {
		l0 := -1
		if c, ok := e.(L0Counter); ok && workload != wFill {
			l0 = c.L0Tables()
		}
		runtime.GC()
		before, err := pio.snapshot()
		if err != nil {
			return err
		}
		peak.phaseStart()
		var sampler *memSampler
		if p.memSample > 0 {
			sampler = startMemSampler(e, p.memSample)
		}
		stopProfile, err := startCPUProfile(p.profileDir, filepath.Base(dir)+"-"+workload)
		if err != nil {
			return err
		}
		o, ferr := f()
		if err := stopProfile(); err != nil {
			return err
		}
		if err := writeHeapProfile(p.heapProfileDir, filepath.Base(dir)+"-"+workload); err != nil {
			return err
		}
		after, err := pio.snapshot()
		if err != nil {
			return err
		}
		ph := makePhase(idx, r, workload, o, diff(before, after))
		if sampler != nil {
			at, err := sampler.finish()
			if err != nil {
				return fmt.Errorf("memsample: %w", err)
			}
			ph.MemAtPeak = at.String()
			ph.Note = strings.TrimSpace(fmt.Sprintf("%s mem@peak: %s", ph.Note, ph.MemAtPeak))
		}
		if ph.PeakRSSBytes = peak.phaseEnd(); ph.PeakRSSBytes > 0 {
			ph.Note = strings.TrimSpace(fmt.Sprintf("peak=%s %s", fmtSize(ph.PeakRSSBytes), ph.Note))
		}
		if l0 >= 0 {
			ph.L0AtStart = &l0
			ph.Note = strings.TrimSpace(fmt.Sprintf("L0=%d %s", l0, ph.Note))
		}
		phases = append(phases, ph)
		logf("%s %-8s %9d ops %8.2fs %10.0f ops/s  syscr/op %.3f  rchar/op %.0f %s",
			tag, workload, ph.Ops, ph.Secs, ph.OpsPerSec, ph.SyscrPerOp, ph.RcharPerOp, ph.Note)
		if ferr != nil {
			return fmt.Errorf("%s: %w", workload, ferr)
		}
		return nil
	}

	// skip records a workload the engine cannot run, for want of iface.
	skip := func(workload, iface, note string) {
		logf("%s %s: engine does not implement %s, skipped", tag, workload, iface)
		phases = append(phases, phaseResult{Type: "phase", Run: idx, Engine: r.engine,
			Bits: r.opts.BitsPerKey, Workload: workload, Note: note})
	}

	var syncBefore time.Duration
	if r.opts.Sync {
		if syncBefore, err = diskSyncLatency(dir); err != nil {
			return phases, sum, err
		}
	}
	if err := measure(wFill, func() (phaseOutcome, error) { return doFill(e, p, flush) }); err != nil {
		return phases, sum, err
	}
	if r.opts.Sync {
		after, err := diskSyncLatency(dir)
		if err != nil {
			return phases, sum, err
		}
		fill := &phases[len(phases)-1]
		fill.Note += fmt.Sprintf(" disk-fsync=%.0f/%.0fus", syncBefore.Seconds()*1e6, after.Seconds()*1e6)
		logf("%s fill: the disk's 4 KiB write+fsync took %v before the fill, %v after", tag, syncBefore, after)
	}
	if sum.DirBytes, sum.TableBytes, err = dirSize(dir); err != nil {
		return phases, sum, err
	}
	if err := reopen(); err != nil {
		return phases, sum, err
	}

	for _, w := range p.workloads {
		var err error
		switch w {
		case wReadHit:
			err = measure(w, func() (phaseOutcome, error) { return doGets(e, p, w, true) })
		case wReadMiss:
			err = measure(w, func() (phaseOutcome, error) { return doGets(e, p, w, false) })
		case wOpen:
			err = measure(w, func() (phaseOutcome, error) { return doOpen(e, dir, r.opts) })
		case wDelMiss, wMixed:
			do := doDelMiss
			if w == wMixed {
				do = doMixed
			}
			err = measure(w, func() (phaseOutcome, error) { return do(e, p, flush) })
			if err == nil {
				err = reopen()
			}
		case wDelRange:
			rd, ok := e.(RangeDeleter)
			if !ok {
				skip(w, "RangeDeleter", "skipped: no DeleteRange")
				continue
			}
			// The plan sorts every key, work the phase should not pay for.
			plan, perr := planDelRange(p)
			if perr != nil {
				return phases, sum, perr
			}
			err = measure(w, func() (phaseOutcome, error) { return doDelRange(rd, e, p, plan, flush) })
			if err == nil {
				err = reopen()
			}
		case wPrefixMiss:
			if s, ok := e.(PrefixScanner); ok {
				err = measure(w, func() (phaseOutcome, error) { return doPrefixMiss(s, p) })
			} else {
				skip(w, "PrefixScanner", "skipped: no prefix iterator")
			}
		case wRangeMiss:
			if s, ok := e.(RangeScanner); ok {
				err = measure(w, func() (phaseOutcome, error) { return doRangeMiss(s, p) })
			} else {
				skip(w, "RangeScanner", "skipped: no bounded iterator")
			}
		case wScan:
			s, ok := e.(Scanner)
			if !ok {
				skip(w, "Scanner", "skipped: no Scan")
				continue
			}
			err = measure(w, func() (phaseOutcome, error) { return doScan(s, p) })
		}
		if err != nil {
			return phases, sum, err
		}
	}

	if d, ok := e.(Describer); ok {
		sum.Shape = d.Describe()
	}
	closed = true
	if err := e.Close(); err != nil {
		return phases, sum, fmt.Errorf("close: %w", err)
	}
	if _, err = peakRSS(); err != nil {
		return phases, sum, err
	}
	peak.fold()
	sum.PeakRSSBytes = peak.bytes
	return phases, sum, nil
}

func makePhase(idx int, r runSpec, workload string, o phaseOutcome, d delta) phaseResult {
	ph := phaseResult{
		Type: "phase", Run: idx, Engine: r.engine, Bits: r.opts.BitsPerKey,
		CacheBytes: r.opts.CacheBytes, MemtableBytes: r.opts.MemtableBytes,
		Workload: workload, Ops: o.ops, Secs: d.wall.Seconds(), CPUSecs: d.cpu.Seconds(),
		Syscr: d.io.syscr, Rchar: d.io.rchar, Syscw: d.io.syscw, Wchar: d.io.wchar,
		DiskReadBytes: d.io.readBytes, Bad: o.bad, Items: o.items, FlushSecs: o.flushSecs,
		Commits: o.commits, WALSyncs: o.walSyncs,
	}
	if o.ops > 0 {
		ops := float64(o.ops)
		ph.OpsPerSec = ops / d.wall.Seconds()
		ph.CPUusPerOp = d.cpu.Seconds() * 1e6 / ops
		ph.SyscrPerOp = float64(d.io.syscr) / ops
		ph.RcharPerOp = float64(d.io.rchar) / ops
		ph.WcharPerOp = float64(d.io.wchar) / ops
	}
	var notes []string
	if o.flushSecs > 0 {
		notes = append(notes, fmt.Sprintf("flush=%.2fs", o.flushSecs))
	}
	if workload == wScan && o.ops > 0 {
		notes = append(notes, fmt.Sprintf("items/scan=%.1f", float64(o.items)/float64(o.ops)))
	}
	if r.opts.Sync && o.commits > 0 {
		// Below 1 when concurrent sync writers shared fsyncs (group commit).
		notes = append(notes, fmt.Sprintf("syncs/commit=%.3f", float64(o.walSyncs)/float64(o.commits)))
	}
	if o.note != "" {
		notes = append(notes, o.note)
	}
	ph.Note = strings.Join(notes, " ")
	return ph
}

// reporter prints either aligned tables (at the end) or JSON lines (as
// results arrive).
type reporter struct {
	f      *os.File
	json   bool
	phases []phaseResult
	runs   []runResult
}

func newReporter(f *os.File, jsonOut bool) *reporter { return &reporter{f: f, json: jsonOut} }

func (r *reporter) emit(v any) {
	b, _ := json.Marshal(v)
	r.f.Write(append(b, '\n'))
}

func (r *reporter) config(c configRecord, dir string) {
	if r.json {
		r.emit(c)
		return
	}
	fmt.Fprintf(r.f, "# bench/peers %s  %s %s/%s GOMAXPROCS=%d NumCPU=%d\n", c.Date, c.GoVersion, c.GOOS, c.GOARCH, c.GOMAXPROCS, c.NumCPU)
	fmt.Fprintf(r.f, "# n=%d m=%d key=%dB val=%dB scans=%d scanlen=%d seed=%d reopen=%v threads=%d dist=%s workloads=%s\n",
		c.N, c.M, c.KeySize, c.ValSize, c.Scans, c.ScanLen, c.Seed, c.Reopen, c.Threads, c.Dist, strings.Join(c.Workloads, ","))
	fmt.Fprintf(r.f, "# dir=%s\n", dir)
	for _, s := range c.Runs {
		fmt.Fprintf(r.f, "# run %s\n", s)
	}
}

func (r *reporter) phase(p phaseResult) {
	if r.json {
		r.emit(p)
		return
	}
	r.phases = append(r.phases, p)
}

func (r *reporter) run(s runResult) {
	if r.json {
		r.emit(s)
		return
	}
	r.runs = append(r.runs, s)
}

func (r *reporter) flush() {
	if r.json {
		return
	}
	fmt.Fprintln(r.f)
	tw := tabwriter.NewWriter(r.f, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tengine\tbits\tworkload\tops\tsecs\tops/s\tcpu-us/op\tsyscr/op\trchar/op\twchar/op\t  note")
	for _, p := range r.phases {
		if p.Ops == 0 && p.Note != "" {
			fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t-\t-\t-\t-\t-\t-\t-\t  %s\n", p.Run, p.Engine, p.Bits, p.Workload, p.Note)
			continue
		}
		note := ""
		if p.Note != "" {
			note = "  " + p.Note
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%d\t%.2f\t%.0f\t%.2f\t%.3f\t%.1f\t%.1f\t%s\n",
			p.Run, p.Engine, p.Bits, p.Workload, p.Ops, p.Secs, p.OpsPerSec, p.CPUusPerOp,
			p.SyscrPerOp, p.RcharPerOp, p.WcharPerOp, note)
	}
	tw.Flush()
	fmt.Fprintln(r.f)
	tw = tabwriter.NewWriter(r.f, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tengine\tbits\tcache\tmemtable\tdir-after-fill\ttables\tstart-RSS\tpeak-RSS\t  shape at end")
	for _, s := range r.runs {
		rss := fmtSize(s.PeakRSSBytes)
		if s.PeakRSSScope != "run" {
			rss += "(process)"
		}
		shape := s.Shape
		if s.Error != "" {
			shape = "ERROR: " + s.Error
		}
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t  %s\n", s.Run, s.Engine, s.Bits,
			fmtSize(s.CacheBytes), fmtSize(s.MemtableBytes), fmtSize(s.DirBytes), fmtSize(s.TableBytes),
			fmtSize(s.StartRSSBytes), rss, shape)
	}
	tw.Flush()
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parseSize accepts plain bytes or a number with a unit: KiB/MiB/GiB (or
// K/M/G, also binary) and KB/MB/GB (decimal).
func parseSize(orig string) (int64, error) {
	s := strings.TrimSpace(orig)
	units := []struct {
		suffix string
		mult   int64
	}{
		{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1},
	}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("bad size %q", orig)
	}
	return int64(f * float64(mult)), nil
}

func fmtSize(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2fGiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1fMiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1fKiB", float64(b)/(1<<10))
	default:
		return fmt.Sprintf("%dB", b)
	}
}

// writeHeapProfile writes the heap profile to dir/name-heap.pprof; with dir
// empty it does nothing.
func writeHeapProfile(dir, name string) error {
	if dir == "" {
		return nil
	}
	f, err := createProfile(dir, name+"-heap.pprof")
	if err != nil {
		return fmt.Errorf("-memprofile: %w", err)
	}
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("-memprofile: %w", err)
	}
	return f.Close()
}

// createProfile creates the profile dir/file, and dir if it is missing.
func createProfile(dir, file string) (*os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return os.Create(filepath.Join(dir, file))
}

// startCPUProfile profiles the CPU into dir/name.pprof until the returned
// stop is called; with dir empty it does nothing.
func startCPUProfile(dir, name string) (stop func() error, err error) {
	if dir == "" {
		return func() error { return nil }, nil
	}
	f, err := createProfile(dir, name+".pprof")
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}
