package lsm

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// Single faults of every kind (issue 12). TestFaults runs one fixed
// workload — puts, deletes (of absent keys too), batches, gets, bounded
// scans, flushes and compactions over 4 KiB memtables, the first half with
// Options.Sync — once per fault: a single failed operation of one kind (a
// one-shot fault at the Nth matching operation, N strided over all of the
// workload's), or each such operation failing with a small probability.
// It checks, step by step and after a reopen on the healed disk:
//
//  1. An error a call returns wraps vfs.ErrInjected and the injected errno
//     (syscall.EIO, or syscall.ENOSPC for a full disk): the cause survives.
//  2. A read returns the model's value, ErrNotFound only for a key the
//     model lacks, or an error: never a wrong value, never a false
//     ErrNotFound, never a wrong key in a scan.
//  3. Once Stats.BackgroundError is set, every write fails with it (a
//     Delete the filters prove unnecessary and an empty batch included),
//     and it stays set: the DB does not retry. A write that failed while it
//     is nil was transient: the next write, on the healed disk, succeeds.
//  4. A write, sync, create, rename or directory-sync fault that fired is
//     reported: by the call that met it or by the sticky error.
//  5. The reopen succeeds and holds exactly the acknowledged writes (plus,
//     possibly, the one write that failed with the sticky error), a full
//     scan works, and no stray table or second WAL is left.
//
// By default each kind gets one run, a one-shot fault at a random N or a
// probabilistic one, as the seed falls (a few seconds under -race); MONBAN_FAULT_FULL=1 fails
// every matching operation in turn (MONBAN_FAULT_FULL=k every kth) and
// runs 20 probabilistic seeds per kind. MONBAN_FAULT_SEED changes the workload.
func TestFaults(t *testing.T) {
	full := os.Getenv("MONBAN_FAULT_FULL") != ""
	stride, _ := strconv.ParseInt(os.Getenv("MONBAN_FAULT_FULL"), 10, 64)
	wseed := uint64(1)
	if s := os.Getenv("MONBAN_FAULT_SEED"); s != "" {
		wseed, _ = strconv.ParseUint(s, 10, 64)
	}
	pseed := modelSeed(t)
	// Count each kind's matching operations in one clean run.
	kinds := faultKinds()
	counts := make([]atomic.Int64, len(kinds))
	clean := newFaultRun(t, faultKind{name: "clean run"}, wseed)
	matchers := make([]func(string) bool, len(kinds))
	for i, k := range kinds {
		matchers[i] = k.matcher(clean)
	}
	clean.ff.SetTrace(func(_ int64, op vfs.Op, name string, _ error) {
		for i, k := range kinds {
			if (k.op == vfs.OpAny || op == k.op) && (matchers[i] == nil || matchers[i](name)) {
				counts[i].Add(1)
			}
		}
	})
	clean.run()
	for i, kind := range kinds {
		t.Run(kind.name, func(t *testing.T) {
			m := counts[i].Load()
			if m == 0 {
				t.Fatalf("the workload makes no %s operation", kind.name)
			}
			// By default one run: one-shot or random, by the seed's toss.
			kseed := pseed ^ uint64(kind.op)<<32 ^ uint64(i)<<40
			oneShot, seeds := rand.New(rand.NewPCG(kseed, 7)).IntN(2) == 0, 0
			if !oneShot {
				seeds = 1
			}
			var points []int64
			if full || oneShot {
				points = faultPoints(m, full, stride, kseed)
			}
			if full {
				seeds = 20
			}
			var sum faultSummary
			for _, n := range points {
				r := newFaultRun(t, kind, wseed)
				r.ff.Inject(vfs.Fault{Op: kind.op, Match: kind.matcher(r), Nth: n, Err: kind.errno})
				r.oneShot = true
				r.desc = fmt.Sprintf("%s at matching op %d of %d (workload seed %d)", kind.name, n, m, wseed)
				sum.add(r.run())
			}
			for i := range seeds {
				seed := kseed + uint64(i)
				p := kind.p
				if p == 0 {
					p = min(3/float64(m), 0.5)
				}
				r := newFaultRun(t, kind, wseed)
				r.ff.Inject(vfs.Fault{Op: kind.op, Match: kind.matcher(r), P: p, Seed: seed, Err: kind.errno})
				r.desc = fmt.Sprintf("%s with p=%.4f, fault seed %d (MONBAN_SEED=%d; workload seed %d)", kind.name, p, seed, pseed, wseed)
				sum.add(r.run())
			}
			at := fmt.Sprint(points)
			if full {
				at = fmt.Sprintf("every %dth N of 1..%d", max(stride, 1), m)
			}
			t.Logf("%d matching ops; one-shot at %s, %d random: %s", m, at, seeds, sum)
		})
	}
}

