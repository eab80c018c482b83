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
	var b, bad Batch
	b.Put([]byte("x"), []byte("y"))
	bad.DeleteRange([]byte("b"), []byte("a"))
	// A write that is also malformed gets ErrReadOnly too, the error
	// every write gets, not what is wrong with its arguments.
	for name, err := range map[string]error{
		"Put": ro.Put([]byte("x"), []byte("y")), "Delete": ro.Delete([]byte("never")),
		"Write": ro.Write(&b), "Flush": ro.Flush(), "Compact": ro.Compact(),
		"Put(oversized key)": ro.Put(make([]byte, MaxKeySize+1), nil),
		"DeleteRange(b, a)":  ro.DeleteRange([]byte("b"), []byte("a")),
		"Write(bad batch)":   ro.Write(&bad),
		"Write(two options)": ro.Write(&b, Sync, NoSync),
		"CompactRange(b, a)": ro.CompactRange([]byte("b"), []byte("a")),
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

// TestReadOnlyWithoutLock: a directory with no LOCK file (a copy that
// left it out, a read-only mount of one) opens read-only, though such an
// open can take no lock, since it creates nothing; and what it refuses,
// it refuses for what the directory holds: a damaged DB with
// ErrCorruption, another program's files with ErrNotDB, nothing with
// fs.ErrNotExist. None of them gains a LOCK or loses a byte.
func TestReadOnlyWithoutLock(t *testing.T) {
	mem := vfs.NewMem()
	want := buildDamageDB(t, mem, nil, "nolock")
	if err := mem.Remove("/db/LOCK"); err != nil {
		t.Fatal(err)
	}
	before := dirBytes(t, mem, "/db")
	ro := openMem(t, mem, &Options{ReadOnly: true})
	if got := dbContents(t, ro); !maps.Equal(got, want) {
		t.Fatalf("read-only DB without LOCK:\n%s", diffModels(got, want))
	}
	if err := ro.Close(); err != nil {
		t.Fatal(err)
	}
	if after := dirBytes(t, mem, "/db"); !maps.EqualFunc(before, after, bytes.Equal) {
		t.Fatal("a read-only Open of a DB without LOCK changed the directory")
	}

	if err := mem.Remove("/db/CURRENT"); err != nil {
		t.Fatal(err)
	}
	if _, err := Open("/db", &Options{FS: mem, ReadOnly: true}); !errors.Is(err, ErrCorruption) {
		t.Errorf("read-only Open of a DB without LOCK or CURRENT: %v, want ErrCorruption", err)
	}

	foreign := map[string][]byte{"CURRENT": []byte("MANIFEST-000002\n"), "000001.log": []byte("not monban's"), "000002.sst": []byte("nor this")}
	if err := mem.MkdirAll("/other"); err != nil {
		t.Fatal(err)
	}
	for name, data := range foreign {
		rewrite(t, mem, "/other/"+name, data)
	}
	if _, err := Open("/other", &Options{FS: mem, ReadOnly: true}); !errors.Is(err, ErrNotDB) {
		t.Errorf("read-only Open of another program's files: %v, want ErrNotDB", err)
	}
	if err := mem.MkdirAll("/empty"); err != nil {
		t.Fatal(err)
	}
	if _, err := Open("/empty", &Options{FS: mem, ReadOnly: true}); !errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrCorruption) {
		t.Errorf("read-only Open of an empty directory: %v, want fs.ErrNotExist", err)
	}
	for dir, n := range map[string]int{"/db": len(before) - 1, "/other": len(foreign), "/empty": 0} {
		if names, _ := mem.List(dir); len(names) != n {
			t.Errorf("%s holds %v after refused read-only Opens, want %d files", dir, names, n)
		}
	}
}
