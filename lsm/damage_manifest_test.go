package lsm

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/vfs"
	"github.com/monbandb/monban/wal"
)

// manifestRecord is where one record of a manifest lies: it starts at
// start (its first fragment's header) and its payload is n bytes.
type manifestRecord struct{ start, n int64 }

// manifestOf returns the name, bytes and records of the one manifest in
// /db, read with the manifest's own reader.
func manifestOf(t *testing.T, fs vfs.FS) (string, []byte, []manifestRecord) {
	t.Helper()
	names := filesOf(t, fs, "/db", manifest.KindManifest)
	if len(names) != 1 {
		t.Fatalf("manifests %v, want one", names)
	}
	data := readFile(t, fs, "/db/"+names[0])
	r := wal.NewSyncedReader(bytes.NewReader(data), names[0])
	var recs []manifestRecord
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, manifestRecord{r.Offset(), int64(len(rec))})
	}
	if r.DroppedBytes() != 0 || len(recs) < 3 {
		t.Fatalf("manifest %s: %d records, %d bytes dropped; want at least 3, none dropped", names[0], len(recs), r.DroppedBytes())
	}
	return names[0], data, recs
}

// inside returns offsets strictly inside record i (first header byte
// excluded, nothing past the record's last byte): just after its start,
// just after its header, in the middle and at the last byte of its
// payload.
func inside(recs []manifestRecord, i int, size int64) []int64 {
	end := size
	if i+1 < len(recs) {
		end = recs[i+1].start // padding may lie before it: stay below start+7+n
	}
	r := recs[i]
	var out []int64
	for _, off := range []int64{r.start + 1, r.start + 7, r.start + 7 + r.n/2, r.start + 7 + r.n - 1} {
		if off > r.start && off < end && off < r.start+7+r.n && (len(out) == 0 || off > out[len(out)-1]) {
			out = append(out, off)
		}
	}
	return out
}

// TestDamagedManifest damages the manifest of the last session (a
// snapshot, the Open's edit, the flushes' edits):
//
//   - deleted, truncated at a record boundary, or truncated inside a
//     record before the last: whole durable edits are gone (each was
//     synced before the next was appended, and their effects — a WAL
//     removed after its flush — are on disk). Open must refuse, naming the
//     manifest, and delete nothing; Repair brings back every key.
//   - a bit flipped in any record, the last included: Open must refuse,
//     naming the manifest and the record's offset; Repair brings back
//     every key.
//   - truncated inside the last record, in a directory where that edit's
//     effects did not happen (its session could not remove files): the
//     torn tail a crash leaves. Open must succeed with every key.
//   - truncated inside the last record after its effects happened: no
//     crash leaves that, and what Open makes of it is open, but it must
//     not be a silent loss: Open refuses and deletes nothing, or every key
//     is there.
func TestDamagedManifest(t *testing.T) {
	base := vfs.NewMem()
	full := buildDamageDB(t, base, nil, "new")
	name, data, recs := manifestOf(t, base)
	size := int64(len(data))
	t.Logf("%s: %d bytes, records %v", name, size, recs)

	mustRefuse := func(t *testing.T, fs vfs.FS, what ...string) {
		t.Helper()
		before := dirFiles(t, fs, "/db")
		d, err := Open("/db", damageOpts(fs))
		if err == nil {
			got := dbContents(t, d)
			d.Close()
			t.Fatalf("Open succeeded, %d of %d keys wrong:\n%s", countDiffs(got, full), len(full), shortDiff(got, full))
		}
		t.Logf("Open: %v", err)
		refused(t, err, false, what...)
		unchanged(t, fs, before)
		repairedTo(t, fs, full)
	}
	withManifest := func(b []byte) *vfs.MemFS {
		fs := copyDB(t, base)
		rewrite(t, fs, "/db/"+name, b)
		return fs
	}

	t.Run("deleted", func(t *testing.T) {
		fs := copyDB(t, base)
		if err := fs.Remove("/db/" + name); err != nil {
			t.Fatal(err)
		}
		mustRefuse(t, fs, name)
	})
	for i, r := range recs {
		t.Run(fmt.Sprintf("cut_at_record_%d_boundary_%d", i, r.start), func(t *testing.T) {
			mustRefuse(t, withManifest(data[:r.start]), name)
		})
	}
	for i := range recs[:len(recs)-1] {
		for _, off := range inside(recs, i, size) {
			t.Run(fmt.Sprintf("cut_inside_record_%d_at_%d", i, off), func(t *testing.T) {
				mustRefuse(t, withManifest(data[:off]), name)
			})
		}
	}
	for i, r := range recs {
		for _, off := range append([]int64{r.start, r.start + 4}, inside(recs, i, size)[1:]...) {
			t.Run(fmt.Sprintf("flip_record_%d_at_%d", i, off), func(t *testing.T) {
				b := bytes.Clone(data)
				b[off] ^= 0x04
				fs := withManifest(b)
				mustRefuse(t, fs, name)
				// The fragment's offset, or the record's when a later
				// fragment of it is the damaged one.
				if _, err := Open("/db", damageOpts(withManifest(b))); err != nil &&
					!bytes.Contains([]byte(err.Error()), fmt.Appendf(nil, "offset %d", r.start)) &&
					!bytes.Contains([]byte(err.Error()), fmt.Appendf(nil, "record at %d", r.start)) {
					t.Errorf("Open: %v; want the record's offset %d named", err, r.start)
				}
			})
		}
	}

	last := len(recs) - 1
	t.Run("torn_last_record", func(t *testing.T) {
		kept := vfs.NewMem()
		full := buildDamageDB(t, kept, keepFilesFS{kept}, "new")
		name, data, recs := manifestOf(t, kept)
		for _, off := range inside(recs, len(recs)-1, int64(len(data))) {
			fs := copyDB(t, kept)
			rewrite(t, fs, "/db/"+name, data[:off])
			d, err := Open("/db", damageOpts(fs))
			if err != nil {
				t.Fatalf("cut at %d of %d, inside the last record (at %d): Open: %v", off, len(data), recs[len(recs)-1].start, err)
			}
			got := dbContents(t, d)
			d.Close()
			if !maps.Equal(got, full) {
				t.Fatalf("cut at %d, inside the last record: after Open:\n%s", off, diffModels(got, full))
			}
		}
	})
	for _, off := range inside(recs, last, size) {
		t.Run(fmt.Sprintf("cut_inside_last_record_after_its_effects_at_%d", off), func(t *testing.T) {
			fs := withManifest(data[:off])
			before := dirFiles(t, fs, "/db")
			d, err := Open("/db", damageOpts(fs))
			if err != nil {
				t.Logf("Open: %v", err)
				refused(t, err, false, name)
				unchanged(t, fs, before)
				repairedTo(t, fs, full)
				return
			}
			got := dbContents(t, d)
			d.Close()
			if !maps.Equal(got, full) {
				t.Fatalf("Open succeeded, %d of %d keys wrong:\n%s", countDiffs(got, full), len(full), shortDiff(got, full))
			}
		})
	}
}