// faultPoints returns the Ns to fail: every stride-th of 1..m in full
// runs, else one drawn from seed (another each run, so that CI covers the
// range over time; MONBAN_SEED repeats one).
func faultPoints(m int64, full bool, stride int64, seed uint64) []int64 {
	if !full {
		return []int64{1 + rand.New(rand.NewPCG(seed, 3)).Int64N(m)}
	}
	var ns []int64
	for n := int64(1); n <= m; n += max(stride, 1) {
		ns = append(ns, n)
	}
	return ns
}

// Phases of the workload, for faults that should hit reads of one kind
// only: the workload waits for background work before every step, so a
// read during a Get is the Get's.
const (
	phaseWrite int32 = iota
	phaseGet
	phaseIter
	phaseCompact // Compact, CompactRange, and background work between steps
)

type faultKind struct {
	name     string
	op       vfs.Op
	patterns []string // names (vfs.MatchBase); none: every name
	phases   []int32  // only during these phases; none: always
	errno    error
	torn     bool // a failed write hands half its bytes to the file
	// surfaces: a fired fault must fail a call or set the sticky error.
	surfaces bool
	// p is the probabilistic runs' failure rate; 0: three per run on
	// average. Faults that only fail reads can come thick.
	p float64
}

func faultKinds() []faultKind {
	tables, logs, meta := []string{"*.sst"}, []string{"*.log"}, []string{"MANIFEST-*", "CURRENT*"}
	eio, enospc := error(syscall.EIO), error(syscall.ENOSPC)
	return []faultKind{
		{name: "write-wal", op: vfs.OpWrite, patterns: logs, errno: eio, torn: true, surfaces: true},
		{name: "write-table", op: vfs.OpWrite, patterns: tables, errno: eio, surfaces: true},
		{name: "write-manifest", op: vfs.OpWrite, patterns: meta, errno: eio, torn: true, surfaces: true},
		{name: "sync-wal", op: vfs.OpSync, patterns: logs, errno: eio, surfaces: true},
		{name: "sync-table", op: vfs.OpSync, patterns: tables, errno: eio, surfaces: true},
		{name: "sync-manifest", op: vfs.OpSync, patterns: meta, errno: eio, surfaces: true},
		{name: "create", op: vfs.OpCreate, errno: eio, surfaces: true},
		{name: "open", op: vfs.OpOpen, errno: eio},
		{name: "open-get", op: vfs.OpOpen, patterns: tables, phases: []int32{phaseGet}, errno: eio, p: 0.3},
		{name: "open-iter", op: vfs.OpOpen, patterns: tables, phases: []int32{phaseIter}, errno: eio, p: 0.3},
		{name: "read-get", op: vfs.OpRead, patterns: tables, phases: []int32{phaseGet}, errno: eio, p: 0.1},
		{name: "read-iter", op: vfs.OpRead, patterns: tables, phases: []int32{phaseIter}, errno: eio, p: 0.05},
		{name: "read-wal", op: vfs.OpRead, patterns: logs, errno: eio},
		{name: "read-manifest", op: vfs.OpRead, patterns: meta, errno: eio},
		{name: "read-compaction", op: vfs.OpRead, patterns: tables, phases: []int32{phaseCompact}, errno: eio},
		{name: "rename", op: vfs.OpRename, errno: eio, surfaces: true},
		{name: "remove", op: vfs.OpRemove, errno: eio},
		{name: "syncdir", op: vfs.OpSyncDir, errno: eio, surfaces: true},
		{name: "disk-full", op: vfs.OpWrite, errno: enospc, torn: true, surfaces: true},
		// Any operation at all: sizes, closes, listings and the lock too.
		{name: "any", op: vfs.OpAny, errno: eio, torn: true},
	}
}

