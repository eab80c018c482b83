package manifest

import (
	"bytes"
	"encoding/hex"
	"errors"
	"io"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/doctest"
	"github.com/monbandb/monban/vfs"
	"github.com/monbandb/monban/wal"
)

func TestVersionEditRoundTrip(t *testing.T) {
	rng := newRNG(t)
	for i := range 2000 {
		e := randEdit(rng)
		enc := e.Encode(nil)
		var got VersionEdit
		if err := got.Decode(enc); err != nil {
			t.Fatalf("edit %d: decode: %v", i, err)
		}
		if err := editsEqual(e, &got); err != nil {
			t.Fatalf("edit %d: %v", i, err)
		}
		// One encoding per edit: re-encoding gives the same bytes.
		if again := got.Encode(nil); string(again) != string(enc) {
			t.Fatalf("edit %d: re-encoding differs", i)
		}
	}
}

// TestVersionEditTruncated checks that every prefix of an encoding either
// decodes (the cut fell between two fields) or fails with ErrCorruption.
func TestVersionEditTruncated(t *testing.T) {
	rng := newRNG(t)
	for range 200 {
		enc := randEdit(rng).Encode(nil)
		for n := range len(enc) {
			var e VersionEdit
			if err := e.Decode(enc[:n]); err != nil && !errors.Is(err, base.ErrCorruption) {
				t.Fatalf("prefix %d of %x: %v does not wrap ErrCorruption", n, enc, err)
			}
		}
	}
}

func TestVersionEditCorrupt(t *testing.T) {
	for _, tc := range []struct{ name, hex string }{
		{"unknown tag", "0b"},
		{"former DB id 0", "0a" + "0000000000000000" + "05"},
		{"former DB ids out of order", "0a" + "0200000000000000" + "05" + "0a" + "0100000000000000" + "05"},
		{"former DB id repeated", "0a" + "0100000000000000" + "05" + "0a" + "0100000000000000" + "07"},
		{"former DB id without its sequence number", "0a" + "0100000000000000"},
		{"DB id 0", "09" + "0000000000000000"},
		{"DB id cut short", "09" + "01020304"},
		{"repeated DB id", "09" + "0100000000000000" + "09" + "0100000000000000"},
		{"tag zero", "00"},
		{"overlong varint", "02ffffffffffffffffffff01"},
		{"truncated varint", "0280"},
		{"repeated log number", "02010202"},
		{"bad magic", "010478797a7701"},
		{"future format version", "010f6d6f6e62616e2d6d616e696665737402"},
		{"level out of range", "060701"},
		{"deleted twice", "060105060105"},
		{"key length beyond the edit", "0700018001"},
		{"key shorter than a trailer", "070001010103616263"},
		{"seq beyond 56 bits", "04ffffffffffffffff01"},
		{"table id 0 under tag 8", "080001010961" + "0101000000000000" + "0961" + "0101000000000000" + "01010000" + "0000000000000000"},
		{"table id cut short", "080001010961" + "0101000000000000" + "0961" + "0101000000000000" + "01010000" + "01020304"},
		{"smallest after largest", "070001010962" + "0101000000000000" + "0961" + "0101000000000000" + "01010000"},
	} {
		b, err := hex.DecodeString(tc.hex)
		if err != nil {
			t.Fatalf("%s: bad test hex: %v", tc.name, err)
		}
		var e VersionEdit
		if err := e.Decode(b); !errors.Is(err, base.ErrCorruption) {
			t.Errorf("%s: Decode(%s) = %v, want ErrCorruption", tc.name, tc.hex, err)
		}
	}
}

// TestVersionEditExample pins the worked example of docs/format.md.
func TestVersionEditExample(t *testing.T) {
	e := &VersionEdit{
		LogNum: 4, NextFileNum: 6, LastSeq: 9,
		Deleted: map[DeletedFile]bool{{Level: 0, FileNum: 3}: true},
		Added: []NewFile{{Level: 1, Meta: &FileMetadata{
			FileNum: 5, Size: 1234,
			Smallest:    base.MakeInternalKey([]byte("a"), 7, base.KindSet),
			Largest:     base.MakeInternalKey([]byte("c"), 9, base.KindDelete),
			SmallestSeq: 7, LargestSeq: 9, NumEntries: 3, NumDeletions: 1,
			TableID: 0x8f1e2d3c4b5a6978,
		}}},
	}
	want := hex.EncodeToString(doctest.Hex(t, "../../docs/format.md", "A flush-and-compact edit"))
	if got := hex.EncodeToString(e.Encode(nil)); got != want {
		t.Fatalf("encoding\n got %s\nwant %s", got, want)
	}
}

