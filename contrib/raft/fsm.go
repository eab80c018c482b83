package raft

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	hraft "github.com/hashicorp/raft"
	"github.com/monbandb/monban/lsm"
	"github.com/monbandb/monban/vfs"
)

// Keys of the FSM's DB (doc.go, "FSM directory").
const (
	dataPrefix = 'd'
	appliedKey = "a"
)

// Names in the FSM's root directory.
const (
	liveName    = "LIVE" // names the live DB directory
	liveTmpName = "LIVE.tmp"
	lockName    = "LOCK"
)

// FSM is a raft.FSM (and raft.BatchingFSM) whose state is a key-value map
// in a monban DB of its own, set by PutCommand and DeleteCommand entries.
// Apply, Snapshot and Restore are for raft's FSM goroutine, as raft calls
// them; Get and AppliedIndex may be called from any goroutine.
type FSM struct {
	fs   vfs.FS
	root string
	opts lsm.Options // what each DB of the FSM is opened with
	lock io.Closer

	// mu guards db and live: Restore swaps them under the write lock,
	// every other use holds the read lock.
	mu     sync.RWMutex
	db     *lsm.DB
	live   uint64 // the number of the live DB's directory, data-<live>
	closed bool

	applied atomic.Uint64 // the index of the last entry applied
	snaps   atomic.Uint64 // names snapshot directories apart, from the clock on
	batch   lsm.Batch     // Apply's, on raft's FSM goroutine only
}

var _ hraft.BatchingFSM = (*FSM)(nil)

// OpenFSM opens the FSM kept in root, creating it if needed, and finishes
// or undoes a Restore a crash interrupted (restore.go). opts are
// lsm.Open's for its DB, nil for the defaults; opts.FS, if set, holds root
// too.
func OpenFSM(root string, opts *lsm.Options) (*FSM, error) {
	f := &FSM{root: root}
	if opts != nil {
		f.opts = *opts
	}
	if f.opts.FS == nil {
		f.opts.FS = vfs.Default
	}
	f.fs = f.opts.FS
	// Snapshot directories are numbered from the clock, so that none of
	// this FSM's is named as one an earlier FSM on root handed raft: that
	// snapshot's Release, which may still come, would remove it.
	f.snaps.Store(uint64(time.Now().UnixNano()))
	if err := mkdirDurable(f.fs, root); err != nil {
		return nil, fmt.Errorf("monban raft: fsm: %w", err)
	}
	lock, err := f.fs.Lock(filepath.Join(root, lockName))
	if err != nil {
		return nil, fmt.Errorf("monban raft: fsm %s: %w", root, err)
	}
	f.lock = lock
	if err := f.open(); err != nil {
		return nil, errors.Join(err, lock.Close())
	}
	return f, nil
}

