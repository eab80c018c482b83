package vfs

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
)

// TestMapWithoutFallocate: on a file system without fallocate (EOPNOTSUPP,
// played by the fallocate hook) Map fails with that error and leaves the
// file as it was, so the writer can fall back to Write. Never a sparse
// extension: a store into a hole on a full disk would be a SIGBUS.
func TestMapWithoutFallocate(t *testing.T) {
	for _, errno := range []syscall.Errno{syscall.EOPNOTSUPP, syscall.ENOSYS, syscall.ENOSPC} {
		t.Run(errno.Error(), func(t *testing.T) {
			saved := fallocate
			fallocate = func(int, uint32, int64, int64) error { return errno }
			defer func() { fallocate = saved }()
			name := filepath.Join(t.TempDir(), "log")
			f, err := Default.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.Write([]byte("abc")); err != nil {
				t.Fatal(err)
			}
			w, err := f.(Mapper).Map(0, 1<<16)
			if !errors.Is(err, errno) || w != nil {
				t.Fatalf("Map: %v, %v; want an error wrapping %v", w, err, errno)
			}
			if size, err := f.Size(); err != nil || size != 3 {
				t.Fatalf("size after a failed Map: %d, %v; want 3", size, err)
			}
		})
	}
}
