package vfs

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// Only Linux has Mapper on the OS file system: it is where fallocate(2)
// reserves space and where fsync is documented to write back the pages
// dirtied through a shared mapping. Elsewhere osFile lacks Map, and
// writers fall back to Write.
var _ Mapper = createdFile{}

// fallocate is syscall.Fallocate; a test replaces it to play a file system
// without fallocate.
var fallocate = syscall.Fallocate

// Map reserves [off, off+size) with fallocate(fd, 0, off, size), which also
// extends the file with zeros, then maps that range MAP_SHARED: a store into
// it is a store into the page cache (invariant 1), and Sync's fsync writes it
// back (invariant 2). Never a sparse extension by ftruncate: a store into a
// hole the file system cannot allocate is a SIGBUS (invariant 4). A file
// system without fallocate (EOPNOTSUPP) makes Map fail, not the process.
func (f createdFile) Map(off int64, size int) (Window, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	fd := int(f.Fd())
	for {
		err = fallocate(fd, 0, off, int64(size))
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return nil, &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
	}
	b, err := syscall.Mmap(fd, off, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		err = &os.PathError{Op: "mmap", Path: f.Name(), Err: err}
		// fallocate extended the file; the contract leaves it as it was.
		return nil, errors.Join(err, f.Truncate(fi.Size()))
	}
	return &osWindow{b: b, name: f.Name()}, nil
}

// osWindow is a mapped range of a file. The mapping outlives the file's
// descriptor, as mmap(2) does, until Unmap.
type osWindow struct {
	b    []byte
	name string
}

func (w *osWindow) Bytes() []byte { return w.b }

// Stored does nothing: the stores already reached the page cache.
func (w *osWindow) Stored(int) {}

func (w *osWindow) Unmap() error {
	if w.b == nil {
		return &os.PathError{Op: "munmap", Path: w.name, Err: fs.ErrClosed}
	}
	b := w.b
	w.b = nil
	if err := syscall.Munmap(b); err != nil {
		return &os.PathError{Op: "munmap", Path: w.name, Err: err}
	}
	return nil
}
