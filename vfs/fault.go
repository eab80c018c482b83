package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"path"
	"path/filepath"
	"sync"
)

// ErrInjected is wrapped by every error a FaultFS injects, a dead disk's
// included. Crash's refusal when there is no MemFS to crash is a misuse,
// not a fault, and does not wrap it.
var ErrInjected = errors.New("vfs: injected fault")

// errNoCrash is returned by Crash when there is nothing to crash.
var errNoCrash = errors.New("vfs: Crash needs a FaultFS over a MemFS")

// Op is a kind of file-system operation, as counted and failed by FaultFS.
type Op uint8

const (
	// OpAny matches every kind: Count(OpAny) counts all operations, and
	// FailNth(OpAny, n) fails the nth operation whatever its kind.
	OpAny Op = iota
	OpCreate
	OpOpen
	OpRead // File.Read and File.ReadAt
	OpWrite
	OpSync
	OpSize
	OpClose // File.Close: the file is closed even when Close fails
	OpRename
	OpRemove
	OpList
	OpMkdirAll
	OpLock
	OpSyncDir
	OpReuse
	numOps
)

var opNames = [numOps]string{"any", "create", "open", "read", "write", "sync", "size",
	"close", "rename", "remove", "list", "mkdirall", "lock", "syncdir", "reuse"}

func (o Op) String() string {
	if o < numOps {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// FaultFS wraps an FS, counts its operations by kind, fails the ones it is
// told to with an error wrapping ErrInjected, and — over a MemFS —
// simulates a machine crash. The package doc shows how a crash test drives
// it. It is safe for concurrent use; operations are counted in the order
// they reach it.
type FaultFS struct {
	inner FS

	mu        sync.Mutex
	counts    [numOps]int64 // attempts per kind, failed ones included
	rules     []*faultRule
	nInjected int64  // operations a rule failed (not those a dead disk refused)
	dead      string // why every operation now fails; "" while alive
	deadErr   error  // what a dead disk's errors wrap beside ErrInjected
	torn      bool
	trace     func(n int64, op Op, name string, err error)
}

// Fault says which operations a FaultFS fails (Inject): those of kind Op
// on a name Match accepts, either exactly the Nth of them from now (a
// one-shot fault: the disk is healthy again after it) or, with Nth 0, each
// with probability P. The error wraps ErrInjected and, if set, Err — a
// syscall.Errno such as syscall.ENOSPC (disk full) or syscall.EIO — so
// that errors.Is finds both.
type Fault struct {
	Op    Op                     // OpAny matches every kind
	Match func(name string) bool // nil matches every name; see MatchBase
	Nth   int64                  // > 0: the nth matching operation from now, once
	P     float64                // with Nth 0: each matching operation, with probability P
	Seed  uint64                 // seeds P's draws: the same operations fail again
	Err   error                  // wrapped beside ErrInjected; nil for ErrInjected alone
	// Sticky makes the disk die when the fault fires: every later
	// operation, of any kind and name, fails too (with the same Err).
	Sticky bool
}

// faultRule is a Fault being applied: seen counts the matching operations
// since Inject; rng draws P's coin.
type faultRule struct {
	Fault
	seen int64
	rng  *rand.Rand
}

// matches reports whether the operation is one r counts.
func (r *faultRule) matches(op Op, name string) bool {
	return (r.Op == op || r.Op == OpAny) && (r.Match == nil || r.Match(name))
}

// fires counts a matching operation and reports whether r fails it, and
// whether r is spent.
func (r *faultRule) fires() (fire, spent bool) {
	r.seen++
	if r.Nth > 0 {
		return r.seen == r.Nth, r.seen >= r.Nth
	}
	return r.rng.Float64() < r.P, false
}

var (
	_ FS     = (*FaultFS)(nil)
	_ Reuser = (*FaultFS)(nil)
)

// NewFault wraps inner. With no faults set it only counts.
func NewFault(inner FS) *FaultFS { return &FaultFS{inner: inner} }

// MatchBase returns a Fault.Match that accepts a name whose last element
// matches one of the path.Match patterns: MatchBase("*.sst"),
// MatchBase("MANIFEST-*", "CURRENT*"), or a directory's own name for
// SyncDir and List.
func MatchBase(patterns ...string) func(name string) bool {
	return func(name string) bool {
		base := filepath.Base(name)
		for _, p := range patterns {
			if ok, _ := path.Match(p, base); ok {
				return true
			}
		}
		return false
	}
}

// Count returns how many operations of kind op have been attempted.
func (f *FaultFS) Count(op Op) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[op]
}

// Injected returns how many operations a fault failed since NewFault —
// those a dead disk refused afterwards not included.
func (f *FaultFS) Injected() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.nInjected
}