// TestLegacyNewFile decodes a tag-7 record, written before tables had ids:
// the table's id is 0 (unknown), and it is written back as tag 7, so a
// snapshot carries such a table forward unchanged.
func TestLegacyNewFile(t *testing.T) {
	const legacy = "07" + "01" + "05" + "d209" + "09" + "61" + "0107000000000000" + "09" + "63" + "0009000000000000" + "07" + "09" + "03" + "01"
	b, _ := hex.DecodeString(legacy)
	var e VersionEdit
	if err := e.Decode(b); err != nil {
		t.Fatal(err)
	}
	if len(e.Added) != 1 || e.Added[0].Meta.FileNum != 5 || e.Added[0].Meta.TableID != 0 {
		t.Fatalf("decoded %+v, want table 000005 with TableID 0", e.Added)
	}
	if got := hex.EncodeToString(e.Encode(nil)); got != legacy {
		t.Fatalf("re-encoding\n got %s\nwant %s", got, legacy)
	}
}

// TestTableIDSurvivesRecovery logs a table with an id, recovers twice (each
// recovery rewrites the state as a snapshot) and finds the id again.
func TestTableIDSurvivesRecovery(t *testing.T) {
	mem := vfs.NewMem()
	vs, err := Create(mem, testDir)
	if err != nil {
		t.Fatal(err)
	}
	m := tableFor(vs.NextFileNum(), "a", "b", 1)
	m.TableID = 0xfedcba9876543210
	if err := vs.LogAndApply(&VersionEdit{Added: []NewFile{{Level: 0, Meta: m}}}); err != nil {
		t.Fatal(err)
	}
	vs.Close()
	for range 2 {
		if vs, err = Recover(mem, testDir); err != nil {
			t.Fatal(err)
		}
		v := vs.Current()
		if got := v.Levels[0][0].TableID; got != m.TableID {
			t.Fatalf("recovered TableID %#x, want %#x", got, m.TableID)
		}
		v.Unref()
		vs.Close()
	}
}

// TestDBIDSurvivesRecovery: the id an edit records is the set's from then
// on, across recoveries and the snapshot that starts each new manifest;
// an edit or a manifest that gives a second one is refused.
func TestDBIDSurvivesRecovery(t *testing.T) {
	mem := vfs.NewMem()
	vs, err := Create(mem, testDir)
	if err != nil {
		t.Fatal(err)
	}
	if vs.DBID() != 0 {
		t.Fatalf("a new set has DB id %#x, want none", vs.DBID())
	}
	const id uint64 = 0x0123456789abcdef
	if err := vs.LogAndApply(&VersionEdit{DBID: id}); err != nil {
		t.Fatal(err)
	}
	if err := vs.LogAndApply(&VersionEdit{DBID: id + 1}); !errors.Is(err, ErrInvalidEdit) {
		t.Fatalf("a second id: %v, want ErrInvalidEdit", err)
	}
	vs.Close()
	for i := range 2 {
		if vs, err = Recover(mem, testDir); err != nil {
			t.Fatal(err)
		}
		if vs.DBID() != id {
			t.Fatalf("recovery %d: DB id %#x, want %#x", i, vs.DBID(), id)
		}
		// The first edit after Recover starts a manifest whose snapshot
		// alone must carry the id.
		if err := vs.LogAndApply(&VersionEdit{}); err != nil {
			t.Fatal(err)
		}
		vs.Close()
	}
	if n := len(manifests(t, mem)); n != 1 {
		t.Fatalf("%d manifests, want 1 (the one the last snapshot began)", n)
	}

	// The same id again changes nothing; another is two DBs' edits.
	path := filepath.Join(testDir, manifests(t, mem)[0])
	appendEdit(t, mem, path, &VersionEdit{DBID: id})
	if vs, err = Recover(mem, testDir); err != nil {
		t.Fatalf("the same id twice: %v", err)
	}
	vs.Close()
	appendEdit(t, mem, path, &VersionEdit{DBID: id + 1})
	if _, err := Recover(mem, testDir); !errors.Is(err, base.ErrCorruption) {
		t.Fatalf("a manifest with two DB ids: %v, want ErrCorruption", err)
	}
}

