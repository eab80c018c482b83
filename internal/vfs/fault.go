package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"
)

// ErrInjected is wrapped by every error a FaultFS makes up.
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
	numOps
)

var opNames = [numOps]string{"any", "create", "open", "read", "write", "sync", "size",
	"close", "rename", "remove", "list", "mkdirall", "lock", "syncdir"}

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

	mu     sync.Mutex
	counts [numOps]int64 // attempts per kind, failed ones included
	rules  []faultRule
	dead   string // why every operation now fails; "" while alive
	torn   bool
	trace  func(n int64, op Op, name string, err error)
}

// faultRule fails the operation that brings counts[op] to at; a sticky
// rule then fails everything after it too.
type faultRule struct {
	op     Op
	at     int64
	sticky bool
}

var _ FS = (*FaultFS)(nil)

// NewFault wraps inner. With no faults set it only counts.
func NewFault(inner FS) *FaultFS { return &FaultFS{inner: inner} }

// Count returns how many operations of kind op have been attempted.
func (f *FaultFS) Count(op Op) int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[op]
}

// FailNth makes the nth operation of kind op from now (n >= 1) fail, once.
// A failed Create, Open or Lock has no effect on the inner FS; a failed
// Rename, Remove, Write, Sync or SyncDir is not passed on either, except a
// torn Write (SetTornWrites).
func (f *FaultFS) FailNth(op Op, n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, faultRule{op: op, at: f.counts[op] + n})
}

// FailFromNth makes the nth operation of kind op from now (n >= 1) fail,
// and every operation of any kind after it: the disk died. To let exactly
// k more operations succeed, use FailFromNth(OpAny, k+1).
func (f *FaultFS) FailFromNth(op Op, n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, faultRule{op: op, at: f.counts[op] + n, sticky: true})
}

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
		f.dead = ""
	}
}

// Crash simulates a machine crash: from now on every operation on f and on
// files opened through it fails, and the returned MemFS holds only what
// was durable in the inner MemFS (see MemFS.CrashClone). Run recovery on
// the returned MemFS (wrapped in a fresh FaultFS if it is to crash again).
func (f *FaultFS) Crash() (*MemFS, error) {
	m, ok := f.inner.(interface{ CrashClone() *MemFS })
	if !ok {
		return nil, errNoCrash
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dead = "crashed"
	return m.CrashClone(), nil
}

// CrashClone lets a FaultFS stand in for its MemFS, so that a FaultFS over
// a FaultFS over a MemFS can crash too.
func (f *FaultFS) CrashClone() *MemFS {
	m, ok := f.inner.(interface{ CrashClone() *MemFS })
	if !ok {
		return nil
	}
	return m.CrashClone()
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
		return false, f.injected(op, name, f.dead)
	}
	kept := f.rules[:0]
	for _, r := range f.rules {
		if (r.op != op && r.op != OpAny) || f.counts[r.op] != r.at {
			kept = append(kept, r)
			continue
		}
		reason := fmt.Sprintf("%s #%d", r.op, r.at)
		if err == nil {
			err = f.injected(op, name, reason)
		}
		if r.sticky {
			f.dead = "disk dead since " + reason
		}
	}
	f.rules = kept
	return err != nil && f.torn, err
}

func (f *FaultFS) injected(op Op, name, reason string) error {
	return &fs.PathError{Op: op.String(), Path: name, Err: fmt.Errorf("%w (%s)", ErrInjected, reason)}
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
