//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// lockFile takes flock(LOCK_EX|LOCK_NB) on its own open of name. flock
// locks belong to an open file description, not to a process, so a second
// open of the same file — in this process or another — is refused: that
// is what makes invariant 3 hold within one process too (fcntl locks would
// not). The lock dies with the process, so a crash never leaves a stale
// lock behind.
//
// flock needs a descriptor, not write access: where the read-write open
// is refused for permission (a file or directory of another user, a
// read-only mount), the file is opened read-only instead, never created,
// and locked the same way. If that fails too, the first error is the one
// that says why, "permission denied" rather than "no such file".
func lockFile(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o644)
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		if rf, rerr := os.Open(name); rerr == nil {
			f, err = rf, nil
		}
	}
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, &os.PathError{Op: "lock", Path: name, Err: ErrLocked}
		}
		return nil, &os.PathError{Op: "flock", Path: name, Err: err}
	}
	return f, nil // closing the file releases the lock
}
