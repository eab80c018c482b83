package raft

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	hraft "github.com/hashicorp/raft"
	"github.com/monbandb/monban/lsm"
	"github.com/monbandb/monban/vfs"
)

// Key prefixes of the Store's DB (doc.go, "Keys"). Each is one byte, and
// the byte after it bounds its keys from above.
const (
	// logPrefix holds one entry per key, the layout before runs: read,
	// truncated, never written (doc.go, "Keys").
	logPrefix = 'l'
	// runPrefix holds runs: the entries of one StoreLogs under one key,
	// so that a call costs the memtable one insert, not one per entry.
	runPrefix    = 'r'
	stablePrefix = 's'
	// firstKey holds the log's first index, 8 bytes big-endian, written
	// with every write that changes it (a head truncation, the first
	// append to an empty log). A head truncation leaves the run it cuts
	// whole, so the entries of that run below firstKey's index are
	// deleted by it alone. Open also seeks from it: found by First
	// instead, the first entry costs a step over every entry a head
	// truncation's range tombstone covers, until compaction drops them.
	firstKey = "mfirst"
)

var (
	// ErrKeyNotFound is returned by Get and GetUint64 for a key never Set.
	// Its message is raft's contract, not only its text: raft compares
	// err.Error() with "not found" to tell a new node from a failing store
	// (raft-boltdb and raft's InmemStore return the same).
	ErrKeyNotFound = errors.New("not found")

	// ErrNotContiguous is returned by StoreLogs for entries that would
	// leave a gap or go back: the first must follow LastIndex (any index
	// from 1 on an empty log), each next one its predecessor. Nothing of
	// the batch is stored.
	ErrNotContiguous = errors.New("monban raft: log entries not contiguous")

	// ErrHole is returned by DeleteRange for a range strictly inside the
	// log, neither a prefix nor a suffix: raft never asks for one, and the
	// log would no longer be contiguous.
	ErrHole = errors.New("monban raft: DeleteRange would leave a hole in the log")
)

// Store is a raft.LogStore, raft.StableStore and raft.MonotonicLogStore
// in one monban DB. It is safe for concurrent use.
type Store struct {
	db *lsm.DB

	// writeMu orders StoreLogs and DeleteRange, so that the contiguity
	// check, the commit and the update of first and last are one step.
	// Reads take no lock.
	writeMu sync.Mutex
	batch   lsm.Batch // reused under writeMu
	buf     []byte    // a run being encoded, reused under writeMu
	entry   []byte    // an entry being encoded, reused under writeMu

	// bounds are the log's first and last index, both 0 when it is empty
	// (invariant 2), replaced together so that no reader sees the first
	// of one write with the last of another. They change after a commit:
	// a reader may see the bounds from before a write that has just
	// committed, never bounds ahead of the DB.
	bounds atomic.Pointer[logBounds]
	closed atomic.Bool

	// cached and lastRead are GetLog's: the run it keeps, and the index
	// it read last, which tells reads in order from reads at random.
	cached   atomic.Pointer[cachedRun]
	lastRead atomic.Uint64
}

var (
	_ hraft.LogStore          = (*Store)(nil)
	_ hraft.StableStore       = (*Store)(nil)
	_ hraft.MonotonicLogStore = (*Store)(nil)
)

// Open opens (creating it if needed) the monban DB in dir as a Store.
// opts are lsm.Open's, nil for the defaults; whatever opts.Sync says,
// every write of the Store is synced.
func Open(dir string, opts *lsm.Options) (*Store, error) {
	fsys := vfs.Default
	if opts != nil && opts.FS != nil {
		fsys = opts.FS
	}
	if err := mkdirDurable(fsys, dir); err != nil {
		return nil, fmt.Errorf("monban raft: %w", err)
	}
	db, err := lsm.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	s := &Store{db: db}
	if err := s.loadBounds(); err != nil {
		return nil, errors.Join(err, db.Close())
	}
	return s, nil
}

// loadBounds finds the log's bounds from its keys: the first index is
// firstKey's, or the first entry's if that is greater (an old layout's
// log, or one never truncated); the last is the last key's. The 'l' keys,
// where there are any, hold a prefix of the log and the runs the rest.
func (s *Store) loadBounds() error {
	from := uint64(0) // a DB without firstKey: from the prefixes' starts
	if v, err := s.db.Get([]byte(firstKey)); err == nil && len(v) == 8 {
		from = binary.BigEndian.Uint64(v)
	} else if err != nil && !errors.Is(err, lsm.ErrNotFound) {
		return fmt.Errorf("monban raft: reading the log's first index: %w", err)
	}
	oldFirst, oldLast, err := s.oldBounds(from)
	if err != nil {
		return err
	}
	runFirst, runLast, err := s.runBounds(from)
	if err != nil {
		return err
	}
	b := logBounds{first: oldFirst, last: oldLast, oldLast: oldLast}
	switch {
	case runLast != 0 && oldLast != 0 && runFirst != oldLast+1:
		return fmt.Errorf("monban raft: %w: entries to %d, then runs from %d", errBadLog, oldLast, runFirst)
	case runLast != 0 && oldLast != 0:
		b.last = runLast
	case runLast != 0:
		b.first, b.last = runFirst, runLast
	}
	b.known = b.last // no run is known yet
	s.bounds.Store(&b)
	return nil
}