// matcher returns the vfs.Fault.Match of k for the run r.
func (k faultKind) matcher(r *faultRun) func(string) bool {
	var names func(string) bool
	if len(k.patterns) > 0 {
		names = vfs.MatchBase(k.patterns...)
	}
	if names == nil && len(k.phases) == 0 {
		return nil
	}
	return func(name string) bool {
		return (names == nil || names(name)) && (len(k.phases) == 0 || slices.Contains(k.phases, r.phase.Load()))
	}
}

// faultOutcome is what one run saw.
type faultOutcome struct {
	fired     bool
	failedOp  string // the first call that returned an injected error
	sticky    bool   // Stats.BackgroundError was set
	recovered bool   // a write succeeded after a failed one
	lostMaybe bool   // the failed write was found after reopen
}

type faultSummary struct {
	runs, fired, sticky, recovered, absorbed, maybe int
	failedOps                                       map[string]int
}

func (s *faultSummary) add(o faultOutcome) {
	s.runs++
	if !o.fired {
		return
	}
	s.fired++
	if o.sticky {
		s.sticky++
	}
	if o.recovered {
		s.recovered++
	}
	if o.lostMaybe {
		s.maybe++
	}
	if o.failedOp == "" && !o.sticky {
		s.absorbed++
	}
	if o.failedOp != "" {
		if s.failedOps == nil {
			s.failedOps = map[string]int{}
		}
		s.failedOps[o.failedOp]++
	}
}

func (s faultSummary) String() string {
	var ops []string
	for op, n := range s.failedOps {
		ops = append(ops, fmt.Sprintf("%s %d", op, n))
	}
	sort.Strings(ops)
	return fmt.Sprintf("fired %d of %d; first error from [%s]; read-only %d; later write succeeded %d; absorbed (no call failed, not read-only) %d; failed write present after reopen %d",
		s.fired, s.runs, strings.Join(ops, ", "), s.sticky, s.recovered, s.absorbed, s.maybe)
}

// faultRun is one run of the workload against a model.
type faultRun struct {
	t       *testing.T
	kind    faultKind
	seed    uint64
	desc    string
	oneShot bool
	full    bool
	ff      *vfs.FaultFS
	phase   atomic.Int32
	d       *DB

	acked model
	// maybe is the state with the last failed write applied, while no
	// write has succeeded since: a write that failed with the sticky error
	// may have reached the WAL.
	maybe model
	// transient is set after a write failed with no sticky error: the
	// next write must succeed on a healthy disk.
	transient error
	bg        error // the sticky error, once seen
	out       faultOutcome
}

func newFaultRun(t *testing.T, kind faultKind, seed uint64) *faultRun {
	ff := vfs.NewFault(vfs.NewMem())
	ff.SetTornWrites(kind.torn)
	return &faultRun{t: t, kind: kind, seed: seed, desc: kind.name + " (no fault)", ff: ff, acked: model{},
		full: os.Getenv("MONBAN_FAULT_FULL") != ""}
}

// faultSteps is the workload's length by default and in full runs: with
// 4 KiB memtables, 3000 steps make about 60 flushes and 30 compactions.
const faultSteps, faultStepsFull = 1000, 3000

// faultManifestSize makes the manifest roll over every few dozen edits, so
// that rollovers (CURRENT.tmp, rename, directory syncs) meet faults too.
const faultManifestSize = 2 << 10

