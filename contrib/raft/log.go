package raft

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"

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
// raft.ErrLogNotFound itself, unwrapped: raft compares it with ==. The
// bounds are asked first: a run cut by a head truncation still holds the
// entries below the first index.
func (s *Store) GetLog(index uint64, l *hraft.Log) error {
	if err := s.checkOpen(); err != nil {
		return err
	}
	b := s.bounds.Load()
	if b.last == 0 || index < b.first || index > b.last {
		return hraft.ErrLogNotFound
	}
	if index <= b.oldLast {
		v, err := s.db.Get(logKey(index))
		switch {
		case errors.Is(err, lsm.ErrNotFound):
			return hraft.ErrLogNotFound
		case err != nil:
			return fmt.Errorf("monban raft: log %d: %w", index, err)
		}
		return decodeLog(index, v, l)
	}
	// raft reads its log in order (a follower applying, a leader
	// replicating): a run read twice in a row is kept, whole, so that the
	// next reads of it take no seek. A read at random keeps nothing and
	// copies nothing.
	if c := s.cached.Load(); c != nil && c.gen == b.gen && c.r.first <= index && index <= c.r.last {
		s.lastRead.Store(index)
		return wrapRead(index, c.r.decode(index, l))
	}
	inOrder := s.lastRead.Swap(index) == index-1
	return wrapRead(index, s.withRun(b, index, func(r run) error {
		if inOrder && index < r.last {
			s.cached.Store(&cachedRun{gen: b.gen, r: run{first: r.first, last: r.last, body: bytes.Clone(r.body)}})
		}
		return r.decode(index, l)
	}))
}

// cachedRun is a copy of a run GetLog read, and the generation of the
// bounds it was read under: a DeleteRange, which may delete or rewrite a
// run, makes a new generation, and a reader uses only a copy of its own.
// Appends make no new one: they never write a key there was.
type cachedRun struct {
	gen uint64
	r   run
}

// wrapRead gives err GetLog's form: raft.ErrLogNotFound as it is.
func wrapRead(index uint64, err error) error {
	if err != nil && err != hraft.ErrLogNotFound {
		return fmt.Errorf("monban raft: log %d: %w", index, err)
	}
	return err
}

// withRun calls f with the run holding index, which lives only as long as
// the call, and returns f's error; raft.ErrLogNotFound, unwrapped, if no
// run holds index (deleted since b was read). An iterator reads the run,
// not Get, which would copy the whole run to return one entry of it; one
// bounded to the run's key when b knows it, which spares the memtable's
// iterator the keys after it.
func (s *Store) withRun(b *logBounds, index uint64, f func(run) error) error {
	opts := runIterOptions
	if end, ok := b.runEnd(index); ok {
		opts = &lsm.IterOptions{LowerBound: runKey(end), UpperBound: keyAfter(runPrefix, end)}
	}
	it := s.db.NewIter(opts)
	var err error
	found := it.SeekGE(runKey(index))
	if found {
		var last uint64
		var r run
		last, err = runIndexOf(it.Key())
		if err == nil {
			r, err = parseRun(last, it.Value())
		}
		if found = err != nil || r.first <= index; found && err == nil {
			err = f(r)
		}
	}
	if err := errors.Join(err, it.Close()); err != nil {
		if errors.Is(err, hraft.ErrLogNotFound) {
			return hraft.ErrLogNotFound
		}
		return err
	}
	if !found {
		return hraft.ErrLogNotFound
	}
	return nil
}

// StoreLog stores one entry: StoreLogs of one.
func (s *Store) StoreLog(l *hraft.Log) error {
	return s.StoreLogs([]*hraft.Log{l})
}

// A run holds at most runMaxEntries entries, and no more than runMaxBytes
// unless it is one entry: GetLog steps over the entries of a run before
// the one it reads, and a table's block holding a larger value is a
// mapping of its own in the engine's block cache, mapped and unmapped at
// every read of a compaction (internal/cache, buffers.go), which made
// StoreLogs of 64 entries of 1 KiB, one run of 66 KiB, slower than one
// key per entry. raft's batches (MaxAppendEntries, 64 by default, at most
// 1,024) take one run or a few.
const (
	runMaxEntries = 256
	runMaxBytes   = 24 << 10
)

