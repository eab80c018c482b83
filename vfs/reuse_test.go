package vfs

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// pattern returns n bytes that differ from their neighbours and from
// zero, so that a test sees which byte of which life it reads.
func pattern(n int, seed byte) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i%251) + seed | 1
	}
	return p
}

func mustReuse(t *testing.T, fsys FS, oldname, newname string) File {
	t.Helper()
	r, ok := fsys.(Reuser)
	if !ok {
		t.Fatalf("%T is not a Reuser", fsys)
	}
	f, err := r.Reuse(oldname, newname)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func mustWrite(t *testing.T, f File, p []byte) {
	t.Helper()
	if n, err := f.Write(p); err != nil || n != len(p) {
		t.Fatalf("write: n=%d err=%v", n, err)
	}
}

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// TestReuseOverwrites: a reused file is renamed, write-only, and written
// from offset 0 over its old bytes, which show past the new ones until a
// write runs past the old end; a file open on the old name reads the same
// inode.
func TestReuseOverwrites(t *testing.T) {
	forEach(t, func(t *testing.T, fsys FS, dir string) {
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		old := pattern(10000, 0)
		writeFile(t, fsys, a, old)
		r, err := fsys.Open(a)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		f := mustReuse(t, fsys, a, b)
		defer f.Close()
		if got := mustList(t, fsys, dir); !slices.Equal(got, []string{"b"}) {
			t.Fatalf("list after Reuse: %q", got)
		}
		if size, err := f.Size(); err != nil || size != int64(len(old)) {
			t.Fatalf("size of the reused file %d %v, want the old %d", size, err, len(old))
		}
		if got := readFile(t, fsys, b); !bytes.Equal(got, old) {
			t.Fatalf("the reused file reads %d bytes before any write, not the old %d", len(got), len(old))
		}
		if _, err := f.Read(make([]byte, 1)); err == nil {
			t.Error("Read of a reused file succeeded")
		}
		if _, err := f.ReadAt(make([]byte, 1), 0); err == nil {
			t.Error("ReadAt of a reused file succeeded")
		}
		mustWrite(t, f, []byte("new "))
		mustWrite(t, f, []byte("bytes"))
		want := cat([]byte("new bytes"), old[9:])
		if got := readFile(t, fsys, b); !bytes.Equal(got, want) {
			t.Fatalf("after two writes: %q…, want %q…", got[:16], want[:16])
		}
		buf := make([]byte, 16)
		if _, err := r.ReadAt(buf, 0); err != nil || !bytes.Equal(buf, want[:16]) {
			t.Fatalf("a file open on the old name reads %q %v, want the inode's %q", buf, err, want[:16])
		}
		long := pattern(20000, 7)
		mustWrite(t, f, long)
		want = cat([]byte("new bytes"), long)
		if got := readFile(t, fsys, b); !bytes.Equal(got, want) {
			t.Fatalf("after a write past the old end: %d bytes, want %d", len(got), len(want))
		}
		if size, err := f.Size(); err != nil || size != int64(len(want)) {
			t.Fatalf("size %d %v, want %d", size, err, len(want))
		}
	})
}

// TestReuseReplaces: Reuse replaces newname as Rename does (a file open on
// it keeps the replaced inode), and a failed Reuse changes nothing.
func TestReuseReplaces(t *testing.T) {
	forEach(t, func(t *testing.T, fsys FS, dir string) {
		a, b, sub := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "sub")
		writeFile(t, fsys, a, []byte("aaaa"))
		writeFile(t, fsys, b, []byte("bb"))
		if err := fsys.MkdirAll(sub); err != nil {
			t.Fatal(err)
		}
		writeFile(t, fsys, filepath.Join(sub, "x"))
		for _, c := range [][2]string{{a, sub}, {sub, b}} {
			if _, err := fsys.(Reuser).Reuse(c[0], c[1]); err == nil {
				t.Fatalf("Reuse(%s, %s) succeeded", c[0], c[1])
			}
		}
		if got := mustList(t, fsys, dir); !slices.Equal(got, []string{"a", "b", "sub"}) {
			t.Fatalf("list after failed Reuses: %q", got)
		}
		if got := readFile(t, fsys, a); string(got) != "aaaa" {
			t.Fatalf("a failed Reuse changed a: %q", got)
		}
		r, err := fsys.Open(b)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		f := mustReuse(t, fsys, a, b)
		mustWrite(t, f, []byte("A"))
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if got := mustList(t, fsys, dir); !slices.Equal(got, []string{"b", "sub"}) {
			t.Fatalf("list after Reuse over b: %q", got)
		}
		if got := readFile(t, fsys, b); string(got) != "Aaaa" {
			t.Fatalf("b reads %q, want Aaaa", got)
		}
		if got, _ := io.ReadAll(r); string(got) != "bb" {
			t.Fatalf("a file open on the replaced b reads %q", got)
		}
	})
}

