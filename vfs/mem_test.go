package vfs

import (
	"errors"
	"io/fs"
	"slices"
	"testing"
)

// TestMemDirDurability: directories are names in their parents (invariant
// 2), which the one-directory model test does not cover.
func TestMemDirDurability(t *testing.T) {
	m := NewMem()
	if err := m.MkdirAll("/db/wal"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, m, "/db/wal/1.log", []byte("x"))
	f, _ := m.Open("/db/wal/1.log")
	f.Sync()
	f.Close()
	if err := m.SyncDir("/db/wal"); err != nil {
		t.Fatal(err)
	}
	// /db is not durable in / yet: the whole tree vanishes.
	if got := mustList(t, m.CrashClone(), "/"); len(got) != 0 {
		t.Fatalf("unsynced directory survived a crash: %q", got)
	}
	m.SyncDir("/")
	if _, err := m.CrashClone().List("/db"); err != nil {
		t.Fatalf("synced /db: %v", err)
	}
	if got := mustList(t, m.CrashClone(), "/db"); len(got) != 0 {
		t.Fatalf("/db/wal survived without syncing /db: %q", got)
	}
	m.SyncDir("/db")
	if got := readFile(t, m.CrashClone(), "/db/wal/1.log"); string(got) != "x" {
		t.Fatalf("fully synced file reads %q", got)
	}
}

// TestMemCrossDirRename: a rename is durable in each directory only when
// that directory is synced, so a crash between the two SyncDirs can show
// the file under both names (POSIX allows it, so a DB must not assume
// only one name survives).
func TestMemCrossDirRename(t *testing.T) {
	m := NewMem()
	m.MkdirAll("/a")
	m.MkdirAll("/b")
	w, _ := m.Create("/a/f")
	w.Write([]byte("data"))
	w.Sync()
	w.Close()
	m.SyncDir("/a")
	m.SyncDir("/b")
	m.SyncDir("/")
	if err := m.Rename("/a/f", "/b/f"); err != nil {
		t.Fatal(err)
	}
	m.SyncDir("/b")
	c := m.CrashClone()
	if string(readFile(t, c, "/a/f")) != "data" || string(readFile(t, c, "/b/f")) != "data" {
		t.Fatal("half-synced cross-directory rename: want the file under both names")
	}
	// In the clone they are one inode, as they were.
	w, _ = c.Create("/a/f")
	w.Write([]byte("new"))
	w.Close()
	if got := readFile(t, c, "/b/f"); string(got) != "new" {
		t.Fatalf("two durable names of one inode became two files: %q", got)
	}
}

func TestMemCrashDropsLocksAndKeepsSource(t *testing.T) {
	m := NewMem()
	l, err := m.Lock("/LOCK")
	if err != nil {
		t.Fatal(err)
	}
	m.SyncDir("/")
	c := m.CrashClone()
	l2, err := c.Lock("/LOCK")
	if err != nil {
		t.Fatalf("lock survived a crash: %v", err)
	}
	l2.Close()
	if _, err := m.Lock("/LOCK"); !errors.Is(err, ErrLocked) {
		t.Fatalf("the crashed-from fs lost its lock: %v", err)
	}
	l.Close()
	if err := l.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("second unlock: %v", err)
	}
}

func TestMemRenameRules(t *testing.T) {
	m := NewMem()
	m.MkdirAll("/d/sub")
	writeFile(t, m, "/f")
	writeFile(t, m, "/d/sub/g")
	for _, c := range []struct{ from, to string }{
		{"/f", "/d"},         // file over a directory
		{"/d/sub", "/f"},     // directory over a file
		{"/d", "/d/sub/x"},   // directory below itself
		{"/d/sub", "/empty"}, // fine: a directory to a new name
	} {
		err := m.Rename(c.from, c.to)
		if (err == nil) != (c.to == "/empty") {
			t.Errorf("rename %s -> %s: %v", c.from, c.to, err)
		}
	}
	if got := mustList(t, m, "/empty"); !slices.Equal(got, []string{"g"}) {
		t.Fatalf("renamed directory holds %q", got)
	}
	if err := m.Rename("/f", "/f"); err != nil {
		t.Fatalf("rename onto itself: %v", err)
	}
	for _, name := range []string{"", "/", "."} {
		if _, err := m.Create(name); err == nil {
			t.Errorf("Create(%q) succeeded", name)
		}
	}
	if _, err := m.Open("/d"); err == nil {
		t.Error("Open of a directory succeeded")
	}
	if got := readFile(t, m, "d/../f"); len(got) != 0 {
		t.Error("relative and absolute names differ")
	}
}
