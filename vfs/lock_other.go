//go:build !(darwin || dragonfly || freebsd || linux || netbsd || openbsd)

package vfs

import (
	"errors"
	"fmt"
	"io"
	"runtime"
)

// errLockUnsupported keeps monban building where flock does not exist; a
// DB there cannot be opened on the OS file system until someone adds the
// platform's lock call here.
var errLockUnsupported = errors.New("vfs: file locks not supported on " + runtime.GOOS)

func lockFile(name string) (io.Closer, error) {
	return nil, fmt.Errorf("vfs: lock %s: %w", name, errLockUnsupported)
}
