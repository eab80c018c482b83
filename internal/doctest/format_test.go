package doctest_test

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/doctest"
	"github.com/monbandb/monban/internal/keyspan"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/lsm"
	"github.com/monbandb/monban/sstable"
	"github.com/monbandb/monban/vfs"
	"github.com/monbandb/monban/wal"
)

const docsDir = "../../docs"

// formatGenerators write the worked examples of docs/format.md from the
// code, each from the inputs its section names. The marker of an example
// is "format NAME".
var formatGenerators = map[string]func(t *testing.T) []byte{
	"internal-key": func(t *testing.T) []byte {
		return base.MakeInternalKey([]byte("cat"), 5, base.KindSet).Append(nil)
	},
	"batch":              batchExample,
	"batch-range-delete": batchRangeDeleteExample,
	"wal-identity":       walIdentityExample,
	"wal-successor":      walSuccessorExample,
	"wal":                walExample,
	"wal-recyclable":     walRecyclableExample,
	"sstable":            sstableExample,
	"cache-line-filter":  cacheLineExample,
	"current":            func(t *testing.T) []byte { return createExample(t)["CURRENT"] },
	"manifest-create":    func(t *testing.T) []byte { return createExample(t)["MANIFEST-000001"] },
	"version-edit":       versionEditExample,
	"quotient-filter":    quotientExample,
	"maplet":             mapletExample,
	"grafite-filter":     grafiteExample,
	"key-hash-set":       keyHashSetExample,
	"rangedel-empty-start": func(*testing.T) []byte {
		return keyspan.Encode(nil, keyspan.Fragment([]keyspan.Tombstone{{Start: []byte{}, End: []byte("b"), Seq: 5}}))
	},
	"rangedel-abutting": func(*testing.T) []byte {
		return keyspan.Encode(nil, keyspan.Fragment([]keyspan.Tombstone{
			{Start: []byte("a"), End: []byte("c"), Seq: 5}, {Start: []byte("b"), End: []byte("c"), Seq: 7}}))
	},
}

// TestFormatExamples compares every marked example of docs/format.md with
// what the code writes for the same inputs: an edit to a byte of either
// fails it. Excerpts of a longer file (the SSTable) are compared part by
// part at the offsets they name.
func TestFormatExamples(t *testing.T) {
	seen := map[string]bool{}
	for _, e := range doctest.Examples(t, docsDir+"/format.md") {
		name, ok := strings.CutPrefix(e.Generator, "format ")
		if !ok {
			continue
		}
		gen, ok := formatGenerators[name]
		if !ok {
			t.Errorf("%s: no generator %q", e, name)
			continue
		}
		seen[name] = true
		got := gen(t)
		if name == "sstable" {
			regions := doctest.Regions(e.Text)
			if len(regions) == 0 {
				t.Errorf("%s: no bytes", e)
			}
			for _, r := range regions {
				end := min(len(got), r.Offset+len(r.Bytes))
				if r.Offset > len(got) || !bytes.Equal(got[r.Offset:end], r.Bytes) {
					t.Errorf("%s: bytes @%d\n doc  % x\n code % x", e, r.Offset, r.Bytes, got[min(r.Offset, len(got)):end])
				}
			}
			continue
		}
		if want := doctest.ParseHex(e.Text); !bytes.Equal(got, want) {
			t.Errorf("%s:\n doc  % x\n code % x", e, want, got)
		}
	}
	for name, gen := range formatGenerators {
		if _ = gen; !seen[name] {
			t.Errorf("docs/format.md has no example marked \"format %s\"", name)
		}
	}
}

