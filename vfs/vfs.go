package vfs

import (
	"errors"
	"io"
)

// ErrLocked is returned by Lock when another holder has the lock.
var ErrLocked = errors.New("vfs: locked by another holder")

// File is an open file. Files opened by Open are read-only; files returned
// by Create are write-only and append at the end, and so are those from
// Reuse, whose end starts at offset 0 (Reuser). The end is where the last
// Write ended: a file that has been mapped (Mapper) or cut (Truncate) is
// not written with Write afterwards, for on the OS file system Write goes
// on from there, not from the stores or the cut (MemFS appends after
// them; wal.Writer never mixes the two). A File is safe for use by one
// goroutine at a time, except ReadAt, which may be called concurrently.
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
	// Write appends p (files from Create or Reuse only). It returns an
	// error or has handed all of p to the file system (invariant 1).
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
	// Lock takes an exclusive lock named by a file, creating it if needed;
	// a file that exists needs only read permission (invariant 3). It
	// fails with an error wrapping ErrLocked when the lock is held.
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

// Reuser is an FS that can give an obsolete file's storage to a new file,
// so that the new file overwrites blocks the file system has written
// before instead of filling fresh ones: on ext4 an fsync after writing
// into fallocated space must also write the conversion of its unwritten
// extents (to the journal, or to the extent blocks without one) (docs/write-path.md, "Recycled WALs", has what that costs). The
// OS file system (Default) and MemFS are Reusers, and
// FaultFS passes Reuse on; code that wants to reuse a file checks for it
// and creates a fresh file where it is missing or Reuse fails.
type Reuser interface {
	// Reuse renames oldname to newname as Rename does — replacing newname
	// if it exists, durable once the directory is synced — and returns the
	// file open for writing from offset 0, not truncated. No File may be
	// writing oldname. The File is write-only, as Create's: Read and
	// ReadAt refuse. Write writes sequentially from offset 0, over the old
	// contents; past the bytes written the file keeps the old contents
	// until they are overwritten or cut, so Size is the longer of the old
	// length and what has been written or reserved. It is a Mapper
	// wherever Create's files are: Map keeps the bytes the file holds in
	// its range and extends it with zeros past them, and Truncate cuts old
	// bytes and new alike. Like any write, the new bytes survive a machine
	// crash only once synced (invariant 2): until then a crash shows the
	// old durable contents beneath. On error nothing has changed: a
	// missing oldname gives an error wrapping fs.ErrNotExist, a FaultFS
	// over an FS that is not a Reuser one wrapping errors.ErrUnsupported.
	Reuse(oldname, newname string) (File, error)
}

// Preallocator is a File from Create or Reuse that can allocate its
// storage ahead of its writes without changing its length, so that a file
// that grows a little at a time still gets its blocks in one piece. On
// ext4 a file whose blocks were allocated in many pieces, as small
// reservations among other files' are, holds too many extents for its
// inode: the tree grows a block, and every fsync that converts a written
// range writes that block too (docs/write-path.md, "Preallocated
// WALs"). The OS file system on Linux is one; code that wants it checks
// for it, and goes on without it where it is missing or fails.
type Preallocator interface {
	// Preallocate allocates the file's storage for [0, size) where it has
	// none, leaving the length and the bytes as they are. Truncate, and a
	// Close-time cut, release what lies past the new length.
	Preallocate(size int64) error
}

// Mapper is a File from Create or Reuse that can be appended to through
// memory: the writer stores into a window on the file (Map) instead of
// calling Write, which costs no system call per append (invariants 1 and
// 4). The OS file system on Linux and MemFS are Mappers; code that wants
// one checks for it and writes where it is missing or where Map fails (a
// file system without fallocate). FaultFS is not one: its faults are
// injected into Writes.
type Mapper interface {
	// Map extends the file with zeros to cover [off, off+size), reserving
	// the space (invariant 4), and returns a writable window on that range.
	// Bytes the file already holds there stay, not zeroed (a reused file's
	// old contents, Reuser): the window shows them until overwritten. off
	// is a multiple of the page size and not below the bytes already
	// stored or written. On error the file is as it was.
	Map(off int64, size int) (Window, error)
	// Truncate sets the file's length to size. A writer that mapped calls
	// it when done, to cut the zeros past its last byte; like any change,
	// it survives a machine crash only once synced (invariant 2).
	Truncate(size int64) error
}

// Window is a writable range of a file, from Mapper.Map, used by the
// file's one writer goroutine.
type Window interface {
	// Bytes returns the range: b[i] is the file's byte at off+i. The slice
	// is valid until Unmap.
	Bytes() []byte
	// Stored says b[:n] holds what the writer stored (n never decreases);
	// from its return those bytes have been handed to the file system
	// (invariant 1). On the OS the stores themselves did that, and Stored
	// does nothing; MemFS, which cannot see a store, takes the bytes then.
	Stored(n int)
	// Put copies p into the window at offset at, as copy(Bytes()[at:], p)
	// does (p must fit), for the writer to follow with Stored. On the OS a
	// p of a page or more goes through pwrite(2) into the same range
	// instead: the first store into each page of a mapping takes a page
	// fault, and for long records one system call costs less than the
	// faults (BenchmarkMappedAppend in wal, on ext4: a 4 KiB record takes
	// 4.0-4.2 µs mapped, 4.9-5.1 when it was stored before Put, 3.6-3.8
	// written). An error
	// leaves the window's bytes at [at, at+len(p)) unknown.
	Put(at int, p []byte) error
	// Write is Put by pwrite(2) on the OS whatever p's length, for pages
	// a Sync has written back: writeback leaves them write-protected, so
	// the next store into one takes a fault that costs more than the
	// system call (BenchmarkSyncedAppend in wal). MemFS copies, as for Put.
	Write(at int, p []byte) error
	// Unmap ends the window. Bytes stored past the last Stored may or may
	// not be in the file.
	Unmap() error
}

// ReadFile returns the whole contents of name, as os.ReadFile does.
func ReadFile(fsys FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(f)
	return b, errors.Join(err, f.Close())
}