// Inject adds ft to the faults in force. Faults apply independently; when
// two fire on one operation it fails once. A failed Create, Open, Reuse or
// Lock has no effect on the inner FS; a failed Rename, Remove, Write, Sync or
// SyncDir is not passed on either, except a torn Write (SetTornWrites).
// Heal removes every fault.
func (f *FaultFS) Inject(ft Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := &faultRule{Fault: ft}
	if ft.Nth <= 0 {
		r.rng = rand.New(rand.NewPCG(ft.Seed, 0x6661756c74))
	}
	f.rules = append(f.rules, r)
}

// FailNth makes the nth operation of kind op from now (n >= 1) fail, once:
// Inject(Fault{Op: op, Nth: n}).
func (f *FaultFS) FailNth(op Op, n int64) { f.Inject(Fault{Op: op, Nth: n}) }

// FailFromNth makes the nth operation of kind op from now (n >= 1) fail,
// and every operation of any kind after it: the disk died. To let exactly
// k more operations succeed, use FailFromNth(OpAny, k+1).
func (f *FaultFS) FailFromNth(op Op, n int64) { f.Inject(Fault{Op: op, Nth: n, Sticky: true}) }

// SetTornWrites chooses what an injected Write fault does: when on, the
// first half of the bytes (rounded down) reach the file before the error,
// as when a disk fills up or dies mid-write.
func (f *FaultFS) SetTornWrites(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.torn = on
}

// SetTrace calls fn for every operation as it is counted, with its number
// among all operations (what FailFromNth(OpAny, n) would kill) and the
// injected error, if any — so a failing crash test can print the steps
// that led to it. fn runs under the FaultFS's lock: it must not call f.
func (f *FaultFS) SetTrace(fn func(n int64, op Op, name string, injected error)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.trace = fn
}

// Heal forgets every pending fault and brings a dead disk back to life
// (not a crashed one: Crash is final). Counts are kept.
func (f *FaultFS) Heal() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
	if f.dead != "crashed" {
		f.dead, f.deadErr = "", nil
	}
}

// Crash simulates a machine crash: from now on every operation on f and on
// files opened through it fails, and the returned MemFS holds only what
// was durable in the inner MemFS (see MemFS.CrashClone). Run recovery on
// the returned MemFS (wrapped in a fresh FaultFS if it is to crash again).
func (f *FaultFS) Crash() (*MemFS, error) {
	return f.CrashKeeping(func(int) bool { return false })
}

// CrashKeeping is Crash for a crash that also kept the directory changes
// no SyncDir made durable that keep picks (MemFS.CrashCloneKeeping).
func (f *FaultFS) CrashKeeping(keep func(i int) bool) (*MemFS, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	clone := f.CrashCloneKeeping(keep)
	if clone == nil { // a FaultFS over no MemFS
		return nil, errNoCrash
	}
	f.dead = "crashed"
	return clone, nil
}

// CrashClone lets a FaultFS stand in for its MemFS, so that a FaultFS
// over a FaultFS over a MemFS can crash too; nil when there is no MemFS
// below.
func (f *FaultFS) CrashClone() *MemFS {
	return f.CrashCloneKeeping(func(int) bool { return false })
}

// CrashCloneKeeping is CrashClone keeping the unsynced directory changes
// keep picks (MemFS.CrashCloneKeeping).
func (f *FaultFS) CrashCloneKeeping(keep func(i int) bool) *MemFS {
	m, ok := f.inner.(interface{ CrashCloneKeeping(func(int) bool) *MemFS })
	if !ok {
		return nil
	}
	return m.CrashCloneKeeping(keep)
}

// fault counts one operation of kind op on name and returns the injected
// error it must fail with, or nil to let it through.
func (f *FaultFS) fault(op Op, name string) error {
	_, err := f.check(op, name)
	return err
}

