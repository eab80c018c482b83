package vfs

import (
	"bytes"
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

// TestPutWritesCoherently: a Put of a page or more, and a Write of any
// length, go through pwrite(2), and the mapping sees those bytes at once
// (one page cache), beside the bytes a short Put stored, and the file
// holds them all after Truncate.
func TestPutWritesCoherently(t *testing.T) {
	name := filepath.Join(t.TempDir(), "log")
	f, err := Default.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := f.(Mapper).Map(0, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	short := bytes.Repeat([]byte{'s'}, 100)
	long := bytes.Repeat([]byte{'L'}, 3*pwriteMin+5)
	if err := w.Put(0, short); err != nil {
		t.Fatal(err)
	}
	if err := w.Put(len(short), long); err != nil {
		t.Fatal(err)
	}
	written := bytes.Repeat([]byte{'w'}, 10)
	if err := w.Write(len(short)+len(long), written); err != nil {
		t.Fatal(err)
	}
	want := append(append(append([]byte{}, short...), long...), written...)
	if got := w.Bytes()[:len(want)]; !bytes.Equal(got, want) {
		t.Fatalf("the mapping shows %q...%q after the Puts and the Write, want %q...%q", got[:120], got[len(got)-20:], want[:120], want[len(want)-20:])
	}
	w.Stored(len(want))
	if err := w.Unmap(); err != nil {
		t.Fatal(err)
	}
	if err := f.(Mapper).Truncate(int64(len(want))); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, Default, name); !bytes.Equal(got, want) {
		t.Fatalf("the file holds %d bytes, want the %d Put", len(got), len(want))
	}
}
