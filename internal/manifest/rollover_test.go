package manifest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/vfs"
)

// TestRolloverWritesLinearly: a tree whose snapshot is longer than the
// manifest limit (long keys here; tables by the ten thousand in a large
// DB) rolled over at every edit, writing the whole snapshot again each
// time: bytes written grew with the square of the tables (a black-box
// attack measured 1.25 GiB of manifest for 96 MiB of keys). A manifest now
// waits until its edits are as long as its snapshot, so the snapshots
// written add up to about twice what the edits hold; and the encoding
// buffer a huge snapshot grew is not kept between edits. The tree still
// recovers whole.
func TestRolloverWritesLinearly(t *testing.T) {
	fs := vfs.NewMem()
	vs, err := Create(fs, testDir)
	if err != nil {
		t.Fatal(err)
	}
	vs.SetMaxManifestSize(4 << 10)
	const tables = 200
	long := strings.Repeat("k", 2<<10)
	rollovers, last := 0, vs.ManifestFileNum()
	var edits int64
	for i := range tables {
		lo, hi := fmt.Sprintf("%s%04da", long, i), fmt.Sprintf("%s%04db", long, i)
		e := &VersionEdit{Added: []NewFile{{Level: 6, Meta: tableFor(vs.NextFileNum(), lo, hi, base.SeqNum(i+1))}}}
		edits += int64(len(e.Encode(nil)))
		if err := vs.LogAndApply(e); err != nil {
			t.Fatal(err)
		}
		if n := vs.ManifestFileNum(); n != last {
			rollovers, last = rollovers+1, n
		}
	}
	// Rollovers come when the tree has doubled: about log2(200) of them.
	if rollovers > 12 {
		t.Errorf("%d rollovers in %d edits of one table each: the snapshot is rewritten too often", rollovers, tables)
	}
	huge := strings.Repeat("h", 2<<20)
	e := &VersionEdit{Added: []NewFile{{Level: 6, Meta: tableFor(vs.NextFileNum(), huge+"a", huge+"b", tables+1)}}}
	if err := vs.LogAndApply(e); err != nil {
		t.Fatal(err)
	}
	if c := cap(vs.buf); c > maxKeptEncodeBuf {
		t.Errorf("the encoding buffer keeps %d bytes after an edit of 4 MiB of keys", c)
	}
	if err := vs.Close(); err != nil {
		t.Fatal(err)
	}
	rec, err := Recover(fs, testDir)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	v := rec.Current()
	defer v.Unref()
	if n := len(v.Levels[6]); n != tables+1 {
		t.Fatalf("recovered %d tables, want %d", n, tables+1)
	}
	t.Logf("%d rollovers, %d bytes of edits", rollovers, edits)
}
