//go:build darwin || dragonfly || freebsd || linux || netbsd || openbsd

package lsm

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/monbandb/monban/internal/unprivileged"
)

// TestReadOnlyWithoutWritePermission: Options.ReadOnly opens a DB its
// process may read but not write — directory 0o555, every file 0o444, as
// kvbench tree or explain meets a DB of another user — and serves every
// key, from tables and from the WAL, while holding the directory lock
// (vfs invariant 3: a second Open is ErrLocked).
func TestReadOnlyWithoutWritePermission(t *testing.T) {
	const keys = 300
	key := func(i int) []byte { return fmt.Appendf(nil, "k%04d", i) }
	val := func(i int) []byte { return fmt.Appendf(nil, "v%d", i) }
	deleted := func(i int) bool { return i%7 == 3 }
	unprivileged.Run(t, func(t *testing.T, dir string) {
		d, err := Open(dir, &Options{MemtableSize: 4 << 10})
		if err != nil {
			t.Fatal(err)
		}
		for i := range keys {
			if err := d.Put(key(i), val(i)); err != nil {
				t.Fatal(err)
			}
			if i == keys/2 {
				// The first half in tables, the rest partly in the WAL only.
				if err := d.Flush(); err != nil {
					t.Fatal(err)
				}
			}
		}
		for i := range keys {
			if deleted(i) {
				if err := d.Delete(key(i)); err != nil {
					t.Fatal(err)
				}
			}
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		names, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range names {
			if err := os.Chmod(filepath.Join(dir, e.Name()), 0o444); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(dir, 0o555); err != nil {
			t.Fatal(err)
		}
	}, func(t *testing.T, dir string) {
		d, err := Open(dir, &Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		for i := range keys {
			got, err := d.Get(key(i))
			switch {
			case deleted(i) && !errors.Is(err, ErrNotFound):
				t.Errorf("Get(%s) of a deleted key: %q, %v; want ErrNotFound", key(i), got, err)
			case !deleted(i) && (err != nil || string(got) != string(val(i))):
				t.Errorf("Get(%s) = %q, %v; want %q", key(i), got, err, val(i))
			}
		}
		if d2, err := Open(dir, &Options{ReadOnly: true}); !errors.Is(err, ErrLocked) {
			if err == nil {
				d2.Close()
			}
			t.Errorf("second read-only Open while the first holds the lock: %v, want ErrLocked", err)
		}
	})
}
