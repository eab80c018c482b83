package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// memFile is the smallest vfs.File the tests need: an append-only byte
// slice that counts Write and Sync calls.
type memFile struct {
	data   []byte
	writes int
	syncs  int
	closed bool
}

var _ vfs.File = (*memFile)(nil)

func (f *memFile) Write(p []byte) (int, error) {
	if f.closed {
		return 0, errors.New("memFile: closed")
	}
	f.writes++
	f.data = append(f.data, p...)
	return len(p), nil
}
func (f *memFile) Read(p []byte) (int, error) { return 0, io.EOF }
func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(f.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
func (f *memFile) Sync() error          { f.syncs++; return nil }
func (f *memFile) Close() error         { f.closed = true; return nil }
func (f *memFile) Size() (int64, error) { return int64(len(f.data)), nil }

// logOf writes records to a fresh log and returns its bytes and the offset
// Append returned for each record.
func logOf(t testing.TB, records [][]byte) ([]byte, []int64) {
	t.Helper()
	return writeLog(t, NewWriter(&memFile{}), records, false)
}

// recyclable is the kind of the recyclable log number num.
func recyclable(num uint64) logKind { return logKind{recyclable: true, num: num} }

// recyclableWriter is NewRecyclableWriter on blocks of bs bytes.
func recyclableWriter(bs int, num uint64) *Writer {
	w := newWriterSize(&memFile{}, bs)
	w.kind = recyclable(num)
	return w
}

// writeLog appends records with w, a Writer of a memFile, seals the log if
// seal, and returns the file's bytes and the offset Append returned for
// each record.
func writeLog(t testing.TB, w *Writer, records [][]byte, seal bool) ([]byte, []int64) {
	t.Helper()
	offs := make([]int64, len(records))
	for i, rec := range records {
		off, err := w.Append(rec)
		if err != nil {
			t.Fatalf("Append %d: %v", i, err)
		}
		offs[i] = off
	}
	if seal {
		if err := w.Seal(); err != nil {
			t.Fatalf("Seal: %v", err)
		}
	}
	f := w.f.(*memFile)
	if w.Size() != int64(len(f.data)) {
		t.Fatalf("Size() = %d, file has %d bytes", w.Size(), len(f.data))
	}
	return f.data, offs
}

// readResult is everything a Reader said about one log.
type readResult struct {
	records [][]byte
	offsets []int64
	err     error // io.EOF or the error that ended the log
	dropped int64
	sealed  bool
	clean   bool // EndsCleanly
}

// readAll reads the legacy log log to its end with NewReader.
func readAll(t testing.TB, log []byte) readResult {
	t.Helper()
	return readLog(t, NewReader(bytes.NewReader(log), "test.log"), log)
}

// readLog reads log with r to its end. It fails the test if Next returns
// more records than the log has bytes, which would mean the Reader loops.
func readLog(t testing.TB, r *Reader, log []byte) readResult {
	t.Helper()
	var res readResult
	for {
		rec, err := r.Next()
		if err != nil {
			res.err = err
			res.dropped = r.DroppedBytes()
			res.sealed, res.clean = r.Sealed(), r.EndsCleanly()
			if again, err2 := r.Next(); again != nil || err2 != err {
				t.Fatalf("Next after %v returned (%d bytes, %v): errors must be sticky", err, len(again), err2)
			}
			return res
		}
		res.records = append(res.records, bytes.Clone(rec))
		res.offsets = append(res.offsets, r.Offset())
		if len(res.records) > len(log)/headerSize+1 {
			t.Fatalf("reader returned %d records from %d bytes", len(res.records), len(log))
		}
	}
}

// tornBytes is what DroppedBytes should say of log when its last record
// returned ends at lastEnd: the bytes after it up to the last non-zero one.
func tornBytes(log []byte, lastEnd int64) int64 {
	return max(0, int64(len(bytes.TrimRight(log, "\x00")))-lastEnd)
}

// randomRecord returns a record of n random bytes.
func randomRecord(rng *rand.Rand, n int) []byte {
	b := make([]byte, n+8)
	for i := 0; i < n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], rng.Uint64())
	}
	return b[:n:n]
}

// randomSize draws a record size in [0, limit]: mostly small, sometimes
// near block boundaries, sometimes large, the mix a WAL sees.
func randomSize(rng *rand.Rand, limit int) int {
	switch rng.IntN(4) {
	case 0:
		return rng.IntN(min(limit, 64) + 1)
	case 1:
		return rng.IntN(min(limit, 4096) + 1)
	case 2:
		return min(limit, blockSize-headerSize+rng.IntN(17)-8)
	default:
		return rng.IntN(limit + 1)
	}
}
