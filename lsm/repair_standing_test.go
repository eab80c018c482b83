package lsm

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/monbandb/monban/compaction"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/vfs"
	"github.com/monbandb/monban/wal"
)

// What Repair does with files of uncertain standing: tables and WALs a
// newer tree dropped, WALs after a damaged one, a damaged manifest.

// lostHolds fails unless some file in /db/lost has exactly data's bytes.
func lostHolds(t *testing.T, fs vfs.FS, what string, data []byte) {
	t.Helper()
	for _, n := range mustList(t, fs, "/db/lost") {
		if b, err := vfs.ReadFile(fs, "/db/lost/"+n); err == nil && bytes.Equal(b, data) {
			return
		}
	}
	t.Fatalf("lost/ (%v) holds no copy of %s", mustList(t, fs, "/db/lost"), what)
}

func mustList(t *testing.T, fs vfs.FS, dir string) []string {
	t.Helper()
	names, err := fs.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestRepairNoResurrection: k is put and flushed, then deleted, flushed
// and compacted, so that the compaction drops the tombstone with the value
// it hid. A copy of the old table (what a kill between a compaction's edit
// and its deletions leaves) and of the WAL that held the put are put back.
// Open ignores both, proved obsolete by the manifest; Repair, which reads
// the same manifest, must set them aside unmerged rather than bring back
// the value the delete removed.
func TestRepairNoResurrection(t *testing.T) {
	fs := vfs.NewMem()
	d := openMem(t, fs, nil)
	if err := d.Put([]byte("k"), []byte("old")); err != nil {
		t.Fatal(err)
	}
	if err := d.Put([]byte("stays"), []byte("here")); err != nil {
		t.Fatal(err)
	}
	walPath, walData := walFile(t, fs)
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	tables := filesOf(t, fs, "/db", manifest.KindTable)
	if len(tables) != 1 {
		t.Fatalf("tables %v after one flush", tables)
	}
	tableData := readFile(t, fs, "/db/"+tables[0])
	if err := d.Delete([]byte("k")); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	if s := d.Stats(); s.CompactionDrops[compaction.DropBottom] == 0 {
		t.Fatalf("the compaction kept the tombstone (%+v): nothing could come back", s)
	}
	d.Close()
	rewrite(t, fs, "/db/"+tables[0], tableData)
	rewrite(t, fs, walPath, walData)

	d = openMem(t, copyDB(t, fs), nil)
	mustGet(t, d, "k", "")
	d.Close()

	rep, err := Repair("/db", &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v", rep)
	if rep.TrustedManifest == "" || rep.UnknownStanding != 0 {
		t.Errorf("report trusts manifest %q and merged %d tables of unknown standing; want the manifest trusted, none unknown",
			rep.TrustedManifest, rep.UnknownStanding)
	}
	for _, name := range []string{tables[0], walPath[len("/db/"):]} {
		if !slices.ContainsFunc(rep.Files, func(f RepairedFile) bool { return f.Name == name && f.Fate == FateObsolete && f.Lost != "" }) {
			t.Errorf("the report does not set %s aside as obsolete: %v", name, rep.Files)
		}
	}
	d = openMem(t, fs, nil)
	defer d.Close()
	mustGet(t, d, "k", "")
	mustGet(t, d, "stays", "here")
	lostHolds(t, fs, tables[0], tableData)
	lostHolds(t, fs, walPath, walData)
}

// writeWALFile writes a WAL of one batch per key, the first at sequence
// number seq, each setting the key to itself.
func writeWALFile(t *testing.T, fs vfs.FS, num uint64, seq base.SeqNum, keys ...string) {
	t.Helper()
	f, err := fs.Create("/db/" + manifest.MakeFilename(manifest.KindLog, num))
	if err != nil {
		t.Fatal(err)
	}
	w := wal.NewWriter(f)
	for i, k := range keys {
		var b Batch
		b.Put([]byte(k), []byte(k))
		if _, err := w.Append(b.encode(seq + base.SeqNum(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := errors.Join(w.Sync(), w.Close()); err != nil {
		t.Fatal(err)
	}
}

// TestRepairWALPrefix: of two WALs, the older is damaged mid-file. The
// repaired DB holds a prefix of the commits: the older WAL's batches
// before the damage, and none of the newer's, which is set aside whole.
func TestRepairWALPrefix(t *testing.T) {
	fs := vfs.NewMem()
	if err := fs.MkdirAll("/db"); err != nil {
		t.Fatal(err)
	}
	var older, newer []string
	for i := range 200 {
		older = append(older, fmt.Sprintf("a%03d-%s", i, bytes.Repeat([]byte("x"), 100)))
		newer = append(newer, fmt.Sprintf("b%03d", i))
	}
	writeWALFile(t, fs, 5, 1, older...)
	writeWALFile(t, fs, 7, 201, newer...)
	path := "/db/" + manifest.MakeFilename(manifest.KindLog, 5)
	data := readFile(t, fs, path)
	data[len(data)/2] ^= 0x40
	rewrite(t, fs, path, data)
	newerData := readFile(t, fs, "/db/"+manifest.MakeFilename(manifest.KindLog, 7))

	rep, err := Repair("/db", &Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v", rep)
	kept := int(rep.WALBatches)
	if kept == 0 || kept >= len(older) {
		t.Fatalf("%d batches kept, want some of the older WAL's %d", kept, len(older))
	}
	d := openMem(t, fs, nil)
	defer d.Close()
	want := model{}
	for _, k := range older[:kept] {
		want[k] = k
	}
	if got := dbContents(t, d); !maps.Equal(got, want) {
		t.Fatalf("after Repair, want the older WAL's first %d batches and nothing of the newer:\n%s", kept, diffModels(got, want))
	}
	lostHolds(t, fs, "the damaged WAL", data)
	lostHolds(t, fs, "the WAL after the damage", newerData)
	fates := map[string]Fate{}
	for _, f := range rep.Files {
		fates[f.Name] = f.Fate
	}
	if fates["000005.log"] != FatePartlyMerged || fates["000007.log"] != FateAfterDamage {
		t.Errorf("fates %v; want 000005.log partly merged, 000007.log set aside after the damage", fates)
	}
}

// TestRepairDamagedManifest: four bytes of the manifest overwritten. Every
// key comes back (from the tables and WAL), and the manifest's bytes are
// in lost/, not gone.
func TestRepairDamagedManifest(t *testing.T) {
	fs := vfs.NewMem()
	full := buildDamageDB(t, fs, nil, "new")
	manifests := filesOf(t, fs, "/db", manifest.KindManifest)
	if len(manifests) != 1 {
		t.Fatalf("manifests %v, want one", manifests)
	}
	data := readFile(t, fs, "/db/"+manifests[0])
	copy(data[len(data)/2:], "XXXX")
	rewrite(t, fs, "/db/"+manifests[0], data)
	rep := repairedTo(t, fs, full)
	t.Logf("%v", rep)
	lostHolds(t, fs, manifests[0], data)
	if rep.TrustedManifest != "" || rep.UnknownStanding != rep.TablesKept {
		t.Errorf("report trusts %q with %d of %d tables of unknown standing; want no manifest trusted, every table unknown",
			rep.TrustedManifest, rep.UnknownStanding, rep.TablesKept)
	}
}
