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
			f, _ := createABC(t)
			defer f.Close()
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

// allocated returns the bytes of storage the file system holds for name,
// past its length included.
func allocated(t *testing.T, name string) int64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(name, &st); err != nil {
		t.Fatal(err)
	}
	return st.Blocks * 512
}

// createABC creates a file holding "abc" in a new directory.
func createABC(t *testing.T) (File, string) {
	t.Helper()
	name := filepath.Join(t.TempDir(), "log")
	f, err := Default.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("abc")); err != nil {
		f.Close()
		t.Fatal(err)
	}
	return f, name
}

// TestPreallocate: Preallocate allocates the storage of a range without
// changing the file's length or bytes; windows mapped over it then
// allocate nothing more, and Truncate releases what lies past the cut.
func TestPreallocate(t *testing.T) {
	const reserve, window = 4 << 20, 256 << 10
	f, name := createABC(t)
	defer f.Close()
	if err := f.(Preallocator).Preallocate(reserve); err != nil {
		t.Skipf("no preallocation on this file system: %v", err)
	}
	if size, err := f.Size(); err != nil || size != 3 {
		t.Fatalf("size after Preallocate: %d, %v; want 3", size, err)
	}
	got := allocated(t, name)
	if got < reserve {
		t.Fatalf("Preallocate(%d) left %d bytes allocated", reserve, got)
	}
	for off := int64(0); off < reserve; off += window {
		w, err := f.(Mapper).Map(off, window)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Unmap(); err != nil {
			t.Fatal(err)
		}
	}
	if after := allocated(t, name); after != got {
		t.Fatalf("windows over preallocated space: %d bytes allocated, %d before", after, got)
	}
	if size, err := f.Size(); err != nil || size != reserve {
		t.Fatalf("size after mapping: %d, %v; want %d", size, err, reserve)
	}
	if err := f.(Mapper).Truncate(window); err != nil {
		t.Fatal(err)
	}
	if after := allocated(t, name); after > window {
		t.Fatalf("Truncate(%d) left %d bytes allocated", window, after)
	}
	b := make([]byte, 3)
	r, err := Default.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.ReadAt(b, 0); err != nil || string(b) != "abc" {
		t.Fatalf("bytes after Preallocate: %q, %v", b, err)
	}
}

// TestPreallocateWithoutFallocate: where fallocate fails, so does
// Preallocate, with that error, and the file is as it was.
func TestPreallocateWithoutFallocate(t *testing.T) {
	saved := fallocate
	fallocate = func(int, uint32, int64, int64) error { return syscall.EOPNOTSUPP }
	defer func() { fallocate = saved }()
	f, err := Default.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.(Preallocator).Preallocate(1 << 20); !errors.Is(err, syscall.EOPNOTSUPP) {
		t.Fatalf("Preallocate: %v; want EOPNOTSUPP", err)
	}
	if size, err := f.Size(); err != nil || size != 0 {
		t.Fatalf("size: %d, %v; want 0", size, err)
	}
}

// TestPutAfterCloseStaysInItsFile: a window outlives its file's Close, as
// a mapping does. A long Put wrote with pwrite(2) on the descriptor
// number it had saved, which the next file opened had taken: the bytes
// landed in that file (a black-box attack). They must reach the window's
// own file, and no other.
func TestPutAfterCloseStaysInItsFile(t *testing.T) {
	dir := t.TempDir()
	f, err := Default.Create(filepath.Join(dir, "a"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := f.(Mapper).Map(0, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	other, err := Default.Create(filepath.Join(dir, "b")) // takes a's descriptor number
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	long := bytes.Repeat([]byte{'L'}, pwriteMin)
	if err := w.Put(0, long); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(len(long), []byte("tail")); err != nil {
		t.Fatal(err)
	}
	if err := w.Unmap(); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, Default, filepath.Join(dir, "b")); len(got) != 0 {
		t.Fatalf("another file holds %d bytes of the closed file's window", len(got))
	}
	want := append(long, "tail"...)
	if got := readFile(t, Default, filepath.Join(dir, "a")); !bytes.Equal(got[:len(want)], want) {
		t.Fatalf("the window's file holds %q..., want the Put and the Write", got[:16])
	}
}
