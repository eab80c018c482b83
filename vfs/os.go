package vfs

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// Default is the operating system's file system.
var Default FS = osFS{}

// osFS maps the FS interface onto package os one to one; the only logic
// of its own is Lock (lock_unix.go), which falls back to a read-only
// descriptor where the process may not write the lock file.
type osFS struct{}

var _ FS = osFS{}

// osFile adds Size to *os.File; every other method is the os.File one.
type osFile struct{ *os.File }

func (f osFile) Size() (int64, error) {
	fi, err := f.Stat()
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// createdFile is a file from Create or Reuse. It is opened read-write
// because a writable shared mapping (Mapper, os_map_linux.go) needs a
// descriptor open for reading too, so Read and ReadAt refuse here instead:
// files from Create and Reuse stay write-only, as on the other file
// systems.
type createdFile struct{ osFile }

func (f createdFile) Read([]byte) (int, error) {
	if err := f.closedErr("read"); err != nil {
		return 0, err
	}
	return 0, &os.PathError{Op: "read", Path: f.Name(), Err: syscall.EBADF}
}

func (f createdFile) ReadAt([]byte, int64) (int, error) {
	return f.Read(nil)
}

// closedErr is the error of a call on f once it is closed, wrapping
// fs.ErrClosed as every File's must; nil while it is open. The calls that
// do not go through os.File's methods (a refused read, fallocate on the
// descriptor) ask it first: Fd is ^0 once the file is closed.
func (f createdFile) closedErr(op string) error {
	if f.Fd() != ^uintptr(0) {
		return nil
	}
	return &os.PathError{Op: op, Path: f.Name(), Err: os.ErrClosed}
}

func (osFS) Create(name string) (File, error) {
	// No O_APPEND: the only writer of a new file writes at its end anyway,
	// and O_APPEND would cost a seek-to-end per write on some systems.
	f, err := os.OpenFile(name, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	return createdFile{osFile{f}}, nil
}

var _ Reuser = osFS{}

// Reuse opens oldname before renaming it, not after, so that a failed open
// (EACCES, EMFILE) leaves both names as they were; the descriptor follows
// the inode through the rename. Errors from the File, which package os
// makes, name oldname, the name it was opened by. No O_TRUNC, and a
// read-write descriptor like Create's, so the file is a Mapper on Linux.
func (osFS) Reuse(oldname, newname string) (File, error) {
	f, err := os.OpenFile(oldname, os.O_RDWR, 0)
	if err != nil {
		return nil, err
	}
	if err := os.Rename(oldname, newname); err != nil {
		f.Close()
		return nil, err
	}
	return createdFile{osFile{f}}, nil
}

func (osFS) Open(name string) (File, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

func (osFS) Rename(oldname, newname string) error { return os.Rename(oldname, newname) }

func (osFS) Remove(name string) error { return os.Remove(name) }

// Link makes newname a hard link to oldname (Linker).
func (osFS) Link(oldname, newname string) error { return os.Link(oldname, newname) }

func (osFS) List(dir string) ([]string, error) {
	entries, err := osFS{}.readDir(dir)
	return names(entries), err
}

// readDir has each entry's type from the listing (d_type), at no cost of
// its own.
func (osFS) readDir(dir string) ([]Entry, error) {
	dirents, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		return nil, err
	}
	entries := make([]Entry, len(dirents))
	for i, e := range dirents {
		entries[i] = Entry{Name: e.Name(), Dir: e.IsDir()}
	}
	return entries, nil
}

func (osFS) MkdirAll(dir string) error { return os.MkdirAll(dir, 0o755) }

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(filepath.Clean(dir))
	if err != nil {
		return err
	}
	if err := d.Sync(); err != nil {
		d.Close()
		return err
	}
	return d.Close()
}

func (osFS) Lock(name string) (io.Closer, error) { return lockFile(name) }