func faultOptions(fs vfs.FS, sync bool) *Options {
	return &Options{
		FS: fs, Sync: sync, MemtableSize: 4 << 10, BlockSize: 512, BlockCacheSize: 8 << 10,
		MaxOpenFiles: 2, TargetFileSize: 8 << 10, LBaseMaxBytes: 16 << 10, L0CompactionThreshold: 2,
	}
}

func (r *faultRun) fatalf(format string, args ...any) {
	r.t.Helper()
	r.t.Fatalf("%s: %s", r.desc, fmt.Sprintf(format, args...))
}

// run performs the workload, then checks a reopen on the healed disk.
func (r *faultRun) run() faultOutcome {
	rng := rand.New(rand.NewPCG(r.seed, 12))
	steps := faultSteps
	if r.full {
		steps = faultStepsFull
	}
	var err error
	r.d, err = Open("/db", faultOptions(r.ff, true))
	if err != nil {
		r.failed("Open", err)
	} else {
		r.d.setMaxManifestSize(faultManifestSize)
		r.steps(rng, 0, steps/2)
		if r.d != nil && r.maybe == nil {
			r.reopen(false)
		}
		if r.d != nil {
			r.steps(rng, steps/2, steps)
		}
		if r.d != nil {
			r.close()
		}
	}
	r.out.fired = r.ff.Injected() > 0
	r.checkReopen()
	return r.out
}

// reopen closes the DB and opens it again with Sync set to sync.
func (r *faultRun) reopen(sync bool) {
	r.close()
	d, err := Open("/db", faultOptions(r.ff, sync))
	if err != nil {
		r.failed("Open", err)
		return
	}
	d.setMaxManifestSize(faultManifestSize)
	r.d, r.bg, r.transient = d, nil, nil
}

func (r *faultRun) close() {
	if err := r.d.Close(); err != nil {
		r.checkCause("Close", err)
		if r.bg == nil || !errors.Is(err, r.bg) {
			r.failed("Close", err)
		}
	}
	r.d = nil
}

// checkCause is property 1.
func (r *faultRun) checkCause(what string, err error) {
	r.t.Helper()
	if !errors.Is(err, vfs.ErrInjected) {
		r.fatalf("%s: %v: not an injected fault's error", what, err)
	}
	if r.kind.errno != nil && !errors.Is(err, r.kind.errno) {
		r.fatalf("%s: %v: lost the errno %v", what, err, r.kind.errno)
	}
}

func (r *faultRun) failed(what string, err error) {
	r.t.Helper()
	r.checkCause(what, err)
	if r.out.failedOp == "" {
		r.out.failedOp = what
	}
}

// steps runs steps [from, to) of the workload; it stops early once a reopen
// could not tell the model.
func (r *faultRun) steps(rng *rand.Rand, from, to int) {
	key := func() string { return fmt.Sprintf("k%03d", rng.IntN(300)) }
	// Random letters: values compress by about a third only, so tables
	// outgrow the table cache.
	value := func(i int) string {
		b := fmt.Appendf(nil, "v%05d-", i)
		for range 30 + rng.IntN(90) {
			b = append(b, byte('a'+rng.IntN(26)))
		}
		return string(b)
	}
	for i := from; i < to; i++ {
		r.phase.Store(phaseCompact)
		r.d.waitIdle()
		r.phase.Store(phaseWrite)
		r.checkSticky()
		next := maps.Clone(r.acked)
		switch x := rng.IntN(1000); {
		case x < 350:
			k, v := key(), value(i)
			next[k] = v
			r.write("Put", next, func() error { return r.d.Put([]byte(k), []byte(v)) })
		case x < 450:
			k := key()
			delete(next, k)
			r.write("Delete", next, func() error { return r.d.Delete([]byte(k)) })
		case x < 500:
			k := fmt.Sprintf("absent%04d", i)
			r.write("Delete(absent)", next, func() error { return r.d.Delete([]byte(k)) })
		case x < 600:
			var b Batch
			for range rng.IntN(5) + 2 {
				k := key()
				if rng.IntN(3) == 0 {
					b.Delete([]byte(k))
					delete(next, k)
				} else {
					v := value(i)
					b.Put([]byte(k), []byte(v))
					next[k] = v
				}
			}
			r.write("Batch", next, func() error { return r.d.Write(&b) })
		case x < 850:
			r.phase.Store(phaseGet)
			r.get(key())
		case x < 920:
			r.phase.Store(phaseIter)
			lo, hi := key(), key()
			if hi < lo {
				lo, hi = hi, lo
			}
			r.scan(lo, hi)
		case x < 990:
			r.write("Flush", next, r.d.Flush)
		case x < 995:
			r.phase.Store(phaseCompact)
			r.write("Compact", next, r.d.Compact)
		default:
			r.phase.Store(phaseCompact)
			lo, hi := key(), key()
			r.write("CompactRange", next, func() error { return r.d.CompactRange([]byte(min(lo, hi)), []byte(max(lo, hi))) })
		}
	}
	r.phase.Store(phaseCompact)
	r.d.waitIdle()
	r.phase.Store(phaseWrite)
	r.checkSticky()
}

