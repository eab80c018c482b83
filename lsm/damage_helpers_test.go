package lsm

import (
	"errors"
	"fmt"
	"maps"
	"strings"
	"testing"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/sstable"
	"github.com/monbandb/monban/vfs"
)

// Helpers of the damage tests (damage_*_test.go, issue 11): a DB with
// data in L0, L6 and a WAL at once, copies of its directory to damage one
// way each, and the three checks every damage case ends with — Open
// refuses and deletes nothing, or reads never give a wrong answer; Repair
// brings back what survived.

// damageOpts keep memtables at 4 KiB and tables small, and L0 clear of
// automatic compactions, so the test decides what sits in which level.
func damageOpts(fs vfs.FS) *Options {
	return &Options{
		// Uncompressed: the tests count on the tables that many values make.
		FS: fs, MemtableSize: 4 << 10, BlockSize: 512, TargetFileSize: 8 << 10, Compression: NoCompression,
		L0CompactionThreshold: 50, L0SlowdownWritesThreshold: 60, L0StopWritesThreshold: 70,
	}
}

// damageKeys is the key space of buildDamageDB.
const damageKeys = 400

func damageKey(i int) string { return fmt.Sprintf("k%04d", i) }

// buildDamageDB builds the DB the damage tests start from, in two
// sessions, and returns the model of what it holds. tag goes into every
// value (same length whatever the tag), so that two builds with different
// tags have tables of the same numbers and sizes but other contents: an
// older incarnation of the directory.
//
// Session 1: 400 keys compacted into L6, then every 3rd overwritten and
// every 7th deleted, flushed to L0. Session 2, the last one (its manifest
// is the one the manifest tests damage): Open rolls the manifest over,
// every 5th key and then every 11th are overwritten and flushed (several
// L0 tables, a manifest edit each), and every 50th is written last and
// stays in the WAL. fs2, if not nil, is what session 2 runs on (a view of
// fs, see keepFilesFS).
func buildDamageDB(t *testing.T, fs vfs.FS, fs2 vfs.FS, tag string) model {
	t.Helper()
	want := model{}
	session := func(fs vfs.FS, steps func(d *DB)) {
		d, err := Open("/db", damageOpts(fs))
		if err != nil {
			t.Fatal(err)
		}
		steps(d)
		if got := dbContents(t, d); !maps.Equal(got, want) {
			t.Fatalf("before damage:\n%s", diffModels(got, want))
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	put := func(d *DB, i int, v string) {
		k := damageKey(i)
		v = fmt.Sprintf("%s-%s-%d", tag, v, i)
		if err := d.Put([]byte(k), []byte(v)); err != nil {
			t.Fatal(err)
		}
		want[k] = v
	}
	flush := func(d *DB) {
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	session(fs, func(d *DB) {
		for i := range damageKeys {
			put(d, i, "v1"+strings.Repeat("x", 40))
		}
		if err := d.Compact(); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < damageKeys; i += 3 {
			put(d, i, "v2")
		}
		for i := 1; i < damageKeys; i += 7 {
			if err := d.Delete([]byte(damageKey(i))); err != nil {
				t.Fatal(err)
			}
			delete(want, damageKey(i))
		}
		flush(d)
	})
	if fs2 == nil {
		fs2 = fs
	}
	session(fs2, func(d *DB) {
		for i := 0; i < damageKeys; i += 5 {
			put(d, i, "v3")
		}
		flush(d)
		for i := 0; i < damageKeys; i += 11 {
			put(d, i, "v4")
		}
		flush(d)
		for i := 0; i < damageKeys; i += 50 {
			put(d, i, "v5-wal")
		}
		levels := map[int]bool{}
		tables, err := d.Tables()
		if err != nil {
			t.Fatal(err)
		}
		for _, ti := range tables {
			levels[ti.Level] = true
		}
		if !levels[0] || !levels[NumLevels-1] {
			t.Fatalf("tables in levels %v, want L0 and L%d", levels, NumLevels-1)
		}
	})
	logs := filesOf(t, fs, "/db", manifest.KindLog)
	if len(logs) == 0 || len(readFile(t, fs, "/db/"+logs[len(logs)-1])) == 0 {
		t.Fatalf("WALs %v: want the last one non-empty", logs)
	}
	return want
}

// keepFilesFS runs a session whose removals of tables and WALs fail (and
// are only logged by the engine): a directory in which no edit's effects
// happened yet beyond the edit itself, as a crash right after each
// manifest append would leave it.
type keepFilesFS struct{ vfs.FS }

func (k keepFilesFS) Remove(name string) error {
	if strings.HasSuffix(name, ".sst") || strings.HasSuffix(name, ".log") {
		return fmt.Errorf("keepFilesFS: not removing %s", name)
	}
	return k.FS.Remove(name)
}

// dirFiles maps every file in dir (not below it) to its contents.
func dirFiles(t *testing.T, fs vfs.FS, dir string) map[string]string {
	t.Helper()
	names, err := fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, n := range names {
		f, err := fs.Open(dir + "/" + n)
		if err != nil { // a directory
			out[n+"/"] = ""
			continue
		}
		f.Close()
		out[n] = string(readFile(t, fs, dir+"/"+n))
	}
	return out
}

// copyDB returns a new MemFS holding a copy of /db of fs, every file
// synced.
func copyDB(t *testing.T, fs vfs.FS) *vfs.MemFS {
	t.Helper()
	c := vfs.NewMem()
	if err := c.MkdirAll("/db"); err != nil {
		t.Fatal(err)
	}
	for name, data := range dirFiles(t, fs, "/db") {
		if strings.HasSuffix(name, "/") {
			continue
		}
		f, err := c.Create("/db/" + name)
		if err == nil {
			_, err = f.Write([]byte(data))
		}
		if err == nil {
			err = errors.Join(f.Sync(), f.Close())
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// unchanged fails unless dir holds exactly the files of before with the
// same contents (LOCK aside, which Open may create): a refused Open
// deletes, truncates and rewrites nothing.
func unchanged(t *testing.T, fs vfs.FS, before map[string]string) {
	t.Helper()
	after := dirFiles(t, fs, "/db")
	delete(after, "LOCK")
	b := maps.Clone(before)
	delete(b, "LOCK")
	var diffs []string
	for n, data := range b {
		switch got, ok := after[n]; {
		case !ok:
			diffs = append(diffs, n+" deleted")
		case got != data:
			diffs = append(diffs, fmt.Sprintf("%s changed (%d bytes, was %d)", n, len(got), len(data)))
		}
	}
	for n := range after {
		if _, ok := b[n]; !ok {
			diffs = append(diffs, n+" created")
		}
	}
	if len(diffs) > 0 {
		t.Fatalf("the refused Open changed the directory: %s", strings.Join(diffs, "; "))
	}
}

// refused checks Open's error: it wraps ErrCorruption and names one of
// names; with mentionRepair, it says Repair is the way out. It reports
// with Errorf, so the checks after it (nothing deleted, Repair) still run.
func refused(t *testing.T, err error, mentionRepair bool, names ...string) {
	t.Helper()
	if !errors.Is(err, ErrCorruption) {
		t.Errorf("Open: %v; want an error wrapping ErrCorruption naming %v", err, names)
		return
	}
	named := false
	for _, n := range names {
		named = named || strings.Contains(err.Error(), n)
	}
	if !named {
		t.Errorf("Open: %v; want the message to name %v", err, names)
	}
	if mentionRepair && !strings.Contains(strings.ToLower(err.Error()), "repair") {
		t.Errorf("Open: %v; want the message to mention Repair", err)
	}
}

// repairedTo runs Repair on fs and checks that the reopened DB holds
// exactly want; it returns the report.
func repairedTo(t *testing.T, fs vfs.FS, want model) *RepairReport {
	t.Helper()
	return repairedWith(t, damageOpts(fs), want)
}

// repairedWith is repairedTo with the options o (whose FS it repairs).
func repairedWith(t *testing.T, o *Options, want model) *RepairReport {
	t.Helper()
	rep, err := Repair("/db", o)
	if err != nil {
		t.Fatalf("Repair: %v\n%v", err, rep)
	}
	d, err := Open("/db", o)
	if err != nil {
		t.Fatalf("Open after Repair: %v\n%v", err, rep)
	}
	defer d.Close()
	if got := dbContents(t, d); !maps.Equal(got, want) {
		t.Fatalf("after Repair (%v):\n%s", rep, diffModels(got, want))
	}
	return rep
}

// survivorsModel is what a Repair can bring back from the given table
// files of /db and the WAL writes: per key the newest version among the
// tables, then the keys of the last session's WAL (every 50th, newest of
// all) from full.
func survivorsModel(t *testing.T, fs vfs.FS, tables []string, full model) model {
	t.Helper()
	n := newest{}
	for _, name := range tables {
		n.addTable(t, fs, "/db/"+name)
	}
	want := model{}
	for k, e := range n {
		if e.kind == base.KindSet {
			want[k] = e.val
		}
	}
	for i := 0; i < damageKeys; i += 50 {
		want[damageKey(i)] = full[damageKey(i)]
	}
	return want
}

// openTableFile opens the table at path, checking nothing the manifest says.
func openTableFile(t *testing.T, fs vfs.FS, path string) *sstable.Reader {
	t.Helper()
	f, err := fs.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := sstable.Open(f, sstable.ReaderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}