// TestReuseMapped: a reused file is a Mapper where Create's files are. A
// window over the old bytes shows them, Stored puts new ones over them,
// the old bytes between two windows stay, a window past the old end adds
// zeros, and Truncate cuts old bytes and new, extending with zeros.
func TestReuseMapped(t *testing.T) {
	for _, im := range mappers(t) {
		t.Run(im.name, func(t *testing.T) {
			ps := max(memPageSize, os.Getpagesize())
			a, b := filepath.Join(im.dir, "a"), filepath.Join(im.dir, "b")
			old := pattern(3*ps+100, 0)
			writeFile(t, im.fs, a, old)
			f := mustReuse(t, im.fs, a, b)
			defer f.Close()
			m, ok := f.(Mapper)
			if !ok {
				t.Fatal("a reused file is not a Mapper where Create's is")
			}
			w, err := m.Map(0, 2*ps)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(w.Bytes(), old[:2*ps]) {
				t.Fatal("a window over the old bytes does not show them")
			}
			if size, _ := f.Size(); size != int64(len(old)) {
				t.Fatalf("size after a Map inside the old file: %d, want %d", size, len(old))
			}
			copy(w.Bytes(), "hello")
			w.Stored(5)
			if got := readFile(t, im.fs, b); !bytes.Equal(got, cat([]byte("hello"), old[5:])) {
				t.Fatalf("after a store: %q…", got[:8])
			}
			if err := w.Unmap(); err != nil {
				t.Fatal(err)
			}
			w, err = m.Map(int64(ps), 4*ps) // [ps, 5ps): past the old end
			if err != nil {
				t.Fatal(err)
			}
			if want := cat(old[ps:], make([]byte, 5*ps-len(old))); !bytes.Equal(w.Bytes(), want) {
				t.Fatal("a window across the old end does not show the old bytes, then zeros")
			}
			copy(w.Bytes()[ps:], "world")
			w.Stored(ps + 5)
			if err := w.Unmap(); err != nil {
				t.Fatal(err)
			}
			want := cat([]byte("hello"), old[5:2*ps], []byte("world"), old[2*ps+5:], make([]byte, 5*ps-len(old)))
			if got := readFile(t, im.fs, b); !bytes.Equal(got, want) {
				t.Fatalf("after a second window: %d bytes, want %d (the old bytes between the stores kept)", len(got), len(want))
			}
			if err := m.Truncate(int64(2*ps + 5)); err != nil {
				t.Fatal(err)
			}
			if err := m.Truncate(int64(3 * ps)); err != nil {
				t.Fatal(err)
			}
			want = cat(want[:2*ps+5], make([]byte, ps-5))
			if got := readFile(t, im.fs, b); !bytes.Equal(got, want) {
				t.Fatalf("after Truncate down and up: %d bytes, want %d, zeros past the cut", len(got), len(want))
			}
		})
	}
}
