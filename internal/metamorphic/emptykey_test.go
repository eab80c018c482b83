package metamorphic

import (
	"errors"
	"testing"

	"github.com/monbandb/monban/lsm"
	"github.com/monbandb/monban/vfs"
)

// TestEmptyKeyCompactionBounds is the smallest sequence found for the
// metamorphic failures of seeds 2 and 15870503963045238180. An L0
// compaction's input range comes from compaction.(*Compaction).Bounds,
// which takes a nil key for "no bound yet"; but the empty key is nil in a
// table's metadata (after a flush, and once decoded from the manifest). With L0 newest
// first as ["z"], ["", "b" deleted], ["d"], Bounds returns ["d", "z"]
// instead of ["", "z"], so the L6 table holding the old "b" is not an
// input. The compaction writes to the last level, so it drops b's
// tombstone; then either the output overlaps the table left out and the
// manifest rejects the edit (a sticky background error: the DB stops
// taking writes), or, with small output tables that fit around it, the
// edit is accepted and the deleted "b" is back.
func TestEmptyKeyCompactionBounds(t *testing.T) {
	for _, tc := range []struct {
		name       string
		targetFile int64
	}{
		{"one output table (overlap)", 0},
		{"split outputs (resurrection)", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := &lsm.Options{FS: vfs.NewMem(), L0CompactionThreshold: 3, TargetFileSize: tc.targetFile}
			d, err := lsm.Open("/db", opts)
			must(t, err)
			must(t, d.Put([]byte("b"), []byte("old")))
			must(t, d.Compact()) // L6: ["b"]
			must(t, d.Put([]byte("d"), []byte("x")))
			must(t, d.Flush()) // L0: ["d"]
			must(t, d.Put([]byte(""), []byte("e")))
			must(t, d.Delete([]byte("b")))
			must(t, d.Flush()) // L0: ["", "b"], ["d"]
			must(t, d.Close())
			d, err = lsm.Open("/db", opts) // metadata from the manifest: the empty key is nil
			must(t, err)
			defer d.Close()
			must(t, d.Put([]byte("z"), []byte("y")))
			must(t, d.Flush()) // L0: ["z"], ["", "b"], ["d"]: the background L0→L6 compaction starts
			if err := d.Compact(); err != nil {
				t.Fatalf("Compact after the L0 compaction: %v", err)
			}
			if v, err := d.Get([]byte("b")); !errors.Is(err, lsm.ErrNotFound) {
				t.Fatalf("Get(b) after its delete and compactions = %q, %v; want ErrNotFound", v, err)
			}
		})
	}
}

// TestEmptyKeyCompactionBoundsNoReopen is FuzzDB's find (testdata
// cca27691f1e2a488) of the same bug: a flushed table's empty key is nil
// too, and a table holding only the empty key gives Bounds nil for both
// ends. L0 newest first [""], ["k17"] compacts as ["k17", "k17"], leaving
// the L6 table ["k16"] out.
func TestEmptyKeyCompactionBoundsNoReopen(t *testing.T) {
	d, err := lsm.Open("/db", &lsm.Options{FS: vfs.NewMem(), L0CompactionThreshold: 2})
	must(t, err)
	defer d.Close()
	must(t, d.Put([]byte("k16"), []byte("a")))
	must(t, d.Compact()) // L6: ["k16"]
	must(t, d.Put([]byte("k17"), []byte("b")))
	must(t, d.Flush()) // L0: ["k17"]
	must(t, d.Put([]byte(""), []byte("c")))
	must(t, d.Flush()) // L0: [""], ["k17"]: the background L0→L6 compaction starts
	if err := d.Compact(); err != nil {
		t.Fatalf("Compact after the L0 compaction: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
