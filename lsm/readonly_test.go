package lsm

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// dirBytes returns every file of dir and its contents.
func dirBytes(t *testing.T, fsys vfs.FS, dir string) map[string][]byte {
	t.Helper()
	names, err := fsys.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, n := range names {
		f, err := fsys.Open(dir + "/" + n)
		if err != nil {
			t.Fatal(err)
		}
		size, _ := f.Size()
		b := make([]byte, size)
		if _, err := f.ReadAt(b, 0); err != nil && size > 0 {
			t.Fatal(err)
		}
		f.Close()
		out[n] = b
	}
	return out
}

// TestReadOnly: a DB opened read-only serves every key — those in tables
// and those only in a WAL — refuses every write with ErrReadOnly, and
// leaves the directory's bytes exactly as they were.
func TestReadOnly(t *testing.T) {
	mem := vfs.NewMem()
	d := openMem(t, mem, &Options{MemtableSize: 4 << 10})
	want := model{}
	for i := range 600 {
		k, v := fmt.Sprintf("k%04d", i), fmt.Sprintf("v%d", i)
		if err := d.Put([]byte(k), []byte(v)); err != nil {
			t.Fatal(err)
		}
		want[k] = v
		if i == 400 {
			if err := d.Compact(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := d.Delete([]byte("k0007")); err != nil {
		t.Fatal(err)
	}
	delete(want, "k0007")
	if err := d.Close(); err != nil { // the last writes are in the WAL only
		t.Fatal(err)
	}
	before := dirBytes(t, mem, "/db")

	ro := openMem(t, mem, &Options{ReadOnly: true, MaxOpenFiles: 2})
	if got := dbContents(t, ro); !maps.Equal(got, want) {
		t.Fatalf("read-only DB:\n%s", diffModels(got, want))
	}
	for k, v := range want {
		mustGet(t, ro, k, v)
	}
	if _, err := ro.Explain([]byte("k0001")); err != nil {
		t.Fatal(err)
	}
	if _, err := ro.Tables(); err != nil {
		t.Fatal(err)
	}
	var b Batch
	b.Put([]byte("x"), []byte("y"))
	for name, err := range map[string]error{
		"Put": ro.Put([]byte("x"), []byte("y")), "Delete": ro.Delete([]byte("never")),
		"Write": ro.Write(&b), "Flush": ro.Flush(), "Compact": ro.Compact(),
	} {
		if !errors.Is(err, ErrReadOnly) {
			t.Errorf("%s on a read-only DB: %v, want ErrReadOnly", name, err)
		}
	}
	if _, err := Open("/db", &Options{FS: mem}); !errors.Is(err, ErrLocked) {
		t.Errorf("Open beside a read-only DB: %v, want ErrLocked", err)
	}
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	after := dirBytes(t, mem, "/db")
	if !maps.EqualFunc(before, after, bytes.Equal) {
		t.Fatalf("read-only Open changed the directory: %d files before, %d after", len(before), len(after))
	}
	if _, err := Open("/nothing", &Options{FS: mem, ReadOnly: true}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("read-only Open of an empty place: %v, want fs.ErrNotExist", err)
	}
	if names, _ := mem.List("/"); len(names) != 1 {
		t.Fatalf("read-only Open of a missing DB created %v", names)
	}
}
