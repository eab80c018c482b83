package vfs

import (
	"errors"
	"io"
	"io/fs"
	"syscall"
)

// errNegativeOffset matches what os.File.ReadAt says for off < 0.
var errNegativeOffset = errors.New("negative offset")

// memFile is an open MemFS file: a handle on an inode, so it keeps working
// after its name is renamed or removed, as on POSIX. Its fields other than
// off are guarded by fs.mu; off belongs to the one goroutine calling Read.
type memFile struct {
	fs       *MemFS
	n        *memNode
	name     string
	writable bool // from Create or Reuse: write-only; from Open: read-only
	closed   bool
	off      int64
}

var _ File = (*memFile)(nil)

// check returns the error for op on this handle, if any. Callers hold fs.mu.
func (f *memFile) check(op string, write bool) error {
	if f.closed {
		return pathErr(op, f.name, fs.ErrClosed)
	}
	if write != f.writable {
		return pathErr(op, f.name, syscall.EBADF)
	}
	return nil
}

func (f *memFile) Read(p []byte) (int, error) {
	f.fs.mu.RLock()
	defer f.fs.mu.RUnlock()
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if f.off >= f.n.size() {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := f.n.readAt(p, f.off)
	f.off += int64(n)
	return n, nil
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.RLock()
	defer f.fs.mu.RUnlock()
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("readat", f.name, errNegativeOffset)
	}
	if off >= f.n.size() {
		if len(p) == 0 {
			return 0, nil
		}
		return 0, io.EOF
	}
	n := f.n.readAt(p, off)
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("write", true); err != nil {
		return 0, err
	}
	// Write appends past what this life of the file wrote or reserved —
	// over a reused file's old bytes, which fill keeps below that point.
	f.n.fill(f.n.length)
	f.n.data.append(p)
	return len(p), nil
}

// Sync makes everything written or stored durable, and the file's length,
// and a reused file's old bytes beneath: fsync writes back every dirty
// page of the inode, those of its old life included. It records lengths
// and images, not a copy: by fileData's invariant the bytes below them
// never change.
func (f *memFile) Sync() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return pathErr("sync", f.name, fs.ErrClosed)
	}
	f.n.synced, f.n.syncedSize, f.n.syncedLength = f.n.data, f.n.data.size, f.n.length
	f.n.syncedUnder = f.n.under
	return nil
}

func (f *memFile) Size() (int64, error) {
	f.fs.mu.RLock()
	defer f.fs.mu.RUnlock()
	if f.closed {
		return 0, pathErr("stat", f.name, fs.ErrClosed)
	}
	return f.n.size(), nil
}

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return pathErr("close", f.name, fs.ErrClosed)
	}
	f.closed = true
	return nil
}