// check is fault that also says whether a rule fired just now with torn
// writes on, so a Write may be torn, rather than the disk being dead.
func (f *FaultFS) check(op Op, name string) (torn bool, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts[op]++
	f.counts[OpAny]++
	if f.trace != nil {
		defer func() { f.trace(f.counts[OpAny], op, name, err) }()
	}
	if f.dead != "" {
		return false, f.injected(op, name, f.dead, f.deadErr)
	}
	kept := f.rules[:0]
	for _, r := range f.rules {
		if !r.matches(op, name) {
			kept = append(kept, r)
			continue
		}
		fire, spent := r.fires()
		if !spent {
			kept = append(kept, r)
		}
		if !fire {
			continue
		}
		reason := fmt.Sprintf("%s #%d", r.Op, r.seen)
		if r.Nth == 0 {
			reason = fmt.Sprintf("%s, p=%g, seed %d, #%d", r.Op, r.P, r.Seed, r.seen)
		}
		if err == nil {
			err = f.injected(op, name, reason, r.Err)
			f.nInjected++
		}
		if r.Sticky {
			f.dead, f.deadErr = "disk dead since "+reason, r.Err
		}
	}
	clear(f.rules[len(kept):])
	f.rules = kept
	return err != nil && f.torn, err
}

// injected makes the error of a failed operation: a *fs.PathError wrapping
// ErrInjected and, when not nil, cause.
func (f *FaultFS) injected(op Op, name, reason string, cause error) error {
	err := fmt.Errorf("%w (%s)", ErrInjected, reason)
	if cause != nil {
		err = fmt.Errorf("%w: %w (%s)", cause, ErrInjected, reason)
	}
	return &fs.PathError{Op: op.String(), Path: name, Err: err}
}

func (f *FaultFS) Create(name string) (File, error) {
	if err := f.fault(OpCreate, name); err != nil {
		return nil, err
	}
	inner, err := f.inner.Create(name)
	if err != nil {
		return nil, err
	}
	return &faultFile{fs: f, inner: inner, name: name}, nil
}

func (f *FaultFS) Open(name string) (File, error) {
	if err := f.fault(OpOpen, name); err != nil {
		return nil, err
	}
	inner, err := f.inner.Open(name)
	if err != nil {
		return nil, err
	}
	return &faultFile{fs: f, inner: inner, name: name}, nil
}

func (f *FaultFS) Rename(oldname, newname string) error {
	if err := f.fault(OpRename, oldname); err != nil {
		return err
	}
	return f.inner.Rename(oldname, newname)
}

func (f *FaultFS) Remove(name string) error {
	if err := f.fault(OpRemove, name); err != nil {
		return err
	}
	return f.inner.Remove(name)
}

func (f *FaultFS) List(dir string) ([]string, error) {
	if err := f.fault(OpList, dir); err != nil {
		return nil, err
	}
	return f.inner.List(dir)
}

// readDir lets ReadDir ask the inner FS, as one List operation, counted
// and failed.
func (f *FaultFS) readDir(dir string) ([]Entry, error) {
	if err := f.fault(OpList, dir); err != nil {
		return nil, err
	}
	return ReadDir(f.inner, dir)
}

func (f *FaultFS) MkdirAll(dir string) error {
	if err := f.fault(OpMkdirAll, dir); err != nil {
		return err
	}
	return f.inner.MkdirAll(dir)
}

func (f *FaultFS) Lock(name string) (io.Closer, error) {
	if err := f.fault(OpLock, name); err != nil {
		return nil, err
	}
	return f.inner.Lock(name)
}

func (f *FaultFS) SyncDir(dir string) error {
	if err := f.fault(OpSyncDir, dir); err != nil {
		return err
	}
	return f.inner.SyncDir(dir)
}

// Reuse passes Reuse on, counted and failed as OpReuse on oldname, and
// wraps the file as Create's are, so that Write and Sync faults and torn
// writes apply to it. A FaultFS is a Reuser whatever it wraps: over an FS
// that is not one, Reuse fails with an error wrapping
// errors.ErrUnsupported, uncounted — no operation reached the disk — and
// the caller falls back to Create as it would without a Reuser.
func (f *FaultFS) Reuse(oldname, newname string) (File, error) {
	r, ok := f.inner.(Reuser)
	if !ok {
		return nil, &fs.PathError{Op: OpReuse.String(), Path: oldname, Err: errors.ErrUnsupported}
	}
	if err := f.fault(OpReuse, oldname); err != nil {
		return nil, err
	}
	inner, err := r.Reuse(oldname, newname)
	if err != nil {
		return nil, err
	}
	return &faultFile{fs: f, inner: inner, name: newname}, nil
}
