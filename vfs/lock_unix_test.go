//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package vfs

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/monbandb/monban/internal/unprivileged"
)

// TestOSLockWithoutWritePermission: invariant 3 for a process that may
// read the lock file but not write it or its directory (a DB opened
// read-only by another user, kvbench tree of a DB it does not own): LOCK
// of mode 0o444 in a directory of mode 0o555 locks, excludes a second
// holder in this process and in another, and locks again once released; a
// missing lock file is not created, and the error says why.
func TestOSLockWithoutWritePermission(t *testing.T) {
	unprivileged.Run(t, func(t *testing.T, dir string) {
		if err := os.WriteFile(filepath.Join(dir, "LOCK"), nil, 0o444); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
	}, func(t *testing.T, dir string) {
		name := filepath.Join(dir, "LOCK")
		l, err := Default.Lock(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Default.Lock(name); !errors.Is(err, ErrLocked) {
			t.Fatalf("second Lock: %v, want ErrLocked", err)
		}
		if got := lockFromChild(t, name); got != "locked" {
			t.Fatalf("child while the lock is held: %q, want locked", got)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l, err = Default.Lock(name)
		if err != nil {
			t.Fatalf("Lock after release: %v", err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}

		missing := filepath.Join(dir, "NEWLOCK")
		if l, err := Default.Lock(missing); err == nil {
			l.Close()
			t.Fatalf("Lock of %s in a directory it cannot write succeeded", missing)
		} else if !errors.Is(err, fs.ErrPermission) {
			t.Fatalf("Lock of a missing file it cannot create: %v, want a permission error", err)
		}
		if _, err := os.Stat(missing); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("after the failed Lock, stat %s: %v, want not exist", missing, err)
		}
	})
}
