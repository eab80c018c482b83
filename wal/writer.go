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
	f      vfs.File
	bs     int     // block size: blockSize outside tests
	kind   logKind // legacy (NewWriter) or recyclable (NewRecyclableWriter)
	off    int64   // bytes handed to f so far: the offset of the next byte
	buf    []byte  // reused: one Append is framed here, then written at once (or copied into windows)
	err    error   // sticky: after a failed Write the file's tail is unknown
	sealed bool    // Seal succeeded: the log has ended

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

// NewWriter returns a Writer that frames records into f as a legacy log
// (fragment types 1-4), the manifest's format: f must be empty (a freshly
// created file), since checksums are seeded with file offsets alone and an
// older log's bytes past the end of this one could pass for its records.
// If f is a vfs.Mapper, records are stored through mappings of it instead
// of written (mapped.go).
func NewWriter(f vfs.File) *Writer { return newWriterSize(f, blockSize) }

// NewRecyclableWriter returns a Writer that frames records into f as the
// recyclable log number logNum (fragment types 5-9, checksums seeded with
// logNum too), and can Seal it. f may hold an older log's bytes, a reused
// file: the Writer writes from offset 0 regardless, and a Reader told
// logNum never takes the older bytes for this log's. Two conditions make
// that so: logNum is never given to another log (file numbers are never
// reused), and the older log was itself recyclable (a legacy log's
// fragments verify by offset alone, so they would read as this log's
// where this one has not overwritten them). Otherwise as NewWriter.
func NewRecyclableWriter(f vfs.File, logNum uint64) *Writer {
	w := newWriterSize(f, blockSize)
	w.kind = logKind{recyclable: true, num: logNum}
	return w
}

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
// only a Reader can judge. After Seal, Append fails with an error wrapping
// ErrClosed.
func (w *Writer) Append(record []byte) (int64, error) {
	return w.append(record, typeFull)
}

// append is Append of a record framed as whole says (appendFrame):
// typeFull, or typeSeal for Seal's.
func (w *Writer) append(record []byte, whole fragmentType) (int64, error) {
	if w.err != nil {
		return 0, w.err
	}
	if w.sealed {
		return 0, errSealed
	}
	if w.m != nil {
		if start, ok := w.appendMapped(record, whole); ok {
			return start, w.err
		}
	}
	start, frame := appendFrame(w.buf[:0], w.off, w.bs, w.kind, record, whole)
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

// appendFrame appends to dst the bytes that put record into a log of kind
// k and block size bs whose first off bytes are already framed: zero
// padding if fewer than headerSize bytes are left in the current block,
// then one fragment per block touched. A record that fits in one fragment
// gets the role whole: typeFull, or typeSeal for the seal, an empty record
// (Seal). It returns the offset of the record's first fragment and the
// extended slice; the log then ends at off plus the bytes added. Writer
// and BufferedWriter both frame here, into buffers of their own, which is
// what makes their files the same byte for byte.
func appendFrame(dst []byte, off int64, bs int, k logKind, record []byte, whole fragmentType) (int64, []byte) {
	pad, left, size := layout(off, bs, len(record))
	b := slices.Grow(dst, size)[:len(dst)+pad]
	clear(b[len(dst):])
	off += int64(pad)
	start := off

	first := true
	for {
		n := min(len(record), left-headerSize)
		last := n == len(record)
		role := typeMiddle
		switch {
		case first && last:
			role = whole
		case first:
			role = typeFirst
		case last:
			role = typeLast
		}
		h := len(b)
		b = append(b, 0, 0, 0, 0, 0, 0, 0)
		b = append(b, record[:n]...)
		putHeader(b[h:], off, k, n, k.typeOf(role))
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

// Seal ends a recyclable log where it stands: it appends a SEAL fragment
// (an empty one, after trailer padding like any fragment) and syncs, so
// that a Reader of the log stops there and EndsCleanly, whatever bytes
// follow in the file: an older log's, in a reused file, which no rule
// about a log's last bytes could tell from a torn last record. The engine
// seals a log, in place of its last Sync, when a newer one takes over.
// Afterwards Append and Seal fail with an error wrapping ErrClosed; Size
// counts the seal; Sync and Close work as before. A failed Seal is sticky
// as a failed Append or Sync is. A legacy log (NewWriter) has no seal:
// Seal returns an error and changes nothing.
func (w *Writer) Seal() error {
	if !w.kind.recyclable {
		return errLegacySeal
	}
	if _, err := w.append(nil, typeSeal); err != nil {
		return err
	}
	if err := w.Sync(); err != nil {
		return err
	}
	w.sealed = true
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
