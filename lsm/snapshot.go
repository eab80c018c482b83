package lsm

import (
	"slices"
	"sync/atomic"

	"github.com/monbandb/monban/internal/base"
)

// Snapshot is a read-only view of the DB at one point in the commit order:
// reads through it see exactly the writes acknowledged before NewSnapshot
// returned (and of concurrent ones, a prefix). While it is open, flushes and
// compactions keep every version it can see. Close releases it.
type Snapshot struct {
	db     *DB
	seq    base.SeqNum
	closed atomic.Bool
}

// NewSnapshot returns a snapshot of the current state.
func (d *DB) NewSnapshot() *Snapshot {
	d.snapMu.Lock()
	defer d.snapMu.Unlock()
	s := &Snapshot{db: d, seq: base.SeqNum(d.visibleSeq.Load())}
	d.snapshots.add(s.seq)
	return s
}

// Get returns the value key had when the snapshot was taken.
func (s *Snapshot) Get(key []byte) ([]byte, error) {
	if s.closed.Load() || s.db.closed.Load() {
		return nil, ErrClosed
	}
	rs := s.db.loadReadState()
	if rs == nil {
		return nil, ErrClosed
	}
	defer rs.unref()
	return s.db.closedOr(s.db.get(rs, key, s.seq, nil))
}

// NewIter returns an iterator over the snapshot's state.
func (s *Snapshot) NewIter(o *IterOptions) *Iter {
	if s.closed.Load() {
		return &Iter{err: ErrClosed}
	}
	return s.db.newIter(s.db.loadReadState(), s.seq, o)
}

// Close releases the snapshot. Closing twice, or once the DB is closed,
// returns ErrClosed.
func (s *Snapshot) Close() error {
	if s.closed.Swap(true) {
		return ErrClosed
	}
	s.db.snapMu.Lock()
	s.db.snapshots.remove(s.seq)
	s.db.snapMu.Unlock()
	s.db.snapshotCloses.Add(1)
	if w := s.db.snapshotsWaited.Load(); w != nil && w.Holds(s.seq) {
		s.db.mu.Lock()
		s.db.maybeScheduleCompaction()
		s.db.mu.Unlock()
	}
	if s.db.closed.Load() {
		return ErrClosed
	}
	return nil
}

// snapshotList counts open snapshots per sequence number. Guarded by
// d.snapMu.
type snapshotList struct {
	counts map[base.SeqNum]int
}

func (l *snapshotList) add(seq base.SeqNum) {
	if l.counts == nil {
		l.counts = make(map[base.SeqNum]int)
	}
	l.counts[seq]++
}

func (l *snapshotList) remove(seq base.SeqNum) {
	if l.counts[seq]--; l.counts[seq] <= 0 {
		delete(l.counts, seq)
	}
}

// seqs returns the open snapshots' sequence numbers, ascending, as
// compaction.Iter wants them.
func (l *snapshotList) seqs() []base.SeqNum {
	out := make([]base.SeqNum, 0, len(l.counts))
	for s := range l.counts {
		out = append(out, s)
	}
	slices.Sort(out)
	return out
}
