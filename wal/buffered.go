package wal

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/monbandb/monban/vfs"
)

// bufferLimit is the size of each of a BufferedWriter's two buffers: one
// is being written while Appends fill the other, and an Append whose
// record does not fit in what is left waits for the flusher (the
// back-pressure). Memory is thus 2 x bufferLimit once both are in use,
// plus, for a record larger than a buffer, a buffer of its own while it is
// written. Measured with BenchmarkBufferLimit (ns per Append to an ext4
// file, medians of 10 runs in two sessions on 2 cores shared with other
// work, so differences under ~15% are noise):
//
//	limit     256K  512K    1M    2M    4M
//	100 B       85    75    80    77   100
//	4 KiB     1527  1280  1151   980   873
//
// Small records are bound by Append itself whatever the size. 4 KiB
// records are bound by the flusher's Writes (the buffer is full at every
// swap), which cost less per byte the larger they are. 2 MiB is within
// noise of the best for both at half the memory of 4 MiB.
const bufferLimit = 2 << 20

// BufferedWriter appends records to a log like Writer, with the same bytes
// on disk and the same offsets, but Append only frames the record into
// memory: a goroutine of the BufferedWriter (the flusher) hands whatever
// has accumulated to the file in one Write, while Appends fill a second
// buffer. Many records thus cost one write(2), and Append does not touch
// the file.
//
// Guarantee: when Append returns nil the record is in memory only. A
// process crash keeps a prefix of the appended records: every record
// appended before the last Flush or Sync that returned nil, then perhaps
// some of the later ones in order, then perhaps one record cut short (a
// torn tail, which a Reader drops); never a gap, never a later record
// without the earlier ones, never corruption. A machine crash keeps, in
// the same way, a prefix containing every record appended before the last
// Sync that returned nil. The unbuffered Writer instead makes each record
// survive a process crash as soon as Append returns.
//
// Back-pressure: records wait behind the Write in progress in a buffer of
// 2 MiB (bufferLimit); an Append whose record does not fit in what is left
// of it waits until the flusher takes the buffer. A record larger than the
// buffer waits for an empty one and has it to itself.
//
// Errors are sticky: after a failed Write or Sync every later call returns
// an error wrapping the cause. Records whose Append returned nil may then
// be lost: those of the failed Write and any appended after it. Close
// reports the error too, so a buffered record is never lost silently.
//
// All methods are safe for concurrent use. Concurrent Appends are framed
// in the order they take the writer's lock, so a caller that needs an
// order (the engine's commit leader) serializes them; Flush, Sync and Size
// may be called from any goroutine while Appends run.
type BufferedWriter struct {
	f     vfs.File // used by the flusher only until it returns, then by Close
	bs    int      // block size: blockSize outside tests
	limit int      // bufferLimit outside tests
	kind  logKind  // legacy (NewBufferedWriter) or recyclable

	// Invariant: synced <= written <= off - len(buf). The bytes between
	// written and off - len(buf) are in the Write in progress, if any.
	mu       sync.Mutex
	work     sync.Cond    // the flusher waits here for records, a Sync or Close
	progress sync.Cond    // callers wait here for the flusher to write, sync or fail
	buf      []byte       // framed records the flusher has not taken yet
	spare    []byte       // the flusher's last batch, emptied, for the next swap
	off      atomic.Int64 // bytes appended, the offset of the next byte: changed under mu, read by Size without it
	written  int64        // bytes handed to f
	synced   int64        // bytes made durable by the last fsync
	syncWant int64        // bytes a waiting Sync wants durable
	closing  bool         // Close has begun: the flusher writes what is left and returns
	sealed   bool         // the seal is framed: nothing may follow it
	err      error        // sticky: a failed Write or Sync, or ErrClosed
	done     chan struct{}
}

// NewBufferedWriter returns a BufferedWriter that frames records into f
// as a legacy log, which f must be empty for (as for NewWriter), and
// starts its flusher. Close stops it.
func NewBufferedWriter(f vfs.File) *BufferedWriter {
	return newBufferedWriterSize(f, blockSize, bufferLimit)
}

// NewRecyclableBufferedWriter returns a BufferedWriter that frames records
// into f as the recyclable log number logNum, on the conditions of
// NewRecyclableWriter: f may hold an older recyclable log's bytes, and
// logNum is this log's alone.
func NewRecyclableBufferedWriter(f vfs.File, logNum uint64) *BufferedWriter {
	w := newBufferedWriterSize(f, blockSize, bufferLimit)
	w.kind = logKind{recyclable: true, num: logNum}
	return w
}

// newBufferedWriterSize lets tests use small blocks (as newWriterSize)
// and a small buffer limit.
func newBufferedWriterSize(f vfs.File, bs, limit int) *BufferedWriter {
	w := &BufferedWriter{f: f, bs: bs, limit: limit, done: make(chan struct{})}
	w.work.L, w.progress.L = &w.mu, &w.mu
	go w.flush()
	return w
}

// Append frames record into the buffer and returns the file offset where
// its first fragment will start, the value Reader.Offset reports for it.
// It waits only when the record does not fit in the buffer (back-pressure).
// When it returns nil the record is not yet in the file: Flush hands it to
// the file, Sync makes it durable. After Seal it fails with an error
// wrapping ErrClosed.
func (w *BufferedWriter) Append(record []byte) (int64, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.frame(record, typeFull)
}

