package lsm

import (
	"bytes"
	"errors"
	"fmt"
	iofs "io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestDirectoriesUnderMonbansNamesAreLeftAlone: a directory named like a
// table, a WAL or a manifest is not monban's. Open read it as a stray
// table or a WAL to replay, and failed with the file system's "is a
// directory", and so did Repair: the DB would not open until someone
// removed it. Open and Repair must leave it where it is, empty or not
// (an empty one below the log number was removed as an obsolete WAL),
// and the DB must hold what it held.
func TestDirectoriesUnderMonbansNamesAreLeftAlone(t *testing.T) {
	for _, name := range []string{"999998.sst", "999998.log", "000001.sst", "000001.log", "MANIFEST-999998"} {
		for _, empty := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/empty=%v", name, empty), func(t *testing.T) {
				for _, fsys := range []struct {
					fs  vfs.FS
					dir string
				}{{vfs.NewMem(), "/db"}, {vfs.Default, filepath.Join(t.TempDir(), "db")}} {
					dirNamedLikeAFile(t, fsys.fs, fsys.dir, name, empty)
				}
			})
		}
	}
}

func dirNamedLikeAFile(t *testing.T, fs vfs.FS, dir, name string, empty bool) {
	t.Helper()
	want := model{}
	session := func(prefix string) {
		t.Helper()
		d, err := Open(dir, &Options{FS: fs})
		if err != nil {
			t.Fatalf("%T: Open: %v", fs, err)
		}
		defer d.Close()
		if got := dbContents(t, d); !maps.Equal(got, want) {
			t.Fatalf("%T: Open:\n%s", fs, diffModels(got, want))
		}
		for i := range 20 {
			k := fmt.Sprintf("%s%02d", prefix, i)
			if err := d.Put([]byte(k), []byte(k), Sync); err != nil {
				t.Fatal(err)
			}
			want[k] = k
		}
	}
	session("a")
	sub := filepath.Join(dir, name)
	if err := fs.MkdirAll(sub); err != nil {
		t.Fatal(err)
	}
	if !empty {
		f, err := fs.Create(filepath.Join(sub, "theirs"))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	stillThere := func(after string) {
		t.Helper()
		inside, err := fs.List(sub)
		if err != nil || len(inside) == 0 == !empty {
			t.Fatalf("%T: after %s, %s holds %q, %v", fs, after, name, inside, err)
		}
	}
	session("b")
	stillThere("Open")
	rep, err := Repair(dir, &Options{FS: fs})
	if err != nil {
		t.Fatalf("%T: Repair: %v\n%v", fs, err, rep)
	}
	stillThere("Repair")
	if slices.ContainsFunc(rep.SetAside, func(f RepairedFile) bool { return f.Name == name }) {
		t.Errorf("%T: Repair set %s aside", fs, name)
	}
	session("c")
	stillThere("Open after Repair")
}

// TestADirectoryWhereCURRENTGoes: a directory at CURRENT or CURRENT.tmp
// stops the DB from reading the one or writing the other. Open failed
// with the file system's "is a directory" (and Repair too, for CURRENT).
// Open must refuse with ErrCorruption naming it, changing nothing, and
// Repair set it aside and keep every write.
func TestADirectoryWhereCURRENTGoes(t *testing.T) {
	for _, name := range []string{"CURRENT", "CURRENT.tmp"} {
		t.Run(name, func(t *testing.T) {
			fs := vfs.NewMem()
			want := twentySyncedKeys(t, fs)
			if name == "CURRENT" {
				if err := fs.Remove("/db/CURRENT"); err != nil {
					t.Fatal(err)
				}
			}
			if err := fs.MkdirAll("/db/" + name); err != nil {
				t.Fatal(err)
			}
			before := dirFiles(t, fs, "/db")
			_, err := Open("/db", &Options{FS: fs})
			refused(t, err, true, name)
			unchanged(t, fs, before)
			rep := repairedTo(t, fs, want)
			if !slices.ContainsFunc(rep.SetAside, func(f RepairedFile) bool { return f.Name == name && f.Fate == FateNotMonban }) {
				t.Errorf("Repair did not set the directory %s aside as not monban's:\n%v", name, rep)
			}
		})
	}
}

// TestRepairWithAFileNamedLost: a file where Repair keeps what it sets
// aside (lost/) is not monban's, and Repair cannot work around it. It
// failed with the file system's "not a directory"; it must fail with an
// error wrapping fs.ErrExist that names it, and change nothing.
func TestRepairWithAFileNamedLost(t *testing.T) {
	fs := vfs.NewMem()
	buildDamageDB(t, fs, nil, "lost")
	rewrite(t, fs, "/db/lost", []byte("someone's notes"))
	before := dirFiles(t, fs, "/db")
	_, err := Repair("/db", damageOpts(fs))
	if !errors.Is(err, iofs.ErrExist) || !strings.Contains(err.Error(), "/db/lost") {
		t.Fatalf("Repair: %v; want an error wrapping fs.ErrExist naming /db/lost", err)
	}
	unchanged(t, fs, before)
}

// twentySyncedKeys writes a DB at /db of 20 keys, each put with Sync, and
// closes it.
func twentySyncedKeys(t *testing.T, fs vfs.FS) model {
	t.Helper()
	d, err := Open("/db", &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	want := model{}
	for i := range 20 {
		k := fmt.Sprintf("k%02d", i)
		if err := d.Put([]byte(k), []byte(k), Sync); err != nil {
			t.Fatal(err)
		}
		want[k] = k
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return want
}

// TestAForeignFileWhereCURRENTtmpGoes: a CURRENT.tmp a crashed rollover
// left (a manifest name and newline, a prefix of one, zeros after it)
// does not stop Open; one holding anything else is another program's
// file, which Open removed at its first rollover and a rollover writes
// over. Open must refuse it with ErrCorruption, changing nothing, and
// Repair set it aside and keep every write.
func TestAForeignFileWhereCURRENTtmpGoes(t *testing.T) {
	for _, tc := range []struct {
		data string
		own  bool
	}{
		{"MANIFEST-000007\n", true}, {"MANIFEST-00", true}, {"MANI", true}, {"", true},
		{"MANIFEST-000007\n\x00\x00\x00", true},
		{"MANIFEST-000007\nmore", false}, {"MANIFEST-x7\n", false}, {"MANIFEST-\n", false},
		{"notes for later\n", false}, {strings.Repeat("MANIFEST-0", 30), false},
	} {
		t.Run(fmt.Sprintf("%q", tc.data), func(t *testing.T) {
			fs := vfs.NewMem()
			want := twentySyncedKeys(t, fs)
			rewrite(t, fs, "/db/CURRENT.tmp", []byte(tc.data))
			before := dirFiles(t, fs, "/db")
			d, err := Open("/db", &Options{FS: fs})
			if tc.own {
				if err != nil {
					t.Fatalf("Open beside a crashed rollover's CURRENT.tmp: %v", err)
				}
				if got := dbContents(t, d); !maps.Equal(got, want) {
					t.Fatalf("after Open:\n%s", diffModels(got, want))
				}
				if err := d.Close(); err != nil {
					t.Fatal(err)
				}
				return
			}
			refused(t, err, true, "CURRENT.tmp")
			unchanged(t, fs, before)
			rep := repairedTo(t, fs, want)
			if !slices.ContainsFunc(rep.SetAside, func(f RepairedFile) bool { return f.Name == "CURRENT.tmp" }) {
				t.Errorf("Repair did not set CURRENT.tmp aside:\n%v", rep)
			}
		})
	}
}

// TestACURRENTtmpLinkedToAnotherDBsCURRENT: a CURRENT.tmp that is a
// symbolic or hard link to another DB's CURRENT holds what a rollover
// writes, so Open takes it for a crashed rollover's; the rollover then
// wrote through it, pointing the other DB's CURRENT at a manifest it does
// not have (a black-box attack). The rollover must unlink it and write a
// file of its own: the other DB opens as it was.
func TestACURRENTtmpLinkedToAnotherDBsCURRENT(t *testing.T) {
	for _, link := range []string{"symlink", "hardlink"} {
		t.Run(link, func(t *testing.T) {
			root := t.TempDir()
			a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
			for _, dir := range []string{a, b} {
				d, err := Open(dir, nil)
				if err != nil {
					t.Fatal(err)
				}
				if err := d.Put([]byte("k"), []byte(dir), Sync); err != nil {
					t.Fatal(err)
				}
				if err := d.Close(); err != nil {
					t.Fatal(err)
				}
			}
			bCurrent, err := os.ReadFile(filepath.Join(b, "CURRENT"))
			if err != nil {
				t.Fatal(err)
			}
			makeLink := os.Symlink
			if link == "hardlink" {
				makeLink = os.Link
			}
			if err := makeLink(filepath.Join(b, "CURRENT"), filepath.Join(a, "CURRENT.tmp")); err != nil {
				t.Skipf("no %s here: %v", link, err)
			}
			d, err := Open(a, nil)
			if err != nil {
				t.Fatal(err)
			}
			mustGet(t, d, "k", a)
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			if got, err := os.ReadFile(filepath.Join(b, "CURRENT")); err != nil || !bytes.Equal(got, bCurrent) {
				t.Fatalf("the other DB's CURRENT went from %q to %q (%v)", bCurrent, got, err)
			}
			d, err = Open(b, nil)
			if err != nil {
				t.Fatalf("the other DB no longer opens: %v", err)
			}
			defer d.Close()
			mustGet(t, d, "k", b)
		})
	}
}

// TestLinksToNowhere: a symbolic link to nowhere under one of monban's
// names. Open and Repair failed with fs.ErrNotExist, which to Open's
// callers means "no DB here" (a black-box attack). Open must open, or
// refuse with ErrCorruption; Repair keep every synced write, or refuse
// with it; neither may answer fs.ErrNotExist.
func TestLinksToNowhere(t *testing.T) {
	for _, name := range []string{"999990.sst", "999991.tmp.sst", "999992.log", "MANIFEST-999993", "CURRENT.tmp", "LOCK"} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "db")
			d, err := Open(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Put([]byte("k"), []byte("v"), Sync); err != nil {
				t.Fatal(err)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			_ = os.Remove(filepath.Join(dir, name)) // LOCK
			if err := os.Symlink(filepath.Join(dir, "nowhere", name), filepath.Join(dir, name)); err != nil {
				t.Skipf("no symbolic links here: %v", err)
			}
			for _, ro := range []bool{false, true} {
				d, err := Open(dir, &Options{ReadOnly: ro})
				switch {
				case errors.Is(err, iofs.ErrNotExist):
					t.Fatalf("Open (read-only %v): %v: fs.ErrNotExist, which says there is no DB", ro, err)
				case err != nil && !errors.Is(err, ErrCorruption):
					t.Fatalf("Open (read-only %v): %v, want it to open or ErrCorruption", ro, err)
				case err == nil:
					mustGet(t, d, "k", "v")
					if err := d.Close(); err != nil {
						t.Fatal(err)
					}
				}
			}
			_, err = Repair(dir, nil)
			switch {
			case errors.Is(err, iofs.ErrNotExist):
				t.Fatalf("Repair: %v: fs.ErrNotExist", err)
			case err != nil && !errors.Is(err, ErrCorruption):
				t.Fatalf("Repair: %v, want it to repair or ErrCorruption", err)
			case err == nil:
				d, err := Open(dir, nil)
				if err != nil {
					t.Fatalf("Open after Repair: %v", err)
				}
				defer d.Close()
				mustGet(t, d, "k", "v")
			}
		})
	}
}
