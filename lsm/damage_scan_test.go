package lsm

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/vfs"
)

// TestScanOverDamagedBlock: a table whose every key has two versions (a
// snapshot held across its flush keeps the older), data blocks of a few
// entries so that a key's versions often straddle two, and a byte flipped
// in turn at points all over the file. Whatever Open accepts, a scan in
// either direction yields only the newest version of each key, and ends
// with ErrCorruption where it meets the damage: never an older version
// because the block holding the newer one failed to read. Backwards, a
// key's newest version is the last of its versions the scan reaches, so
// the block before must be read before the key is yielded.
func TestScanOverDamagedBlock(t *testing.T) {
	mem, opts, want, path := twoVersionTable(t)
	orig := readFile(t, mem, path)
	damaged, opened := 0, 0
	for off := 0; off < len(orig); off += 7 {
		o := flippedCopy(t, mem, opts, path, orig, off)
		d, err := Open("/db", o)
		if err != nil {
			if !errors.Is(err, ErrCorruption) {
				t.Fatalf("byte %d flipped: Open: %v", off, err)
			}
			continue
		}
		opened++
		for _, reverse := range []bool{false, true} {
			it := d.NewIter(nil)
			step, ok := it.Next, it.First()
			if reverse {
				step, ok = it.Prev, it.Last()
			}
			for ; ok; ok = step() {
				if k, v := string(it.Key()), string(it.Value()); v != want[k] {
					t.Fatalf("byte %d flipped, reverse %v: %s = %q, want %q", off, reverse, k, v, want[k])
				}
			}
			if err := it.Close(); errors.Is(err, ErrCorruption) {
				damaged++
			} else if err != nil {
				t.Fatalf("byte %d flipped, reverse %v: %v", off, reverse, err)
			}
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if opened == 0 || damaged == 0 {
		t.Fatalf("%d damaged tables opened, %d scans met the damage: the test reached no damaged block", opened, damaged)
	}
	t.Logf("%d of %d flips opened; %d scans stopped at the damage", opened, (len(orig)+6)/7, damaged)
}

// twoVersionTable writes a DB whose one table holds two versions of each
// of 60 keys, "old" and "new" (a snapshot held across its flush keeps the
// older), in data blocks of a few entries, so that a key's versions often
// straddle two. It returns the newest values and the table's path.
func twoVersionTable(t *testing.T) (mem *vfs.MemFS, opts *Options, want model, path string) {
	t.Helper()
	mem = vfs.NewMem()
	opts = &Options{FS: mem, BlockSize: 128, Compression: NoCompression}
	d, err := Open("/db", opts)
	if err != nil {
		t.Fatal(err)
	}
	want = model{}
	put := func(version string) {
		for i := range 60 {
			k := fmt.Sprintf("k%03d", i)
			want[k] = fmt.Sprintf("%s-%s", k, version)
			if err := d.Put([]byte(k), []byte(want[k])); err != nil {
				t.Fatal(err)
			}
		}
	}
	put("old")
	snap := d.NewSnapshot()
	put("new")
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	snap.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	tables := filesOf(t, mem, "/db", manifest.KindTable)
	if len(tables) != 1 {
		t.Fatalf("tables %v, want one", tables)
	}
	return mem, opts, want, "/db/" + tables[0]
}

// flippedCopy copies the DB in mem and flips a bit of byte off of the
// file at path, whose bytes are orig; it returns opts on the copy.
func flippedCopy(t *testing.T, mem *vfs.MemFS, opts *Options, path string, orig []byte, off int) *Options {
	t.Helper()
	fs := copyDB(t, mem)
	data := append([]byte(nil), orig...)
	data[off] ^= 0x20
	rewrite(t, fs, path, data)
	o := *opts
	o.FS = fs
	return &o
}

// TestRepairOverDamagedBlock flips a byte in turn at points all over the
// table of twoVersionTable and repairs each copy. Repair never fails; the
// repaired DB holds no key and no value that was never written; a key the
// damage spared keeps its newest version; and where the damage hit data
// blocks, the table is partly merged: some keys are kept (an older
// version may come back when the newer one's block is lost, the caveat
// RepairWith documents).
func TestRepairOverDamagedBlock(t *testing.T) {
	mem, opts, want, path := twoVersionTable(t)
	orig := readFile(t, mem, path)
	partly := 0
	for off := 0; off < len(orig); off += 5 {
		o := flippedCopy(t, mem, opts, path, orig, off)
		rep, err := Repair("/db", o)
		if err != nil {
			t.Fatalf("byte %d flipped: Repair: %v", off, err)
		}
		d, err := Open("/db", o)
		if err != nil {
			t.Fatalf("byte %d flipped: Open after Repair: %v\n%v", off, err, rep)
		}
		got := dbContents(t, d)
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
		for k, v := range got {
			if w, ok := want[k]; !ok || v != w && v != strings.Replace(w, "-new", "-old", 1) {
				t.Fatalf("byte %d flipped: after Repair %s = %q, never written\n%v", off, k, v, rep)
			}
		}
		table := rep.Files[slices.IndexFunc(rep.Files, func(f RepairedFile) bool { return "/db/"+f.Name == path })]
		switch table.Fate {
		case FatePartlyMerged:
			partly++
			if len(got) == 0 {
				t.Fatalf("byte %d flipped: the table was partly merged, yet no key is left\n%v", off, rep)
			}
		case FateMerged: // the damage missed every record
			if !maps.Equal(got, want) {
				t.Fatalf("byte %d flipped: the table merged whole, yet:\n%s\n%v", off, diffModels(got, want), rep)
			}
		}
	}
	if partly == 0 {
		t.Fatal("no flip left the table partly merged: the test reached no data block")
	}
	t.Logf("%d of %d flips left the table partly merged", partly, (len(orig)+4)/5)
}

// TestCompactionOverDamagedBlock: a compaction that meets a data block
// failing its checksum stops with ErrCorruption, installs nothing and
// deletes nothing: every table is still there as it was, the DB refuses
// writes (the background error), and a reopen reads every key the
// damage spared, the damaged block's keys failing with ErrCorruption.
func TestCompactionOverDamagedBlock(t *testing.T) {
	mem := vfs.NewMem()
	opts := &Options{FS: mem, BlockSize: 256, Compression: NoCompression}
	d := openMem(t, mem, opts)
	want := model{}
	for round := range 3 {
		for i := range 200 {
			k := fmt.Sprintf("k%03d", (i*7+round)%300)
			want[k] = fmt.Sprintf("%s-r%d", k, round)
			if err := d.Put([]byte(k), []byte(want[k])); err != nil {
				t.Fatal(err)
			}
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	tables := filesOf(t, mem, "/db", manifest.KindTable)
	victim := "/db/" + tables[1]
	data := readFile(t, mem, victim)
	data[300] ^= 0x01 // in the second data block
	rewrite(t, mem, victim, data)
	before := dirFiles(t, mem, "/db")

	d = openMem(t, mem, opts)
	if err := d.Compact(); !errors.Is(err, ErrCorruption) {
		t.Fatalf("Compact over a damaged block: %v, want ErrCorruption", err)
	}
	if err := d.Put([]byte("x"), []byte("y")); !errors.Is(err, ErrCorruption) {
		t.Fatalf("a write after the failed compaction: %v, want its error", err)
	}
	d.Close()
	after := dirFiles(t, mem, "/db")
	for _, name := range tables {
		if after[name] != before[name] {
			t.Errorf("%s changed or removed by the failed compaction", name)
		}
	}
	d = openMem(t, mem, opts)
	defer d.Close()
	damaged := 0
	for k, v := range want {
		got, err := d.Get([]byte(k))
		switch {
		case errors.Is(err, ErrCorruption):
			damaged++
		case err != nil || string(got) != v:
			t.Fatalf("Get(%s) after reopen = %q, %v; want %q", k, got, err, v)
		}
	}
	if damaged == 0 || damaged > len(want)/2 {
		t.Fatalf("%d of %d keys read as damaged: want the damaged block's alone", damaged, len(want))
	}
}
