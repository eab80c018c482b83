package wal

import (
	"errors"
	"fmt"
	"slices"

	"github.com/monbandb/monban/vfs"
)

// maxRetainedBuf caps the assembly buffer a Writer keeps between Appends,
// so one huge record does not pin its size in memory for the log's life.
const maxRetainedBuf = 1 << 20

// windowSize is the span of the file a Writer maps at a time (mapped.go):
// a multiple of every page size in use (4, 16 and 64 KiB), and small,
// because the pages of a window count in the process's RSS until it is
// unmapped, and a crash leaves up to one window of zeros at the log's end.
const windowSize = 256 << 10

// Writer appends records to a log. It is not safe for concurrent use: the
// engine's commit path (one writer at a time) serializes Appends.
type Writer struct {
	f   vfs.File
	bs  int    // block size: blockSize outside tests
	off int64  // bytes handed to f so far: the offset of the next byte
	buf []byte // reused: one Append is framed here, then written at once (or copied into windows)
	err error  // sticky: after a failed Write the file's tail is unknown

	// Appending through mappings (mapped.go). m is nil when f is no
	// vfs.Mapper or its first Map failed; then every Append is a Write.
	m      vfs.Mapper
	ws     int        // window size: windowSize outside tests
	win    vfs.Window // the window being filled; nil before the first
	winOff int64      // file offset of win's first byte
	mapped bool       // a Map succeeded: from now on, never a Write
	// synced says a Sync wrote win's pages back since it was mapped.
	// Writeback write-protects a page, so a store into it faults again;
	// until the next window, Appends write through the window instead
	// (Window.Write): a durable log, one Sync per commit group, pays a
	// system call per record rather than a fault (BenchmarkSyncedAppend;
	// docs/write-path.md has what it saved a durable fill).
	synced bool
}

// NewWriter returns a Writer that frames records into f, which must be
// empty (a freshly created file): checksums are seeded with file offsets
// counted from 0. If f is a vfs.Mapper, records are stored through
// mappings of it instead of written (mapped.go).
func NewWriter(f vfs.File) *Writer { return newWriterSize(f, blockSize) }

// newWriterSize lets tests frame with small blocks (headerSize < bs <= blockSize).
func newWriterSize(f vfs.File, bs int) *Writer {
	m, _ := f.(vfs.Mapper)
	return &Writer{f: f, bs: bs, m: m, ws: windowSize}
}

// Append frames record into fragments and hands all of them to the file
// in one Write call, or stores them into the file's mapping, so when
// Append returns nil the record survives a process crash (vfs invariant
// 1); Sync makes it survive a machine crash. It returns the file offset
// where the record's first fragment starts, the value Reader.Offset
// reports for it. Records of any length, zero included, are accepted.
// After an error every later call fails: a partial Write leaves a tail
// only a Reader can judge.
func (w *Writer) Append(record []byte) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.m != nil {
		if start, ok := w.appendMapped(record); ok {
			return start, w.err
		}
	}
	start, frame := appendFrame(w.buf[:0], w.off, w.bs, record)
	w.buf = frame
	if _, err := w.f.Write(frame); err != nil {
		w.err = fmt.Errorf("wal: append at offset %d: %w", w.off, err)
		return 0, w.err
	}
	w.off += int64(len(frame))
	if cap(w.buf) > maxRetainedBuf {
		w.buf = nil
	}
	return start, nil
}

// appendFrame appends to dst the bytes that put record into a log of
// block size bs whose first off bytes are already framed: zero padding if
// fewer than headerSize bytes are left in the current block, then one
// fragment per block touched. It returns the offset of the record's first
// fragment and the extended slice; the log then ends at off plus the bytes
// added. Writer and BufferedWriter both frame here, into buffers of their
// own, which is what makes their files the same byte for byte.
func appendFrame(dst []byte, off int64, bs int, record []byte) (int64, []byte) {
	pad, left, size := layout(off, bs, len(record))
	b := slices.Grow(dst, size)[:len(dst)+pad]
	clear(b[len(dst):])
	off += int64(pad)
	start := off

	first := true
	for {
		n := min(len(record), left-headerSize)
		last := n == len(record)
		t := typeMiddle
		switch {
		case first && last:
			t = typeFull
		case first:
			t = typeFirst
		case last:
			t = typeLast
		}
		h := len(b)
		b = append(b, 0, 0, 0, 0, 0, 0, 0)
		b = append(b, record[:n]...)
		putHeader(b[h:], off, n, t)
		off += int64(headerSize + n)
		record = record[n:]
		if last {
			break
		}
		first, left = false, bs
	}
	return start, b
}

// layout says how appendFrame places a record of n bytes at offset off:
// the zero padding first, the bytes then left in the block for the first
// fragment, and the bytes appended in all.
func layout(off int64, bs, n int) (pad, left, size int) {
	left = bs - int(off%int64(bs))
	if left < headerSize {
		pad, left = left, bs
	}
	// Fragments: the first takes what is left of this block, each later
	// one a whole block; a header always fits (left >= headerSize).
	frags := 1
	if rest := n - (left - headerSize); rest > 0 {
		frags += (rest + bs - headerSize - 1) / (bs - headerSize)
	}
	return pad, left, pad + frags*headerSize + n
}

// Size returns the number of bytes handed to the file: the log's length
// once every Append so far has reached it.
func (w *Writer) Size() int64 { return w.off }

// Sync makes every record appended so far survive a machine crash
// (vfs invariant 2).
func (w *Writer) Sync() error {
	if w.err != nil {
		return w.err
	}
	w.synced = w.win != nil
	if err := w.f.Sync(); err != nil {
		// After a failed fsync the kernel may have dropped the dirty pages:
		// retrying cannot be trusted to mean anything (the "fsyncgate"
		// lesson), so the Writer refuses further work.
		w.err = fmt.Errorf("wal: sync: %w", err)
		return w.err
	}
	return nil
}

// Close closes the file without syncing it: call Sync first for the last
// records to survive a machine crash. A mapped log is first unmapped and
// cut to Size, dropping the zeros its last window reserved. Later calls
// return ErrClosed.
func (w *Writer) Close() error {
	if errors.Is(w.err, ErrClosed) {
		return w.err
	}
	err := w.unmap()
	err = errors.Join(err, w.f.Close())
	w.err = fmt.Errorf("wal: %w", ErrClosed)
	return err
}