// shortDiff is the first lines of diffModels, sorted.
func shortDiff(got, want model) string {
	lines := strings.Split(strings.TrimSuffix(diffModels(got, want), "\n"), "\n")
	slices.Sort(lines)
	if len(lines) > 6 {
		lines = append(lines[:6], "  ...")
	}
	return strings.Join(lines, "\n")
}

// countDiffs counts the keys on which got and want differ.
func countDiffs(got, want model) int {
	n := 0
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			n++
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			n++
		}
	}
	return n
}

// youngDBWithOneFlush builds a DB with one flushed table and a key in its
// WAL, whose only manifest holds its first record, the empty tree of a new
// DB, then the flush's edit. It returns what the DB holds, the manifest's
// path and bytes.
func youngDBWithOneFlush(t *testing.T) (mem *vfs.MemFS, want model, path string, orig []byte) {
	t.Helper()
	mem = vfs.NewMem()
	d := openMem(t, mem, nil)
	want = model{}
	for i := range 100 {
		k := fmt.Sprintf("k%03d", i)
		want[k] = "flushed"
		if err := d.Put([]byte(k), []byte(want[k]), Sync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	want["unflushed"] = "in the WAL"
	if err := d.Put([]byte("unflushed"), []byte(want["unflushed"]), Sync); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	manifests := filesOf(t, mem, "/db", manifest.KindManifest)
	if len(manifests) != 1 {
		t.Fatalf("manifests %v, want one", manifests)
	}
	path = "/db/" + manifests[0]
	return mem, want, path, readFile(t, mem, path)
}

// TestManifestCutAtEveryLength cuts a young DB's only manifest — its
// first record, the empty tree of a new DB, then one flush's edit — to
// every length, and opens each copy, read-only and not. Open either
// refuses with ErrCorruption and changes nothing, or holds every
// acknowledged key. A cut just after the first record parsed as a whole,
// empty tree: Open replayed the WAL, called the flushed table a stray
// and deleted it (a black-box attack); the table's sequence numbers,
// which neither the manifest nor the WAL account for, now refuse it.
func TestManifestCutAtEveryLength(t *testing.T) {
	mem, want, path, orig := youngDBWithOneFlush(t)
	opened := 0
	for cut := 1; cut < len(orig); cut++ {
		for _, readOnly := range []bool{true, false} {
			fs := copyDB(t, mem)
			rewrite(t, fs, path, orig[:cut])
			before := dirFiles(t, fs, "/db")
			d, err := Open("/db", &Options{FS: fs, ReadOnly: readOnly})
			if err != nil {
				if !errors.Is(err, ErrCorruption) {
					t.Fatalf("cut at %d of %d, read-only %t: Open: %v, want ErrCorruption", cut, len(orig), readOnly, err)
				}
				unchanged(t, fs, before)
				continue
			}
			opened++
			got := dbContents(t, d)
			d.Close()
			if !maps.Equal(got, want) {
				t.Fatalf("cut at %d of %d, read-only %t: Open succeeded with:\n%s", cut, len(orig), readOnly, diffModels(got, want))
			}
		}
	}
	t.Logf("%d of %d cuts opened whole", opened, 2*(len(orig)-1))
}

// TestRepairOfAManifestCutAtEveryLength: Repair of each cut copy of
// TestManifestCutAtEveryLength's manifest holds every acknowledged key.
// Cut just after its first record, the manifest parsed as an empty tree
// that agreed with the directory (its log number 0 names no WAL), and
// Repair trusted it and set the flushed table aside as obsolete, losing
// its keys (a black-box attack): a manifest that the tables' sequence
// numbers show lost edits, as Open's stray check finds, is not trusted.
func TestRepairOfAManifestCutAtEveryLength(t *testing.T) {
	mem, want, path, orig := youngDBWithOneFlush(t)
	for cut := 1; cut < len(orig); cut++ {
		t.Run(fmt.Sprintf("cut=%d", cut), func(t *testing.T) {
			fs := copyDB(t, mem)
			rewrite(t, fs, path, orig[:cut])
			repairedWith(t, &Options{FS: fs}, want)
		})
	}
}