// checkSticky notices the sticky error and checks property 3 for writes
// that write nothing.
func (r *faultRun) checkSticky() {
	r.t.Helper()
	bg := r.d.Stats().BackgroundError
	switch {
	case r.bg != nil && bg != r.bg:
		r.fatalf("Stats.BackgroundError went from %v to %v", r.bg, bg)
	case bg == nil || r.bg != nil:
		return
	}
	r.checkCause("Stats.BackgroundError", bg)
	r.bg, r.out.sticky = bg, true
	if err := r.d.Delete([]byte("never-written")); !errors.Is(err, bg) {
		r.fatalf("Delete of an absent key on a read-only DB: %v, want %v", err, bg)
	}
	if err := r.d.Write(&Batch{}); !errors.Is(err, bg) {
		r.fatalf("empty Write on a read-only DB: %v, want %v", err, bg)
	}
	if err := r.d.Flush(); !errors.Is(err, bg) {
		r.fatalf("Flush on a read-only DB: %v, want %v", err, bg)
	}
}

// write runs a call that changes the DB to next if it succeeds.
func (r *faultRun) write(what string, next model, do func() error) {
	r.t.Helper()
	before := r.ff.Injected()
	err := do()
	if r.bg != nil {
		if !errors.Is(err, r.bg) {
			r.fatalf("%s on a read-only DB: %v, want the sticky error %v", what, err, r.bg)
		}
		return
	}
	if err == nil {
		if r.transient != nil {
			r.out.recovered = true
		}
		r.acked, r.maybe, r.transient = next, nil, nil
		return
	}
	r.failed(what, err)
	r.maybe = next
	if r.d.Stats().BackgroundError != nil {
		return
	}
	if r.transient != nil && r.oneShot && r.ff.Injected() == before {
		r.fatalf("%s failed on a healed disk with no BackgroundError: %v (after an earlier failure: %v)", what, err, r.transient)
	}
	r.transient = err
}

// get checks property 2 for one key.
func (r *faultRun) get(k string) {
	r.t.Helper()
	v, err := r.d.Get([]byte(k))
	want, ok := r.acked[k]
	switch {
	case err == nil && (!ok || string(v) != want):
		r.fatalf("Get(%s) = %q, want %q (present %v)", k, v, want, ok)
	case errors.Is(err, ErrNotFound) && ok:
		r.fatalf("Get(%s): ErrNotFound, want %q", k, want)
	case err != nil && !errors.Is(err, ErrNotFound):
		r.failed("Get", err)
	}
}

// scan checks property 2 for a bounded scan: every key it yields has the
// model's value; without an error it yields every key in [lo, hi).
func (r *faultRun) scan(lo, hi string) {
	r.t.Helper()
	it := r.d.NewIter(&IterOptions{LowerBound: []byte(lo), UpperBound: []byte(hi)})
	n := 0
	for k, v := range it.All() {
		want, ok := r.acked[string(k)]
		if !ok || want != string(v) || string(k) < lo || string(k) >= hi {
			r.fatalf("scan [%s, %s): %s = %q, want %q (present %v)", lo, hi, k, v, want, ok)
		}
		n++
	}
	if err := it.Close(); err != nil {
		r.failed("Iter", err)
		return
	}
	want := 0
	for k := range r.acked {
		if k >= lo && k < hi {
			want++
		}
	}
	if n != want {
		r.fatalf("scan [%s, %s): %d keys, want %d", lo, hi, n, want)
	}
}

