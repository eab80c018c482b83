package wal

import (
	"errors"
	"fmt"
)

// appendMapped stores record's frame (appendFrame, whole as there) into
// the file's current window instead of writing it: the same bytes Write
// would add, at the same offsets, with no system call. On the OS the
// window is a shared mapping of the file, so a store lands in the page
// cache and survives a process crash once it completes, as a returned
// write(2) does (vfs invariant 1). It returns ok false when the file is to be written
// instead: the first Map failed (a file system without fallocate), before
// any byte went through a mapping. Once a Map has succeeded the Writer
// never falls back: the file then extends with zeros past the last
// record, up to the window's end, and Write appends at the end of the
// file, after those zeros, where a Reader would never find the record.
// Errors are sticky in w.err.
//
// The record is framed in w.buf and handed to the window with Put, which
// stores it, or on the OS writes it with pwrite(2) when it is a page or
// longer: one system call then costs less than a page fault per page. It
// is always written once a Sync has written the window back (w.synced).
// Framing straight into the window saved a copy of a short record (about
// a hundred bytes: a few nanoseconds of a 150 ns append) but could not
// write a long one.
func (w *Writer) appendMapped(record []byte, whole fragmentType) (start int64, ok bool) {
	if w.off == w.winOff+int64(w.ws) || w.win == nil {
		if err := w.nextWindow(w.off); err != nil {
			if !w.mapped {
				w.m = nil
				return 0, false
			}
			w.err = err
			return 0, true
		}
	}
	start, frame := appendFrame(w.buf[:0], w.off, w.bs, w.kind, record, whole)
	w.buf = frame
	at := w.off
	for len(frame) > 0 {
		if at == w.winOff+int64(w.ws) {
			if err := w.nextWindow(at); err != nil {
				w.err = err
				return 0, true
			}
		}
		i := int(at - w.winOff)
		n := min(len(frame), w.ws-i)
		put := w.win.Put
		if w.synced {
			put = w.win.Write
		}
		if err := put(i, frame[:n]); err != nil {
			w.err = fmt.Errorf("wal: append at offset %d: %w", at, err)
			return 0, true
		}
		w.win.Stored(i + n)
		at += int64(n)
		frame = frame[n:]
	}
	w.off = at
	if cap(w.buf) > maxRetainedBuf {
		w.buf = nil
	}
	return start, true
}

// Prepare maps the log's first window now, if the file can be mapped, so
// that the first Append does not: the fallocate and mmap cost the first
// write after a WAL rotation some 230 µs, where the rotation that creates
// the log, already waiting on fsyncs, does not notice them. A failed Map
// leaves the Writer to write instead, as the first Append's would.
func (w *Writer) Prepare() {
	if w.m == nil || w.win != nil || w.err != nil {
		return
	}
	if err := w.nextWindow(w.off); err != nil {
		w.m = nil
	}
}

// nextWindow unmaps the current window, if any, and maps the one starting
// at off. Unmapping first keeps at most one window of the log's pages in
// the process's RSS.
func (w *Writer) nextWindow(off int64) error {
	if w.win != nil {
		err := w.win.Unmap()
		w.win = nil
		if err != nil {
			return fmt.Errorf("wal: unmap at offset %d: %w", w.winOff, err)
		}
	}
	win, err := w.m.Map(off, w.ws)
	if err != nil {
		return fmt.Errorf("wal: map at offset %d: %w", off, err)
	}
	w.win, w.winOff, w.mapped, w.synced = win, off, true, false
	return nil
}

// unmap ends the mapping for Close: it unmaps the last window and cuts the
// file to the bytes appended, so a cleanly closed log has no zero tail,
// nor, in a reused file, any of the older log's bytes. A partial record a
// failed Append stored past Size is cut with the zeros.
func (w *Writer) unmap() error {
	if !w.mapped {
		return nil
	}
	var err error
	if w.win != nil {
		err = w.win.Unmap()
		w.win = nil
	}
	return errors.Join(err, w.m.Truncate(w.off))
}
