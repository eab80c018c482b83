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
var _ Preallocator = createdFile{}

// fallocate is syscall.Fallocate; a test replaces it to play a file system
// without fallocate.
var fallocate = syscall.Fallocate

// Map reserves [off, off+size) with fallocate(fd, 0, off, size), which also
// extends the file with zeros, then maps that range MAP_SHARED: a store into
// it is a store into the page cache (invariant 1), and Sync's fsync writes it
// back (invariant 2). Never a sparse extension by ftruncate: a store into a
// hole the file system cannot allocate is a SIGBUS (invariant 4). A file
// system without fallocate (EOPNOTSUPP) makes Map fail, not the process.
// Mode 0 allocates only what the range lacks and zeroes only that: over
// the blocks of a reused file (Reuser) the old bytes stay, and the mapping
// shows them (TestReuseMap).
func (f createdFile) Map(off int64, size int) (Window, error) {
	if err := f.closedErr("map"); err != nil {
		return nil, err
	}
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
	return &osWindow{b: b, f: f.File, off: off}, nil
}

// Preallocate is fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, size): one
// request, which ext4 serves in as few extents as its free space allows,
// and the length stays, so what a reader or a crash sees of the file does
// not change. Map's fallocate over that space then only extends the
// length. A file system without fallocate (EOPNOTSUPP) gives an error.
func (f createdFile) Preallocate(size int64) error {
	if err := f.closedErr("fallocate"); err != nil {
		return err
	}
	fd := int(f.Fd())
	err := fallocate(fd, fallocKeepSize, 0, size)
	for err == syscall.EINTR {
		err = fallocate(fd, fallocKeepSize, 0, size)
	}
	if err != nil {
		return &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
	}
	return nil
}

// fallocKeepSize is linux/falloc.h's FALLOC_FL_KEEP_SIZE, which package
// syscall lacks.
const fallocKeepSize = 0x1

// osWindow is a mapped range of a file. The mapping outlives the file's
// descriptor, as mmap(2) does, until Unmap: once the file is closed, what
// Put and Write would write they store, never writing by a descriptor
// number another file may have taken.
type osWindow struct {
	b   []byte
	f   *os.File
	off int64 // the file offset of b[0]
}

// pwriteMin is the length from which Put writes instead of storing: a
// page, the span of one page fault.
const pwriteMin = 4096

// Put writes a long p with pwrite(2), which fills the page cache pages the
// mapping shares (the page cache is one, so a store and a write into the
// same file are coherent), and stores a short one.
func (w *osWindow) Put(at int, p []byte) error {
	if len(p) < pwriteMin {
		copy(w.b[at:], p)
		return nil
	}
	return w.Write(at, p)
}

func (w *osWindow) Write(at int, p []byte) error {
	_, err := w.f.WriteAt(p, w.off+int64(at)) // pwrite(2), EINTR retried
	if errors.Is(err, os.ErrClosed) {
		copy(w.b[at:], p)
		return nil
	}
	return err
}

func (w *osWindow) Bytes() []byte { return w.b }

// Stored does nothing: the stores already reached the page cache.
func (w *osWindow) Stored(int) {}

func (w *osWindow) Unmap() error {
	if w.b == nil {
		return &os.PathError{Op: "munmap", Path: w.f.Name(), Err: fs.ErrClosed}
	}
	b := w.b
	w.b = nil
	if err := syscall.Munmap(b); err != nil {
		return &os.PathError{Op: "munmap", Path: w.f.Name(), Err: err}
	}
	return nil
}