func FuzzVersionEditDecode(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 2)) // a fixed seed corpus

	for range 32 {
		f.Add(randEdit(rng).Encode(nil))
	}
	f.Add([]byte{})
	legacy, _ := hex.DecodeString("0701" + "05" + "d209" + "0961" + "0107000000000000" + "0963" + "0009000000000000" + "07090301")
	f.Add(legacy) // a tag-7 table, written before table ids
	f.Fuzz(func(t *testing.T, b []byte) {
		var e VersionEdit
		if err := e.Decode(b); err != nil {
			if !errors.Is(err, base.ErrCorruption) {
				t.Fatalf("Decode(%x) = %v, not ErrCorruption", b, err)
			}
			return
		}
		// Whatever decodes re-encodes to an edit that decodes the same.
		var again VersionEdit
		if err := again.Decode(e.Encode(nil)); err != nil {
			t.Fatalf("re-encoding of %x does not decode: %v", b, err)
		}
		if err := editsEqual(&e, &again); err != nil {
			t.Fatalf("re-encoding of %x: %v", b, err)
		}
	})
}

// TestCreateExample pins the bytes of a new DB's manifest and CURRENT, the
// second worked example of docs/format.md.
func TestCreateExample(t *testing.T) {
	mem := vfs.NewMem()
	vs, err := Create(mem, testDir)
	if err != nil {
		t.Fatal(err)
	}
	vs.Close()
	want := hex.EncodeToString(doctest.Hex(t, "../../docs/format.md", "A new DB (`Create`)"))
	if got := hex.EncodeToString(readFile(t, mem, testDir+"/MANIFEST-000001")); got != want {
		t.Fatalf("MANIFEST-000001\n got %s\nwant %s", got, want)
	}
	if got := string(readFile(t, mem, testDir+"/CURRENT")); got != "MANIFEST-000001\n" {
		t.Fatalf("CURRENT = %q", got)
	}
}

// appendEdit rewrites the manifest at path with e appended after its
// records, as LogAndApply would have.
func appendEdit(t *testing.T, fsys vfs.FS, path string, e *VersionEdit) {
	t.Helper()
	r := wal.NewSyncedReader(bytes.NewReader(readFile(t, fsys, path)), path)
	f, err := fsys.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := wal.NewWriter(f)
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Append(rec); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Append(e.Encode(nil)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestFormerDBIDsSurviveRecovery: former ids an edit gives are the set's
// from then on, through recoveries whose first edit starts a manifest
// whose snapshot alone must carry them.
func TestFormerDBIDsSurviveRecovery(t *testing.T) {
	mem := vfs.NewMem()
	vs, err := Create(mem, testDir)
	if err != nil {
		t.Fatal(err)
	}
	const id uint64 = 0x0123456789abcdef
	if err := vs.LogAndApply(&VersionEdit{DBID: id, FormerDBIDs: []FormerDBID{{9, 90}, {40, 400}}}); err != nil {
		t.Fatal(err)
	}
	if err := vs.LogAndApply(&VersionEdit{FormerDBIDs: []FormerDBID{{5, 50}, {9, 99}}}); err != nil {
		t.Fatal(err)
	}
	want := []FormerDBID{{5, 50}, {9, 90}, {40, 400}} // an id's first shared sequence number stands
	vs.Close()
	for i := range 2 {
		if vs, err = Recover(mem, testDir); err != nil {
			t.Fatal(err)
		}
		if got := vs.FormerDBIDs(); !slices.Equal(got, want) {
			t.Fatalf("recovery %d: former ids %v, want %v", i, got, want)
		}
		if vs.DBID() != id {
			t.Fatalf("recovery %d: DB id %#x, want %#x", i, vs.DBID(), id)
		}
		if err := vs.LogAndApply(&VersionEdit{}); err != nil { // a rollover: the snapshot alone
			t.Fatal(err)
		}
		vs.Close()
	}
}
