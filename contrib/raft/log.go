package raft

import (
	"errors"
	"fmt"
	"math"

	hraft "github.com/hashicorp/raft"
	"github.com/monbandb/monban/lsm"
)

// FirstIndex returns the index of the first entry, 0 if the log is empty.
func (s *Store) FirstIndex() (uint64, error) {
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	return s.bounds.Load().first, nil
}

// LastIndex returns the index of the last entry, 0 if the log is empty.
func (s *Store) LastIndex() (uint64, error) {
	if err := s.checkOpen(); err != nil {
		return 0, err
	}
	return s.bounds.Load().last, nil
}

// GetLog reads the entry at index into l. An index outside the log returns
// raft.ErrLogNotFound itself, unwrapped: raft compares it with ==.
func (s *Store) GetLog(index uint64, l *hraft.Log) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	v, err := s.db.Get(logKey(index))
	switch {
	case errors.Is(err, lsm.ErrNotFound):
		return hraft.ErrLogNotFound
	case err != nil:
		return fmt.Errorf("monban raft: log %d: %w", index, err)
	}
	return decodeLog(index, v, l)
}

// StoreLog stores one entry: StoreLogs of one.
func (s *Store) StoreLog(l *hraft.Log) error {
	return s.StoreLogs([]*hraft.Log{l})
}

// StoreLogs stores logs, which must continue the log without a gap
// (ErrNotContiguous), in one batch committed with one fsync: once it
// returns nil every entry survives a machine crash, and a crash before
// that keeps all of them or none.
func (s *Store) StoreLogs(logs []*hraft.Log) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	if len(logs) == 0 {
		return nil
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	b := *s.bounds.Load()
	first, last := b.first, b.last
	want := last + 1
	if last == 0 {
		want = max(logs[0].Index, 1) // an empty log starts anywhere from 1
	}
	s.batch.Reset()
	for _, l := range logs {
		if l == nil || l.Index != want {
			return s.gap(l, want)
		}
		s.buf = appendLog(s.buf[:0], l)
		s.batch.Put(logKey(l.Index), s.buf)
		want++
	}
	if first == 0 {
		s.batch.Put([]byte(firstKey), logKey(logs[0].Index)[1:])
	}
	if err := s.db.Write(&s.batch, lsm.Sync); err != nil {
		return fmt.Errorf("monban raft: storing logs %d-%d: %w", logs[0].Index, want-1, err)
	}
	if first == 0 {
		first = logs[0].Index
	}
	s.bounds.Store(&logBounds{first, want - 1})
	return nil
}

func (s *Store) gap(l *hraft.Log, want uint64) error {
	if l == nil {
		return fmt.Errorf("%w: a nil entry where %d was due", ErrNotContiguous, want)
	}
	return fmt.Errorf("%w: index %d where %d was due", ErrNotContiguous, l.Index, want)
}

// DeleteRange deletes the entries from min to max, both included: a
// prefix of the log (raft's compaction after a snapshot), a suffix (a
// follower dropping entries a new leader overwrites), or all of it. It is
// one range tombstone, one batch, one fsync, whatever the range's length:
// the space comes back when compaction drops the covered entries. A range
// outside the log, or min > max, deletes nothing; one strictly inside it
// is ErrHole.
func (s *Store) DeleteRange(from, to uint64) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	b := *s.bounds.Load()
	first, last := b.first, b.last
	if from > to || last == 0 || to < first || from > last {
		return nil
	}
	newFirst, newLast := first, last
	switch {
	case from <= first && to >= last:
		newFirst, newLast = 0, 0
	case from <= first:
		newFirst = to + 1
	case to >= last:
		newLast = from - 1
	default:
		return fmt.Errorf("%w: [%d, %d] inside [%d, %d]", ErrHole, from, to, first, last)
	}
	// The tombstone covers the entries there are, no more: clamped to
	// [first, last], its exclusive end cannot overflow unless last is
	// the largest index, whose end is the prefix's bound.
	from, to = max(from, first), min(to, last)
	hi := []byte{logPrefix + 1}
	if to < math.MaxUint64 {
		hi = logKey(to + 1)
	}
	s.batch.Reset()
	s.batch.DeleteRange(logKey(from), hi)
	if newFirst != first {
		hint := newFirst
		if newFirst == 0 {
			// The log is empty: there is nothing at or above last+1 to
			// find, and the next append records its own first index.
			hint = last + 1
		}
		s.batch.Put([]byte(firstKey), logKey(hint)[1:])
	}
	if err := s.db.Write(&s.batch, lsm.Sync); err != nil {
		return fmt.Errorf("monban raft: deleting logs %d-%d: %w", from, to, err)
	}
	s.bounds.Store(&logBounds{newFirst, newLast})
	return nil
}