// TestEveryExampleIsMarked: every block of docs/*.md that holds a trace or
// hex bytes is marked with the generator a test compares it with, and
// every marker names a generator some test knows: "format …" (this
// package), "kvbench teach …" and "kvbench explain …" (cmd/kvbench,
// TestTeachMatchesDocs),
// "ExampleDB_Explain" (lsm, TestReadPathDocTrace).
func TestEveryExampleIsMarked(t *testing.T) {
	for _, path := range doctest.Docs(t, docsDir) {
		for _, b := range doctest.FencedBlocks(t, path) {
			if !b.Marked && doctest.LooksLikeExample(b.Text) {
				t.Errorf("%s:%d: a trace or hex block without a <!-- doctest: … --> marker:\n%s", path, b.Line, b.Text)
			}
		}
		for _, e := range doctest.Examples(t, path) {
			switch {
			case strings.HasPrefix(e.Generator, "format "):
				if !strings.HasSuffix(path, "format.md") {
					t.Errorf("%s: format examples belong in docs/format.md", e)
				}
			case strings.HasPrefix(e.Generator, "kvbench teach "), strings.HasPrefix(e.Generator, "kvbench explain "),
				e.Generator == "ExampleDB_Explain":
			default:
				t.Errorf("%s: no test knows the generator %q", e, e.Generator)
			}
		}
	}
}

// batchExample is the WAL record of a batch committed at sequence 7 that
// sets "a" to "x" and deletes "b": written by a DB, read back from its WAL.
func batchExample(t *testing.T) []byte {
	return batchRecord(t, func(b *lsm.Batch) {
		b.Put([]byte("a"), []byte("x"))
		b.Delete([]byte("b"))
	})
}

// batchRangeDeleteExample is the WAL record of a batch committed at
// sequence 7 that deletes ["a", "c") and then sets "b" to "y".
func batchRangeDeleteExample(t *testing.T) []byte {
	return batchRecord(t, func(b *lsm.Batch) {
		b.DeleteRange([]byte("a"), []byte("c"))
		b.Put([]byte("b"), []byte("y"))
	})
}