// checkReopen is properties 4 and 5.
func (r *faultRun) checkReopen() {
	r.t.Helper()
	if r.out.fired && r.kind.surfaces && r.out.failedOp == "" && !r.out.sticky {
		r.fatalf("the fault fired, but no call failed and the DB is not read-only")
	}
	r.ff.Heal()
	r.ff.SetTrace(nil)
	d, err := Open("/db", faultOptions(r.ff, false))
	if err != nil {
		r.fatalf("reopen on the healed disk: %v", err)
	}
	defer d.Close()
	got := dbContents(r.t, d)
	switch {
	case maps.Equal(got, r.acked):
	case r.maybe != nil && maps.Equal(got, r.maybe):
		r.out.lostMaybe = true
	default:
		r.fatalf("after reopen the DB holds %d keys, acknowledged %d (failed write pending: %v)\n%s",
			len(got), len(r.acked), r.maybe != nil, diffModels(got, r.acked))
	}
	if err := d.Stats().BackgroundError; err != nil {
		r.fatalf("BackgroundError after reopen: %v", err)
	}
	checkNoOrphans(r.t, r.seed, r.ff, d)
	if err := d.Put([]byte("after"), []byte("reopen")); err != nil {
		r.fatalf("Put after reopen: %v", err)
	}
	mustGet(r.t, d, "after", "reopen")
}

// TestFaultFlushNotRetried pins down what the DB does with a transient
// flush failure: it does not retry. The table write fails once (the disk is
// healthy right after), the error is sticky, the memtable stays queued and
// readable, a second Flush reports the same error without trying again,
// and only a reopen, replaying the WAL, writes the memtable out.
func TestFaultFlushNotRetried(t *testing.T) {
	ff := vfs.NewFault(vfs.NewMem())
	d := openMem(t, ff, faultOptions(ff, false))
	for i := range 20 {
		if err := d.Put(fmt.Appendf(nil, "k%02d", i), []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	ff.Inject(vfs.Fault{Op: vfs.OpWrite, Match: vfs.MatchBase("*.sst"), Nth: 1, Err: syscall.EIO})
	err := d.Flush()
	if !errors.Is(err, syscall.EIO) {
		t.Fatalf("Flush: %v, want the injected EIO", err)
	}
	creates := ff.Count(vfs.OpCreate)
	st := d.Stats()
	if st.BackgroundError == nil || st.MemtablesQueued != 1 || st.Flushes != 0 {
		t.Fatalf("after the failed flush: BackgroundError %v, %d memtables queued, %d flushes; want the error, 1, 0",
			st.BackgroundError, st.MemtablesQueued, st.Flushes)
	}
	if err2 := d.Flush(); err2 != st.BackgroundError {
		t.Fatalf("second Flush: %v, want the sticky %v", err2, st.BackgroundError)
	}
	if err := d.Compact(); err != st.BackgroundError {
		t.Fatalf("Compact: %v, want the sticky %v", err, st.BackgroundError)
	}
	if n := ff.Count(vfs.OpCreate); n != creates {
		t.Fatalf("%d files created after the failure: the DB retried", n-creates)
	}
	mustGet(t, d, "k07", "v") // from the queued memtable
	d.Close()
	d = openMem(t, ff, faultOptions(ff, false))
	defer d.Close()
	mustGet(t, d, "k07", "v")
	if st := d.Stats(); st.BackgroundError != nil || st.Total.Files != 1 {
		t.Fatalf("after reopen: BackgroundError %v, %d tables; want nil, 1 (the replayed WAL)", st.BackgroundError, st.Total.Files)
	}
}
