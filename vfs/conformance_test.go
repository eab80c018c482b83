package vfs

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// impl is one FS under test with a fresh directory to work in.
type impl struct {
	name string
	fs   FS
	dir  string
}

// impls returns every implementation, each with an empty directory. The
// same conformance suite runs on all of them, so MemFS and FaultFS behave
// like the OS wherever a DB could tell the difference.
func impls(t *testing.T) []impl {
	mem := func() FS {
		m := NewMem()
		if err := m.MkdirAll("/db"); err != nil {
			t.Fatal(err)
		}
		return m
	}
	return []impl{
		{"os", Default, t.TempDir()},
		{"mem", mem(), "/db"},
		{"fault(mem)", NewFault(mem()), "/db"},
		{"fault(os)", NewFault(Default), t.TempDir()},
	}
}

// forEach runs fn as a subtest on every implementation.
func forEach(t *testing.T, fn func(t *testing.T, fsys FS, dir string)) {
	for _, im := range impls(t) {
		t.Run(im.name, func(t *testing.T) { fn(t, im.fs, im.dir) })
	}
}

func writeFile(t *testing.T, fsys FS, name string, data ...[]byte) {
	t.Helper()
	f, err := fsys.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range data {
		if n, err := f.Write(d); err != nil || n != len(d) {
			t.Fatalf("write %s: n=%d err=%v", name, n, err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, fsys FS, name string) []byte {
	t.Helper()
	b, err := ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustList(t *testing.T, fsys FS, dir string) []string {
	t.Helper()
	names, err := fsys.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func TestWriteRead(t *testing.T) {
	forEach(t, func(t *testing.T, fsys FS, dir string) {
		name := filepath.Join(dir, "a")
		writeFile(t, fsys, name, []byte("hello"), nil, []byte(" world"))
		if got := readFile(t, fsys, name); string(got) != "hello world" {
			t.Fatalf("read %q", got)
		}
		f, err := fsys.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if size, err := f.Size(); err != nil || size != 11 {
			t.Fatalf("size %d %v", size, err)
		}
		buf := make([]byte, 5)
		if n, err := f.ReadAt(buf, 6); n != 5 || err != nil || string(buf) != "world" {
			t.Fatalf("ReadAt(6) = %d %v %q", n, err, buf)
		}
		if n, err := f.ReadAt(buf, 8); n != 3 || err != io.EOF || string(buf[:n]) != "rld" {
			t.Fatalf("ReadAt past the end = %d %v", n, err)
		}
		if n, err := f.ReadAt(buf, 11); n != 0 || err != io.EOF {
			t.Fatalf("ReadAt at the end = %d %v", n, err)
		}
		if _, err := f.ReadAt(buf, -1); err == nil {
			t.Fatal("ReadAt(-1) succeeded")
		}
		if _, err := io.ReadAll(f); err != nil {
			t.Fatal(err)
		}
		if n, err := f.Read(buf); n != 0 || err != io.EOF {
			t.Fatalf("Read at EOF = %d %v", n, err)
		}
	})
}

func TestLargeAndEmptyFiles(t *testing.T) {
	forEach(t, func(t *testing.T, fsys FS, dir string) {
		big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
		writeFile(t, fsys, filepath.Join(dir, "big"), big)
		if got := readFile(t, fsys, filepath.Join(dir, "big")); !bytes.Equal(got, big) {
			t.Fatalf("1 MiB file read back %d bytes, differing", len(got))
		}
		writeFile(t, fsys, filepath.Join(dir, "empty"))
		if got := readFile(t, fsys, filepath.Join(dir, "empty")); len(got) != 0 {
			t.Fatalf("empty file read %q", got)
		}
	})
}

// TestPageCache: a reader sees a writer's bytes before any Sync, and its
// size grows with them; Create truncates.
func TestPageCache(t *testing.T) {
	forEach(t, func(t *testing.T, fsys FS, dir string) {
		name := filepath.Join(dir, "log")
		w, err := fsys.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		r, err := fsys.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		for i := 1; i <= 3; i++ {
			if _, err := w.Write([]byte("abc")); err != nil {
				t.Fatal(err)
			}
			if size, err := r.Size(); err != nil || size != int64(3*i) {
				t.Fatalf("reader size %d %v after %d writes", size, err, i)
			}
		}
		buf := make([]byte, 3)
		if _, err := r.ReadAt(buf, 6); err != nil || string(buf) != "abc" {
			t.Fatalf("ReadAt %q %v", buf, err)
		}
		if err := w.Sync(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		writeFile(t, fsys, name) // truncate
		if size, err := r.Size(); err != nil || size != 0 {
			t.Fatalf("size after Create of an existing file = %d %v", size, err)
		}
	})
}

func TestMissing(t *testing.T) {
	forEach(t, func(t *testing.T, fsys FS, dir string) {
		missing := filepath.Join(dir, "missing")
		inMissing := filepath.Join(missing, "x")
		_, errOpen := fsys.Open(missing)
		_, errCreate := fsys.Create(inMissing)
		_, errList := fsys.List(missing)
		_, errLock := fsys.Lock(inMissing)
		_, errReuse := fsys.(Reuser).Reuse(missing, filepath.Join(dir, "b"))
		for what, err := range map[string]error{
			"open":          errOpen,
			"remove":        fsys.Remove(missing),
			"rename":        fsys.Rename(missing, filepath.Join(dir, "b")),
			"create in dir": errCreate,
			"list":          errList,
			"syncdir":       fsys.SyncDir(missing),
			"lock in dir":   errLock,
			"reuse":         errReuse,
		} {
			if !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("%s of a missing name: %v, want fs.ErrNotExist", what, err)
			}
		}
	})
}

// TestModesAndClosed: Open is read-only, Create write-only, and a closed
// file refuses everything with fs.ErrClosed.
func TestModesAndClosed(t *testing.T) {
	forEach(t, func(t *testing.T, fsys FS, dir string) {
		name := filepath.Join(dir, "f")
		w, err := fsys.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Read(make([]byte, 1)); err == nil {
			t.Error("Read of a file from Create succeeded")
		}
		w.Close()
		r, err := fsys.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Write([]byte("x")); err == nil {
			t.Error("Write to a file from Open succeeded")
		}
		r.Close()
		_, errRead := r.Read(make([]byte, 1))
		_, errReadAt := r.ReadAt(make([]byte, 1), 0)
		_, errWrite := w.Write([]byte("x"))
		_, errSize := r.Size()
		// A write-only file refuses reads; closed, it says closed, as every
		// File does (a black-box attack found the OS's saying EBADF).
		_, errCreatedRead := w.Read(make([]byte, 1))
		_, errCreatedReadAt := w.ReadAt(make([]byte, 1), 0)
		errs := map[string]error{
			"read": errRead, "readat": errReadAt, "write": errWrite,
			"size": errSize, "sync": w.Sync(), "close": r.Close(),
			"read of a created file": errCreatedRead, "readat of a created file": errCreatedReadAt,
		}
		if p, ok := w.(Preallocator); ok {
			errs["preallocate"] = p.Preallocate(1 << 20)
		}
		for what, err := range errs {
			if !errors.Is(err, fs.ErrClosed) {
				t.Errorf("%s on a closed file: %v, want fs.ErrClosed", what, err)
			}
		}
	})
}

// TestRenameRemove: rename replaces its target, removal unlinks, and files
// already open keep reading the inode they opened.
func TestRenameRemove(t *testing.T) {
	forEach(t, func(t *testing.T, fsys FS, dir string) {
		a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
		writeFile(t, fsys, a, []byte("new"))
		writeFile(t, fsys, b, []byte("old"))
		old, err := fsys.Open(b)
		if err != nil {
			t.Fatal(err)
		}
		defer old.Close()
		if err := fsys.Rename(a, b); err != nil {
			t.Fatal(err)
		}
		if got := mustList(t, fsys, dir); !slices.Equal(got, []string{"b"}) {
			t.Fatalf("list after rename: %q", got)
		}
		if got := readFile(t, fsys, b); string(got) != "new" {
			t.Fatalf("renamed file reads %q", got)
		}
		if got, _ := io.ReadAll(old); string(got) != "old" {
			t.Fatalf("open file of the replaced name reads %q", got)
		}
		cur, err := fsys.Open(b)
		if err != nil {
			t.Fatal(err)
		}
		defer cur.Close()
		if err := fsys.Remove(b); err != nil {
			t.Fatal(err)
		}
		if got, _ := io.ReadAll(cur); string(got) != "new" {
			t.Fatalf("open file of a removed name reads %q", got)
		}
		if got := mustList(t, fsys, dir); len(got) != 0 {
			t.Fatalf("list after remove: %q", got)
		}
		if err := fsys.Rename(b, a); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("rename of a removed name: %v", err)
		}
	})
}

func TestListAndDirs(t *testing.T) {
	forEach(t, func(t *testing.T, fsys FS, dir string) {
		for _, n := range []string{"c", "a", "b"} {
			writeFile(t, fsys, filepath.Join(dir, n))
		}
		sub := filepath.Join(dir, "sub", "deeper")
		if err := fsys.MkdirAll(sub); err != nil {
			t.Fatal(err)
		}
		if err := fsys.MkdirAll(sub); err != nil {
			t.Fatalf("MkdirAll of an existing dir: %v", err)
		}
		if err := fsys.MkdirAll(filepath.Join(dir, "a", "x")); err == nil {
			t.Fatal("MkdirAll below a file succeeded")
		}
		if got := mustList(t, fsys, dir); !slices.Equal(got, []string{"a", "b", "c", "sub"}) {
			t.Fatalf("list %q", got)
		}
		// ReadDir, as the FS lists and, through a wrapper that hides how,
		// by a List of each entry.
		want := []Entry{{"a", false}, {"b", false}, {"c", false}, {"sub", true}}
		for _, lister := range []FS{fsys, struct{ FS }{fsys}} {
			if got, err := ReadDir(lister, dir); err != nil || !slices.Equal(got, want) {
				t.Fatalf("ReadDir(%T) = %v, %v", lister, got, err)
			}
		}
		writeFile(t, fsys, filepath.Join(sub, "f"))
		if err := fsys.Remove(sub); err == nil {
			t.Fatal("Remove of a non-empty directory succeeded")
		}
		if _, err := fsys.Create(sub); err == nil {
			t.Fatal("Create over a directory succeeded")
		}
		if err := fsys.Remove(filepath.Join(sub, "f")); err != nil {
			t.Fatal(err)
		}
		if err := fsys.Remove(sub); err != nil {
			t.Fatalf("Remove of an empty directory: %v", err)
		}
		for _, d := range []string{dir, filepath.Join(dir, "sub")} {
			if err := fsys.SyncDir(d); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func TestLock(t *testing.T) {
	forEach(t, func(t *testing.T, fsys FS, dir string) {
		name := filepath.Join(dir, "LOCK")
		l, err := fsys.Lock(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := mustList(t, fsys, dir); !slices.Equal(got, []string{"LOCK"}) {
			t.Fatalf("lock did not create its file: %q", got)
		}
		if _, err := fsys.Lock(name); !errors.Is(err, ErrLocked) {
			t.Fatalf("second Lock: %v, want ErrLocked", err)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l2, err := fsys.Lock(name)
		if err != nil {
			t.Fatalf("Lock after release: %v", err)
		}
		if err := l2.Close(); err != nil {
			t.Fatal(err)
		}
	})
}

// TestConcurrentReaders runs readers against an appending writer; under
// -race it checks the implementations' locking.
func TestConcurrentReaders(t *testing.T) {
	forEach(t, func(t *testing.T, fsys FS, dir string) {
		name := filepath.Join(dir, "f")
		w, err := fsys.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		chunk := bytes.Repeat([]byte{7}, 512)
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
		r, err := fsys.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var wg sync.WaitGroup
		for g := 0; g < 4; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := make([]byte, 512)
				for i := 0; i < 200; i++ {
					if n, err := r.ReadAt(buf, 0); n != 512 || err != nil || buf[511] != 7 {
						t.Errorf("ReadAt %d %v", n, err)
						return
					}
					if _, err := fsys.List(dir); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		for i := 0; i < 200; i++ {
			if _, err := w.Write(chunk); err != nil {
				t.Fatal(err)
			}
		}
		wg.Wait()
	})
}

// TestLockKeepsContents: taking the lock keeps what the lock file holds (a
// DB may write its owner's pid there).
func TestLockKeepsContents(t *testing.T) {
	forEach(t, func(t *testing.T, fsys FS, dir string) {
		name := filepath.Join(dir, "LOCK")
		writeFile(t, fsys, name, []byte("pid 42"))
		l, err := fsys.Lock(name)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		if got := readFile(t, fsys, name); string(got) != "pid 42" {
			t.Errorf("lock file holds %q after Lock", got)
		}
	})
}