// batchRecord is the WAL record of the batch fill makes, committed at
// sequence 7 by a DB and read back from its WAL.
func batchRecord(t *testing.T, fill func(*lsm.Batch)) []byte {
	mem := vfs.NewMem()
	db, err := lsm.Open("/db", &lsm.Options{FS: mem})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 6 { // sequence numbers 1..6
		if err := db.Put([]byte{'p', byte('0' + i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	var b lsm.Batch
	fill(&b)
	if err := db.Write(&b); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	names, err := mem.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(names)
	var last []byte
	for _, n := range names {
		if !strings.HasSuffix(n, ".log") {
			continue
		}
		num, err := strconv.ParseUint(strings.TrimSuffix(n, ".log"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		r := wal.NewRecyclableReader(bytes.NewReader(readFile(t, mem, "/db/"+n)), n, num)
		for {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			last = rec
		}
	}
	return last
}

// walRecyclableExample is the recyclable log number 7 holding the record
// "hi", sealed.
func walRecyclableExample(t *testing.T) []byte {
	mem := vfs.NewMem()
	f, err := mem.Create("/000007.log")
	if err != nil {
		t.Fatal(err)
	}
	w := wal.NewRecyclableWriter(f, 7)
	if _, err := w.Append([]byte("hi")); err != nil {
		t.Fatal(err)
	}
	if err := w.Seal(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return readFile(t, mem, "/000007.log")
}

// walIdentityExample is the identity record of a DB whose id is
// 0x0123456789abcdef: the first record of a new DB's WAL, checked to be
// that DB's id (its manifest's) and a count of 0, with the id replaced.
func walIdentityExample(t *testing.T) []byte {
	mem := vfs.NewMem()
	d, err := lsm.Open("/db", &lsm.Options{FS: mem})
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	id, num := dbIDAndLog(t, mem)
	name := fmt.Sprintf("%06d.log", num)
	rec, err := wal.NewRecyclableReader(bytes.NewReader(readFile(t, mem, "/db/"+name)), name, num).Next()
	if err != nil {
		t.Fatal(err)
	}
	want := binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint64(nil, id), 0)
	if id == 0 || !bytes.Equal(rec, want) {
		t.Fatalf("WAL %s begins with % x; want the DB id %#x and count 0", name, rec, id)
	}
	return binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint64(nil, 0x0123456789abcdef), 0)
}

// dbIDAndLog returns the DB id and the log number the manifest of the DB
// in /db on fs records.
func dbIDAndLog(t *testing.T, fs vfs.FS) (id, logNum uint64) {
	t.Helper()
	vs, err := manifest.Recover(fs, "/db")
	if err != nil {
		t.Fatal(err)
	}
	defer vs.Close()
	return vs.DBID(), vs.LogNum()
}

// walSuccessorExample checks that a rotation ends the WAL it retires
// with the DB id, count 0 and the new WAL's number (the first WAL's
// memtable filled by one large value, its flush held back so that both
// WALs stay), and returns the record for the example's id and WAL 12.
func walSuccessorExample(t *testing.T) []byte {
	mem := vfs.NewMem()
	release := make(chan struct{})
	d, err := lsm.Open("/db", &lsm.Options{FS: mem, MemtableSize: 64 << 10, EventListener: &lsm.EventListener{
		FlushBegin: func(lsm.FlushInfo) { <-release },
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"a", "b"} {
		if err := d.Put([]byte(k), make([]byte, 80<<10)); err != nil {
			t.Fatal(err)
		}
	}
	crashed := mem.ProcessCrashClone()
	close(release)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	id, num := dbIDAndLog(t, crashed)
	name := fmt.Sprintf("%06d.log", num)
	rd := wal.NewRecyclableReader(bytes.NewReader(readFile(t, crashed, "/db/"+name)), name, num)
	var last []byte
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		last = rec
	}
	names, err := crashed.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	next := uint64(0)
	for _, n := range names {
		if k, m, ok := manifest.ParseFilename(n); ok && k == manifest.KindLog && m > num {
			next = m
		}
	}
	want := binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint64(nil, id), 0), next)
	if !rd.Sealed() || next == 0 || !bytes.Equal(last, want) {
		t.Fatalf("WAL %s (sealed %v) ends with % x; want the DB id %#x, count 0 and the next WAL, %d", name, rd.Sealed(), last, id, next)
	}
	return binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint64(nil, 0x0123456789abcdef), 0), 12)
}

// walExample is a new log holding the records "hi" and "wal!".
func walExample(t *testing.T) []byte {
	mem := vfs.NewMem()
	f, err := mem.Create("/log")
	if err != nil {
		t.Fatal(err)
	}
	w := wal.NewWriter(f)
	for _, rec := range []string{"hi", "wal!"} {
		if _, err := w.Append([]byte(rec)); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return readFile(t, mem, "/log")
}

// sstableExample is the table of "cat"#5,SET = "meow" and "cow"#3,DEL
// with table id 0x8a1c2b3d4e5f6071, no filter, no compression.
func sstableExample(t *testing.T) []byte {
	mem := vfs.NewMem()
	f, err := mem.Create("/000001.sst")
	if err != nil {
		t.Fatal(err)
	}
	w := sstable.NewWriter(f, sstable.WriterOptions{TableID: 0x8a1c2b3d4e5f6071})
	if err := w.Add(base.MakeInternalKey([]byte("cat"), 5, base.KindSet), []byte("meow")); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(base.MakeInternalKey([]byte("cow"), 3, base.KindDelete), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	return readFile(t, mem, "/000001.sst")
}

// cacheLineExample is the filter of "cat" and "dog" at 10 bits per key.
func cacheLineExample(*testing.T) []byte {
	b := filter.NewCacheLineBuilder(10)
	b.AddKey([]byte("cat"))
	b.AddKey([]byte("dog"))
	return b.Finish(nil)
}

// grafiteExample is the range filter of the points 3, 5 and 100 at 6
// bits per key, range length 4, seed 3.
func grafiteExample(*testing.T) []byte {
	b := filter.NewGrafiteBuilder(6, 4, 3)
	for _, x := range []uint64{3, 5, 100} {
		b.Add(x)
	}
	return b.Finish(nil)
}

// keyHashSetExample is the key-hash set of the keys "cat", "cow" and
// "dog".
func keyHashSetExample(*testing.T) []byte {
	var hs []uint64
	for _, k := range []string{"cat", "cow", "dog"} {
		hs = append(hs, filter.Hash([]byte(k)))
	}
	return filter.AppendKeyHashes(nil, hs)
}

// createExample is a new DB's manifest directory: file name to bytes.
func createExample(t *testing.T) map[string][]byte {
	mem := vfs.NewMem()
	if err := mem.MkdirAll("/db"); err != nil {
		t.Fatal(err)
	}
	vs, err := manifest.Create(mem, "/db")
	if err != nil {
		t.Fatal(err)
	}
	if err := vs.Close(); err != nil {
		t.Fatal(err)
	}
	return map[string][]byte{
		"CURRENT":         readFile(t, mem, "/db/CURRENT"),
		"MANIFEST-000001": readFile(t, mem, "/db/MANIFEST-000001"),
	}
}

// versionEditExample is the flush-and-compact edit of docs/format.md.
func versionEditExample(*testing.T) []byte {
	e := &manifest.VersionEdit{
		LogNum: 4, NextFileNum: 6, LastSeq: 9,
		Deleted: map[manifest.DeletedFile]bool{{Level: 0, FileNum: 3}: true},
		Added: []manifest.NewFile{{Level: 1, Meta: &manifest.FileMetadata{
			FileNum: 5, Size: 1234,
			Smallest:    base.MakeInternalKey([]byte("a"), 7, base.KindSet),
			Largest:     base.MakeInternalKey([]byte("c"), 9, base.KindDelete),
			SmallestSeq: 7, LargestSeq: 9, NumEntries: 3, NumDeletions: 1,
			TableID: 0x8f1e2d3c4b5a6978,
		}}},
	}
	return e.Encode(nil)
}

// quotientExample is the quotient filter of 4 slots and 4-bit remainders
// holding the fingerprints (quotient, remainder) (1,3), (1,9), (2,5),
// (3,a).
func quotientExample(t *testing.T) []byte {
	f, err := filter.NewQuotient(2, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, fp := range []uint64{0x13, 0x19, 0x25, 0x3a} { // quotient<<4 | remainder
		if err := f.InsertHash(fp << (64 - 6)); err != nil {
			t.Fatal(err)
		}
	}
	b, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// mapletExample is the maplet of 4 slots and 4-bit payloads, run codes
// 0 → "0", 1 → "10", 2 → "11", holding the entries (quotient 1, hash bits
// 1011, run 0), (quotient 1, 0110, run 2) and (quotient 3, 1110, run 1).
func mapletExample(t *testing.T) []byte {
	m, err := filter.NewMaplet(4, 4, []uint8{1, 2, 2})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Release()
	for _, e := range []struct {
		bits uint64 // quotient<<4 | the next four hash bits
		run  int
	}{{0x1b, 0}, {0x16, 2}, {0x3e, 1}} {
		if err := m.Insert(e.bits<<(64-6), e.run); err != nil {
			t.Fatal(err)
		}
	}
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func readFile(t *testing.T, fsys vfs.FS, name string) []byte {
	t.Helper()
	b, err := vfs.ReadFile(fsys, name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseHex pins the reading rules of the package doc.
func TestParseHex(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"01 02 03   comment 04 05\n", "010203"},
		{"offset 9  0a 0b   x\n", "0a0b"},
		{"00 01 (× 3 more)\n", "000100010001"},
		{"prose 01 02\n", ""},
		{"63 61 74 | 01 05\n", "6361740105"},
	} {
		if got := hex.EncodeToString(doctest.ParseHex(tc.text)); got != tc.want {
			t.Errorf("ParseHex(%q) = %s, want %s", tc.text, got, tc.want)
		}
	}
	rs := doctest.Regions("part @4:\n01 02\n03\nnext @10, prose\n0a\n")
	if len(rs) != 2 || rs[0].Offset != 4 || hex.EncodeToString(rs[0].Bytes) != "010203" || rs[1].Offset != 10 || hex.EncodeToString(rs[1].Bytes) != "0a" {
		t.Errorf("Regions = %+v", rs)
	}
}