// open finds the live DB (creating the first), removes every other entry
// of root, and opens it.
func (f *FSM) open() error {
	live, err := f.readLive()
	if errors.Is(err, fs.ErrNotExist) {
		// A new FSM, or one whose first LIVE never became durable: nothing
		// was applied to it (OpenFSM had not returned), so start afresh.
		live = 1
		if err := f.removeAllBut(""); err != nil {
			return err
		}
		if _, err := f.writeLive(live); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	if err := f.removeAllBut(dataDir(live)); err != nil {
		return err
	}
	dir := filepath.Join(f.root, dataDir(live))
	if err := mkdirDurable(f.fs, dir); err != nil {
		return fmt.Errorf("monban raft: fsm: %w", err)
	}
	db, err := lsm.Open(dir, &f.opts)
	if err != nil {
		return fmt.Errorf("monban raft: fsm: %w", err)
	}
	applied, err := readApplied(db)
	if err != nil {
		return errors.Join(err, db.Close())
	}
	f.db, f.live = db, live
	f.applied.Store(applied)
	return nil
}

func dataDir(n uint64) string { return fmt.Sprintf("data-%06d", n) }

// readLive returns the number of the directory LIVE names.
func (f *FSM) readLive() (uint64, error) {
	p, err := readFile(f.fs, filepath.Join(f.root, liveName))
	if err != nil {
		return 0, err
	}
	var n uint64
	if _, err := fmt.Sscanf(string(p), "data-%d\n", &n); err != nil || string(p) != dataDir(n)+"\n" {
		return 0, fmt.Errorf("monban raft: fsm %s: %w: LIVE holds %q", f.root, lsm.ErrCorruption, p)
	}
	return n, nil
}

// writeLive makes LIVE name data-<n>, durably, in one atomic step: the
// rename of a synced LIVE.tmp over it. renamed reports whether the rename
// happened: if it did, LIVE may name data-<n> after a crash even when err
// says the step did not finish.
func (f *FSM) writeLive(n uint64) (renamed bool, err error) {
	tmp := filepath.Join(f.root, liveTmpName)
	w, err := f.fs.Create(tmp)
	if err != nil {
		return false, fmt.Errorf("monban raft: fsm: %w", err)
	}
	_, err = io.WriteString(w, dataDir(n)+"\n")
	if err == nil {
		err = w.Sync()
	}
	if err = errors.Join(err, w.Close()); err == nil {
		err = f.fs.Rename(tmp, filepath.Join(f.root, liveName))
		renamed = err == nil
	}
	if err == nil {
		err = f.fs.SyncDir(f.root)
	}
	if err != nil {
		return renamed, fmt.Errorf("monban raft: fsm: writing LIVE: %w", err)
	}
	return true, nil
}

// removeAllBut removes every entry of root the FSM made but LOCK, LIVE
// and keep: restores that did not finish or whose old DB was not yet
// removed (data-<n>), snapshots not yet released (snapshot-<m>), and
// LIVE.tmp. Entries of other names are not the FSM's to remove.
func (f *FSM) removeAllBut(keep string) error {
	names, err := f.fs.List(f.root)
	if err != nil {
		return fmt.Errorf("monban raft: fsm: %w", err)
	}
	for _, name := range names {
		if name == keep || !isFSMLeftover(name) {
			continue
		}
		if err := removeAll(f.fs, filepath.Join(f.root, name)); err != nil {
			return fmt.Errorf("monban raft: fsm: removing %s: %w", name, err)
		}
	}
	return f.fs.SyncDir(f.root)
}

// isFSMLeftover reports whether name is one the FSM gives an entry of its
// root that may be left over: a DB directory, a snapshot, LIVE.tmp.
func isFSMLeftover(name string) bool {
	if name == liveTmpName {
		return true
	}
	for _, prefix := range []string{"data-", "snapshot-"} {
		if digits, ok := strings.CutPrefix(name, prefix); ok && len(digits) >= 6 && strings.Trim(digits, "0123456789") == "" {
			return true
		}
	}
	return false
}

func readApplied(db *lsm.DB) (uint64, error) {
	v, err := db.Get([]byte(appliedKey))
	switch {
	case errors.Is(err, lsm.ErrNotFound):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("monban raft: fsm: applied index: %w", err)
	case len(v) != 8:
		return 0, fmt.Errorf("monban raft: fsm: %w: applied index of %d bytes", lsm.ErrCorruption, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// Apply applies one entry: ApplyBatch of one.
func (f *FSM) Apply(l *hraft.Log) any {
	return f.ApplyBatch([]*hraft.Log{l})[0]
}

// ApplyBatch applies the commands among logs in one lsm batch, with the
// index of the last entry, and returns for each entry nil, or the
// ErrBadCommand its data earned. Entries at or below AppliedIndex are
// already in the state and are skipped: raft replays its log from its
// last snapshot after a restart. Commands that would take the batch past
// lsm.MaxBatchSize are applied in as many batches as they need, each with
// the index of its last entry.
//
// The batches are not synced. A machine crash may lose the last batches,
// all of each or none, and with them the applied index they carried: raft
// replays what they held from its log.
func (f *FSM) ApplyBatch(logs []*hraft.Log) []any {
	resp := make([]any, len(logs))
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return fill(resp, lsm.ErrClosed)
	}
	f.batch.Reset()
	applied := f.applied.Load()
	last := applied
	pending := 0 // the first entry of logs the batch covers
	for i, l := range logs {
		if l.Index <= applied {
			continue
		}
		if l.Type == hraft.LogCommand {
			c, err := decodeCommand(l.Data)
			if err == nil {
				err = c.fits()
			}
			key := append([]byte{dataPrefix}, c.key...)
			switch {
			case err != nil:
				resp[i] = err
			case f.batch.Size()+commandRoom(key, c.value)+appliedRoom > maxApplyBatch:
				if err := f.apply(last); err != nil {
					fill(resp[pending:], err)
					return resp
				}
				pending = i
				fallthrough
			default:
				if c.kind == cmdPut {
					f.batch.Put(key, c.value)
				} else {
					f.batch.Delete(key)
				}
			}
		}
		last = l.Index
	}
	if last != f.applied.Load() {
		if err := f.apply(last); err != nil {
			fill(resp[pending:], err)
		}
	}
	return resp
}

// apply writes the batch with last as the applied index, and resets it.
func (f *FSM) apply(last uint64) error {
	f.batch.Put([]byte(appliedKey), binary.BigEndian.AppendUint64(nil, last))
	if err := f.db.Write(&f.batch, lsm.NoSync); err != nil {
		// Every command in the batch fits (command.fits) and the batch
		// within lsm.MaxBatchSize, so the failure is the engine's, and it
		// refuses every write after a failed one (a sticky error): no
		// later entry applies over the gap this leaves.
		return fmt.Errorf("monban raft: fsm: applying up to %d: %w", last, err)
	}
	f.batch.Reset()
	f.applied.Store(last)
	return nil
}

// commandRoom bounds what a command's write adds to a batch: its kind,
// key and value, each with a length.
func commandRoom(key, value []byte) int {
	return 1 + 2*binary.MaxVarintLen32 + len(key) + len(value)
}

// appliedRoom is what the applied index's write adds to a batch.
var appliedRoom = commandRoom([]byte(appliedKey), make([]byte, 8))

// maxApplyBatch is lsm.MaxBatchSize, which tests lower to split batches.
var maxApplyBatch = lsm.MaxBatchSize

func fill(resp []any, err error) []any {
	for i := range resp {
		resp[i] = err
	}
	return resp
}

// Get returns the value of key in the state, or lsm.ErrNotFound.
func (f *FSM) Get(key []byte) ([]byte, error) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if f.closed {
		return nil, lsm.ErrClosed
	}
	return f.db.Get(append([]byte{dataPrefix}, key...))
}

// AppliedIndex returns the index of the last entry the state holds.
func (f *FSM) AppliedIndex() uint64 { return f.applied.Load() }

// Close closes the DB and releases root.
func (f *FSM) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return lsm.ErrClosed
	}
	f.closed = true
	return errors.Join(f.db.Close(), f.lock.Close())
}

func readFile(fsys vfs.FS, name string) ([]byte, error) {
	r, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	p, err := io.ReadAll(r)
	return p, errors.Join(err, r.Close())
}

// removeAll removes name and, if it is a directory, everything in it. A
// directory that fails to list is the disk's error, returned as such, not
// taken for a file (whose Remove would then report the directory not
// empty, hiding the cause).
func removeAll(fsys vfs.FS, name string) error {
	names, err := fsys.List(name)
	switch {
	case err == nil:
		for _, n := range names {
			if err := removeAll(fsys, filepath.Join(name, n)); err != nil {
				return err
			}
		}
	case !errors.Is(err, syscall.ENOTDIR) && !isNotExist(err):
		return err
	}
	return fsys.Remove(name)
}

// isPlainName reports whether name can be a file of a DB directory: one
// path element, nothing that climbs out of it.
func isPlainName(name string) bool {
	return name != "" && name != "." && name != ".." && len(name) <= 255 &&
		!strings.ContainsAny(name, `/\`) && filepath.Base(name) == name
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