// oldBounds returns the first and last 'l' keys' indexes, the first at or
// after from; both 0 if there are none.
func (s *Store) oldBounds(from uint64) (first, last uint64, err error) {
	it := s.db.NewIter(&lsm.IterOptions{LowerBound: []byte{logPrefix}, UpperBound: []byte{logPrefix + 1}})
	if it.SeekGE(logKey(from)) {
		first, err = indexOf(it.Key())
		if err == nil && it.Last() {
			last, err = indexOf(it.Key())
		}
	}
	if err := errors.Join(err, it.Close()); err != nil {
		return 0, 0, fmt.Errorf("monban raft: finding the log's bounds: %w", err)
	}
	return first, last, nil
}

// runBounds returns the first index held by the runs at or after from, and
// the last; both 0 if there are none.
func (s *Store) runBounds(from uint64) (first, last uint64, err error) {
	it := s.db.NewIter(runIterOptions)
	if it.SeekGE(runKey(from)) {
		var r run
		if last, err = runIndexOf(it.Key()); err == nil {
			r, err = parseRun(last, it.Value())
			first = max(r.first, from)
		}
		if err == nil && it.Last() {
			last, err = runIndexOf(it.Key())
		}
	}
	if err := errors.Join(err, it.Close()); err != nil {
		return 0, 0, fmt.Errorf("monban raft: finding the log's bounds: %w", err)
	}
	return first, last, nil
}

// runIterOptions bound an iterator to the run keys.
var runIterOptions = &lsm.IterOptions{LowerBound: []byte{runPrefix}, UpperBound: []byte{runPrefix + 1}}

// logBounds are the log's first and last index, and oldLast, the last one
// held under a 'l' key (0: none is), so that the 'l' keys hold
// [first, oldLast] and the runs the rest.
//
// ends are the keys of the runs that hold (known, last], in order, each
// index held by the first run whose end is at or after it: the runs
// written since Open, so that GetLog of an index after known is a point
// read of its run's key, not an iterator's seek. known ≥ oldLast.
// A write publishes ends extended in place (readers of older bounds read
// no further than their own length) or trimmed at the front; a suffix
// truncation, which would make the next append overwrite what readers of
// older bounds read, publishes a copy.
//
// gen counts the DeleteRanges since Open (cachedRun).
type logBounds struct {
	first, last, oldLast uint64
	known                uint64
	ends                 []uint64
	gen                  uint64
}

// runEnd returns the end of the run that holds index, or false if the
// bounds do not know it.
func (b *logBounds) runEnd(index uint64) (uint64, bool) {
	if index <= b.known {
		return 0, false
	}
	i, _ := slices.BinarySearch(b.ends, index)
	if i == len(b.ends) {
		return 0, false
	}
	return b.ends[i], true
}

// Close closes the DB. Every method called after it returns lsm.ErrClosed.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return lsm.ErrClosed
	}
	return s.db.Close()
}

func (s *Store) checkOpen() error {
	if s.closed.Load() {
		return lsm.ErrClosed
	}
	return nil
}

// IsMonotonic reports true: StoreLogs refuses gaps (ErrNotContiguous), so
// raft must delete the whole log after restoring a snapshot rather than
// leave a gap behind it.
func (s *Store) IsMonotonic() bool { return true }

// logKey returns the key of index: the prefix, then the index big-endian,
// so that keys sort as indexes do.
func logKey(index uint64) []byte {
	k := make([]byte, 9)
	k[0] = logPrefix
	binary.BigEndian.PutUint64(k[1:], index)
	return k
}

// runKey returns the key of the run whose last entry is index: a run's
// last index rather than its first, so that the run holding an index is
// the first at or after its key, found by a forward seek.
func runKey(index uint64) []byte {
	k := logKey(index)
	k[0] = runPrefix
	return k
}

// runIndexOf is runKey's inverse.
func runIndexOf(key []byte) (uint64, error) {
	if len(key) != 9 || key[0] != runPrefix {
		return 0, fmt.Errorf("%w: run key %x is not 9 bytes", errBadLog, key)
	}
	return binary.BigEndian.Uint64(key[1:]), nil
}

// indexOf is logKey's inverse.
func indexOf(key []byte) (uint64, error) {
	if len(key) != 9 || key[0] != logPrefix {
		return 0, fmt.Errorf("%w: log key %x is not 9 bytes", errBadLog, key)
	}
	return binary.BigEndian.Uint64(key[1:]), nil
}

func stableKey(key []byte) []byte {
	return append([]byte{stablePrefix}, key...)
}

// mkdirDurable creates dir and its missing parents, and syncs the parent
// of each directory it created, so that the path survives a machine
// crash: lsm.Open creates a missing directory but does not sync its
// parent, and a DB whose directory entry is lost is lost whole.
func mkdirDurable(fsys vfs.FS, dir string) error {
	var created []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := fsys.List(d); err == nil {
			break
		}
		created = append(created, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if err := fsys.MkdirAll(dir); err != nil {
		return err
	}
	for _, d := range created {
		if err := fsys.SyncDir(filepath.Dir(d)); err != nil {
			return err
		}
	}
	return nil
}