// MaxLogData is the most a log entry's Data and Extensions may hold
// together: a run of that one entry, with its fields and headers, is then
// within what a monban value holds (lsm.MaxValueSize). StoreLogs refuses a
// larger entry with an error wrapping lsm.ErrInvalidValue, and raft makes
// a leader whose log store fails step down, so an application keeps the
// commands it applies below it (raftkv takes a body of 1 MiB at most).
const MaxLogData = lsm.MaxValueSize - maxEntryOverhead

// maxEntryOverhead is the most a run of one entry adds to its Data and
// Extensions: the run's format byte and count (2), the entry's length (4,
// under 2^28), its term (10), type (1), seconds (10) and nanoseconds (5),
// and the lengths of Data and Extensions (4 each).
const maxEntryOverhead = 2 + 4 + 10 + 1 + 10 + 5 + 4 + 4

// StoreLogs stores logs, which must continue the log without a gap
// (ErrNotContiguous), in one batch committed with one fsync: once it
// returns nil every entry survives a machine crash, and a crash before
// that keeps all of them or none. The batch is one run, or a few if logs
// are more than a run holds.
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
	want := b.last + 1
	if b.last == 0 && logs[0] != nil {
		want = max(logs[0].Index, 1) // an empty log starts anywhere from 1
		b.known, b.ends = want-1, nil
	}
	s.batch.Reset()
	// A run's header goes before its entries and holds their count: the
	// entries are encoded after room for the largest header, and the
	// header is written into the end of that room once the run is closed.
	s.openRun()
	n := 0
	for _, l := range logs {
		if l == nil || l.Index != want || want == 0 { // 0: past the last index there is
			return s.gap(l, want)
		}
		if n := len(l.Data) + len(l.Extensions); n > MaxLogData {
			return fmt.Errorf("monban raft: log entry %d holds %d bytes of data and extensions, more than MaxLogData (%d): %w",
				l.Index, n, MaxLogData, lsm.ErrInvalidValue)
		}
		s.entry = appendEntry(s.entry[:0], l)
		if n == runMaxEntries || (n > 0 && len(s.buf)+binary.MaxVarintLen64+len(s.entry) > runMaxBytes) {
			s.batch.Put(runKey(want-1), s.closeRun(n))
			b.ends = append(b.ends, want-1)
			s.openRun()
			n = 0
		}
		s.buf = binary.AppendUvarint(s.buf, uint64(len(s.entry)))
		s.buf = append(s.buf, s.entry...)
		n++
		want++
	}
	s.batch.Put(runKey(want-1), s.closeRun(n))
	b.ends = append(b.ends, want-1)
	if b.last == 0 {
		b.first = logs[0].Index
		s.batch.Put([]byte(firstKey), logKey(b.first)[1:])
	}
	if err := s.db.Write(&s.batch, lsm.Sync); err != nil {
		return fmt.Errorf("monban raft: storing logs %d-%d: %w", logs[0].Index, want-1, err)
	}
	b.last = want - 1
	s.bounds.Store(&b)
	return nil
}

// openRun empties s.buf but for room for a run's header.
func (s *Store) openRun() {
	s.buf = append(s.buf[:0], make([]byte, runHeaderMax)...)
}

