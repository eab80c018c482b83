package vfs

import (
	"errors"
	"io"
)

// ErrLocked is returned by Lock when another holder has the lock.
var ErrLocked = errors.New("vfs: locked by another holder")

// File is an open file. Files opened by Open are read-only; files returned
// by Create are write-only and append at the end. A File is safe for use by
// one goroutine at a time, except ReadAt, which may be called concurrently.
//
// Every method of a closed File returns an error wrapping fs.ErrClosed.
type File interface {
	// Read reads from the file's read offset (files from Open only). At
	// the end of the file it returns 0, io.EOF.
	io.Reader
	// ReadAt reads len(p) bytes at off (files from Open only); fewer bytes
	// come with io.EOF. It sees every byte written to the file so far, even
	// if not synced (page-cache semantics).
	io.ReaderAt
	// Write appends p (files from Create only). It returns an error or has
	// handed all of p to the file system (invariant 1).
	io.Writer
	io.Closer
	// Sync makes the file's contents durable (invariant 2).
	Sync() error
	// Size returns the file's current length, including unsynced bytes.
	Size() (int64, error)
}

// FS is the file system monban runs on. Names are paths as understood by
// path/filepath. A missing name or directory gives an error wrapping
// fs.ErrNotExist. Every implementation is safe for concurrent use.
type FS interface {
	// Create creates name, truncating it if it exists, for writing.
	Create(name string) (File, error)
	// Open opens an existing file for reading.
	Open(name string) (File, error)
	// Rename atomically replaces newname with oldname. Files already open
	// under either name keep reading what they had opened.
	Rename(oldname, newname string) error
	// Remove deletes a file or an empty directory. Files already open keep
	// reading it.
	Remove(name string) error
	// List returns the names (not paths) of the entries of dir, sorted,
	// directories included.
	List(dir string) ([]string, error)
	// MkdirAll creates dir and its parents. A new directory is itself an
	// entry of its parent: sync the parent to make it durable.
	MkdirAll(dir string) error
	// Lock takes an exclusive lock named by a file, creating it if needed
	// (invariant 3). It fails with an error wrapping ErrLocked when the
	// lock is held.
	Lock(name string) (io.Closer, error)
	// SyncDir makes the directory's entries durable (invariant 2).
	SyncDir(dir string) error
}

// Linker is an FS that can give a file a second name (a hard link): the
// same bytes, no copy. The OS file system (Default) is one; code that wants
// a link checks for it and copies where it is missing or Link fails (a
// second file system, a file system without links).
type Linker interface {
	Link(oldname, newname string) error
}
