package vfs

import (
	"io/fs"
	"syscall"
)

// memPageSize is the alignment MemFS asks of Map's offset, as mmap(2) asks
// of the OS's: the smallest page size in use, so code that passes on MemFS
// passes on a 4 KiB-page machine.
const memPageSize = 4096

var _ Mapper = (*memFile)(nil)

// Map reserves [off, off+size) past the file's data — zeros, but for a
// reused file's old bytes, which stay — and returns a window that is not
// MemFS's storage but a buffer of its own, holding the range's bytes.
// Stores into it are the writer goroutine's alone; Stored copies them into
// the file under the lock, so readers (ReadAt from any goroutine,
// ProcessCrashClone) never race with a store, and see every byte whose
// Stored has returned. Aliasing the file's chunks instead would make every
// concurrent read a data race. The cost is a kinder process crash than the
// OS's: a window's bytes reach the file whole Stored calls at a time, never
// a store cut off mid-record (FaultFS's torn Writes test that case).
//
// off must be at or past the data written and stored so far: fileData only
// appends (its invariant is what lets Sync record a length).
func (f *memFile) Map(off int64, size int) (Window, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("map", true); err != nil {
		return nil, err
	}
	if off%memPageSize != 0 || size <= 0 || off < f.n.data.size {
		return nil, pathErr("map", f.name, syscall.EINVAL)
	}
	f.n.length = max(f.n.length, off+int64(size))
	b := make([]byte, size)
	if off < f.n.under.size {
		f.n.under.d.readAt(b, off, f.n.under.size)
	}
	return &memWindow{f: f, off: off, b: b}, nil
}

// Truncate sets the length to size, cutting a reused file's old bytes
// too. Cutting written bytes gives the file a new fileData holding the
// rest, since synced may share the old one.
func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("truncate", true); err != nil {
		return err
	}
	if size < 0 {
		return pathErr("truncate", f.name, syscall.EINVAL)
	}
	if size < f.n.data.size {
		f.n.data = f.n.data.prefix(size)
	}
	f.n.under = f.n.under.cut(size)
	f.n.length = size
	return nil
}

// memWindow is a MemFS window: b is the writer's, and stored counts the
// bytes of b already copied into the file. Like an OS mapping it outlives
// the file's Close.
type memWindow struct {
	f      *memFile
	off    int64
	b      []byte
	stored int
}

func (w *memWindow) Bytes() []byte { return w.b }

// Put is a copy: MemFS has no page faults to save.
func (w *memWindow) Put(at int, p []byte) error {
	copy(w.b[at:], p)
	return nil
}

// Write is Put: MemFS has no writeback to write-protect a page.
func (w *memWindow) Write(at int, p []byte) error { return w.Put(at, p) }

// Stored appends b[w.stored:n] to the file's data, after the file's bytes
// (fill: zeros, or a reused file's old bytes) for any of the window's
// range below it that holds none (bytes an earlier window never stored).
// The window must continue the file's data: anything written or stored
// past its range since Map would be overwritten, which fileData cannot
// do, and is a bug in the caller.
func (w *memWindow) Stored(n int) {
	w.f.fs.mu.Lock()
	defer w.f.fs.mu.Unlock()
	if w.b == nil || n <= w.stored {
		return
	}
	d := w.f.n.data
	at := w.off + int64(w.stored)
	if d.size > at {
		panic("vfs: MemFS window stored over bytes written since Map")
	}
	w.f.n.fill(at)
	d.append(w.b[w.stored:n])
	w.stored = n
}

func (w *memWindow) Unmap() error {
	if w.b == nil {
		return pathErr("munmap", w.f.name, fs.ErrClosed)
	}
	w.b = nil
	return nil
}