// closeRun writes the header of the run of n entries s.buf holds after
// openRun's room, and returns the run from its header on.
func (s *Store) closeRun(n int) []byte {
	var h [runHeaderMax]byte
	header := binary.AppendUvarint(append(h[:0], runFormatV2), uint64(n))
	start := runHeaderMax - len(header)
	copy(s.buf[start:], header)
	return s.buf[start:]
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
// one batch, one fsync: range tombstones, whatever the range's length, and
// for a suffix that starts inside a run, that run's kept entries written
// again under their own last index. A prefix ending inside a run leaves
// the run whole: the first index, recorded in the batch, hides the
// entries below it. The space comes back when compaction drops what the
// tombstones cover. A range outside the log, or min > max, deletes
// nothing; one strictly inside it is ErrHole.
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
	from, to = max(from, first), min(to, last)
	s.batch.Reset()
	b.gen++
	switch {
	case from == first && to == last:
		s.deleteHead(b, last)
		// The log is empty: there is nothing at or above last+1 to find,
		// and the next append records its own first index.
		b = logBounds{gen: b.gen}
		s.batch.Put([]byte(firstKey), logKey(last + 1)[1:])
	case from == first:
		s.deleteHead(b, to)
		b.first = to + 1
		if to >= b.oldLast {
			b.oldLast = 0
		}
		i, _ := slices.BinarySearch(b.ends, to+1)
		b.known, b.ends = max(b.known, to), b.ends[i:]
		s.batch.Put([]byte(firstKey), logKey(b.first)[1:])
	case to == last:
		if err := s.deleteSuffix(&b, from); err != nil {
			return fmt.Errorf("monban raft: deleting logs %d-%d: %w", from, to, err)
		}
	default:
		return fmt.Errorf("%w: [%d, %d] inside [%d, %d]", ErrHole, from, to, first, last)
	}
	if err := s.db.Write(&s.batch, lsm.Sync); err != nil {
		return fmt.Errorf("monban raft: deleting logs %d-%d: %w", from, to, err)
	}
	s.bounds.Store(&b)
	return nil
}

// deleteHead adds to the batch the tombstones of the entries from b.first
// to to: the 'l' keys among them, and the runs that end by to. Their
// exclusive ends cannot overflow unless to is the largest index, whose end
// is its prefix's bound.
func (s *Store) deleteHead(b logBounds, to uint64) {
	if b.oldLast != 0 {
		s.batch.DeleteRange(logKey(b.first), keyAfter(logPrefix, min(to, b.oldLast)))
	}
	if to > b.oldLast {
		s.batch.DeleteRange(runKey(b.first), keyAfter(runPrefix, to))
	}
}

// deleteSuffix adds to the batch the deletion of the entries from from
// (> b.first) to b.last: the 'l' keys from from, every run ending at or
// after from, and, if from cuts a run, the run's entries before from
// written again as a run ending at from-1; and sets b to the bounds after.
func (s *Store) deleteSuffix(b *logBounds, from uint64) error {
	if from <= b.oldLast {
		s.batch.DeleteRange(logKey(from), []byte{logPrefix + 1})
	}
	s.batch.DeleteRange(runKey(from), []byte{runPrefix + 1})
	i, _ := slices.BinarySearch(b.ends, from)
	ends := slices.Clone(b.ends[:i])
	known := min(b.known, from-1)
	if from > b.oldLast {
		err := s.withRun(b, from, func(r run) error {
			// Only what the log still holds is kept: the entries of a
			// run cut by a head truncation, below b.first, are dropped.
			keep := max(r.first, b.first)
			if keep >= from {
				return nil
			}
			kept, err := r.seek(keep)
			if err != nil {
				return err
			}
			after, err := r.seek(from)
			if err != nil {
				return err
			}
			s.openRun()
			s.buf = append(s.buf, kept[:len(kept)-len(after)]...)
			s.batch.Put(runKey(from-1), s.closeRun(int(from-keep)))
			if len(ends) == 0 {
				known = keep - 1
			}
			ends = append(ends, from-1)
			return nil
		})
		if err == hraft.ErrLogNotFound {
			return fmt.Errorf("%w: no run holds %d, inside [%d, %d]", errBadLog, from, b.first, b.last)
		}
		if err != nil {
			return err
		}
	}
	b.last, b.oldLast = from-1, min(b.oldLast, from-1)
	b.known, b.ends = known, ends
	return nil
}

// keyAfter returns the exclusive end of the keys of prefix up to index:
// the next index's key, or the prefix's bound after the largest index.
func keyAfter(prefix byte, index uint64) []byte {
	if index == math.MaxUint64 {
		return []byte{prefix + 1}
	}
	k := logKey(index + 1)
	k[0] = prefix
	return k
}