// frame is Append of a record framed as whole says (appendFrame): typeFull,
// or typeSeal for Seal's. w.mu is held.
func (w *BufferedWriter) frame(record []byte, whole fragmentType) (int64, error) {
	for {
		// Checked again after every wait: a Close that began meanwhile
		// may have seen the buffer empty and stopped the flusher, and a
		// Seal may have ended the log.
		if err := w.usable(); err != nil {
			return 0, err
		}
		if w.sealed {
			return 0, errSealed
		}
		_, _, size := layout(w.off.Load(), w.bs, len(record))
		if len(w.buf) == 0 || len(w.buf)+size <= w.limit {
			if w.buf == nil {
				w.buf = make([]byte, 0, max(w.limit, size))
			}
			break
		}
		w.progress.Wait() // back-pressure: the flusher will take w.buf
	}
	start, b := appendFrame(w.buf, w.off.Load(), w.bs, w.kind, record, whole)
	w.off.Add(int64(len(b) - len(w.buf)))
	w.buf = b
	w.work.Signal()
	return start, nil
}

// Flush returns once every record appended before the call has been handed
// to the file, so it survives a process crash (vfs invariant 1), or with
// the sticky error.
func (w *BufferedWriter) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return err
	}
	for target := w.off.Load(); w.err == nil && w.written < target; {
		w.progress.Wait()
	}
	return w.err
}

// Sync returns once every record appended before the call has been handed
// to the file and made durable (vfs invariant 2): Flush, then fsync. The
// flusher runs the fsync, so Appends go on meanwhile; Syncs that overlap
// share it, and a Sync with nothing new to make durable makes none.
func (w *BufferedWriter) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.usable(); err != nil {
		return err
	}
	return w.syncTo(w.off.Load())
}

// syncTo has the flusher make the first target bytes durable and waits
// until it has, or has failed. w.mu is held.
func (w *BufferedWriter) syncTo(target int64) error {
	w.syncWant = max(w.syncWant, target)
	w.work.Signal()
	for w.err == nil && w.synced < target {
		w.progress.Wait()
	}
	return w.err
}

// Seal ends a recyclable log as Writer.Seal does: it frames a SEAL after
// every record appended before it and returns once the flusher has
// written and synced them all, or with the sticky error. Appends that
// take the writer's lock after it fail with an error wrapping ErrClosed,
// as does a second Seal; a legacy log (NewBufferedWriter) has no seal.
func (w *BufferedWriter) Seal() error {
	if !w.kind.recyclable {
		return errLegacySeal
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, err := w.frame(nil, typeSeal); err != nil {
		return err
	}
	w.sealed = true
	return w.syncTo(w.off.Load())
}

// Size returns the number of bytes appended, those still buffered
// included: the log's length once every record appended so far has reached
// the file, where the next Append's bytes begin. The engine's rotation
// threshold and WAL statistics thus count what was appended, whether or
// not the flusher has written it yet. Size does not wait for the writer's
// lock.
func (w *BufferedWriter) Size() int64 {
	return w.off.Load()
}

// Close hands every buffered record to the file, stops the flusher and
// closes the file, without syncing it: call Sync first for the last
// records to survive a machine crash. It returns the sticky error, if
// there is one (some records may be lost), else the file's Close error.
// Later calls return ErrClosed.
func (w *BufferedWriter) Close() error {
	w.mu.Lock()
	if w.closing {
		w.mu.Unlock()
		return fmt.Errorf("wal: %w", ErrClosed)
	}
	w.closing = true
	w.work.Signal()
	w.mu.Unlock()

	<-w.done
	cerr := w.f.Close()
	w.mu.Lock()
	defer w.mu.Unlock()
	err := w.err
	w.err = fmt.Errorf("wal: %w", ErrClosed)
	w.buf, w.spare = nil, nil
	w.progress.Broadcast()
	if err != nil {
		return err
	}
	return cerr
}

// usable returns the error every call but Size and Close fails with: the
// sticky one, or ErrClosed once Close has begun (the flusher may already
// be gone, and nothing would answer a wait). w.mu is held.
func (w *BufferedWriter) usable() error {
	if w.err != nil {
		return w.err
	}
	if w.closing {
		return fmt.Errorf("wal: %w", ErrClosed)
	}
	return nil
}

// flush is the flusher: the only goroutine that writes or syncs f, so f
// is used by one goroutine at a time (as vfs.File requires) while callers
// never wait for a system call under w.mu. A Sync whose bytes are all
// written goes first, so a stream of Appends cannot starve it; then the
// buffer, taken whole (the swap: Appends continue into the spare buffer);
// then, at Close, the return. It returns at the first error too, after
// waking every waiter to see it.
func (w *BufferedWriter) flush() {
	defer close(w.done)
	w.mu.Lock()
	defer w.mu.Unlock()
	for w.err == nil {
		switch {
		case w.synced < w.syncWant && w.syncWant <= w.written:
			n := w.written
			w.mu.Unlock()
			err := w.f.Sync()
			w.mu.Lock()
			if err != nil {
				// As in Writer.Sync: after a failed fsync the dirty pages
				// may be gone, and a retry proves nothing.
				w.err = fmt.Errorf("wal: sync: %w", err)
			} else {
				w.synced = n
			}
		case len(w.buf) > 0:
			batch := w.buf
			w.buf, w.spare = w.spare[:0], nil
			w.progress.Broadcast() // room for an Append held back by the limit
			w.mu.Unlock()
			_, err := w.f.Write(batch)
			w.mu.Lock()
			if err != nil {
				w.err = fmt.Errorf("wal: write of %d bytes at offset %d: %w", len(batch), w.written, err)
			} else {
				w.written += int64(len(batch))
			}
			if cap(batch) == w.limit {
				w.spare = batch[:0] // not a buffer made for one large record
			}
		case w.closing:
			return
		default:
			w.work.Wait()
			continue
		}
		w.progress.Broadcast()
	}
}
