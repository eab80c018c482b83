package lsm

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/monbandb/monban/compaction"
	"github.com/monbandb/monban/vfs"
)

func putRange(t *testing.T, d *DB, prefix string, n int) {
	t.Helper()
	for i := range n {
		if err := d.Put(fmt.Appendf(nil, "%s%05d", prefix, i), []byte("value-value-value")); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDeletesOfDeepKeysCompactAway: keys that exist only in the last level
// are deleted; a full compaction carries the tombstones down, where they
// meet and remove their puts, and then vanish themselves (bottom level).
func TestDeletesOfDeepKeysCompactAway(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{MemtableSize: 8 << 10, TargetFileSize: 8 << 10, LBaseMaxBytes: 32 << 10})
	defer d.Close()
	putRange(t, d, "k", 2000)
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	st := d.Stats()
	if st.Levels[NumLevels-1].Files == 0 {
		t.Fatalf("Compact left nothing in the last level: %v", levelFiles(st))
	}
	for i := range 1000 {
		if err := d.Delete(fmt.Appendf(nil, "k%05d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if got := d.Stats().DeletesElided; got != 0 {
		t.Fatalf("%d deletes of present keys were elided", got)
	}
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	tables, _ := d.Tables()
	var entries, tombstones uint64
	for _, tb := range tables {
		entries += tb.Entries
		tombstones += tb.Tombstones
	}
	if entries != 1000 || tombstones != 0 {
		t.Fatalf("after deleting half and compacting: %d entries, %d tombstones in tables; want 1000, 0", entries, tombstones)
	}
	st = d.Stats()
	if st.CompactionDrops[0] < 1000 || st.CompactionDrops[1]+st.CompactionDrops[2] < 1000 {
		t.Fatalf("drops by reason %v: want >= 1000 shadowed puts and >= 1000 elided tombstones", st.CompactionDrops)
	}
	for i := range 2000 {
		want := "value-value-value"
		if i < 1000 {
			want = ""
		}
		mustGet(t, d, fmt.Sprintf("k%05d", i), want)
	}
}

// TestDeletesOfAbsentKeysLeaveNoTombstone: deletes of keys that exist
// nowhere are elided by the filters (no WAL record); with elision off they
// are written, and the flush drops them by filter proof. Keys outside every
// table's range are proven absent by the range alone, so none of their
// tombstones survive; keys inside a table's range are proven absent by its
// Bloom filter, so only its false positives (about 1%) survive.
func TestDeletesOfAbsentKeysLeaveNoTombstone(t *testing.T) {
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("KeepAbsentDeletes=%v", keep), func(t *testing.T) {
			d := openMem(t, vfs.NewMem(), &Options{MemtableSize: 64 << 10, KeepAbsentDeletes: keep})
			defer d.Close()
			putRange(t, d, "m", 500)
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
			walBefore := d.Stats().WALBytes
			for i := range 500 {
				// "a…" sorts before every table; "m%05d-x" falls inside the
				// table's range, where only its Bloom filter rules it out.
				for _, k := range []string{fmt.Sprintf("a%05d", i), fmt.Sprintf("m%05d-x", i)} {
					if err := d.Delete([]byte(k)); err != nil {
						t.Fatal(err)
					}
				}
			}
			st := d.Stats()
			if !keep && (st.DeletesElided < 990 || st.WALBytes-walBefore > 10*64) {
				t.Fatalf("elided %d of 1000 absent deletes, wrote %d WAL bytes", st.DeletesElided, st.WALBytes-walBefore)
			}
			if keep && st.DeletesElided != 0 {
				t.Fatalf("KeepAbsentDeletes: %d deletes elided", st.DeletesElided)
			}
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
			tables, _ := d.Tables()
			var tombstones uint64
			for _, tb := range tables {
				tombstones += tb.Tombstones
				if tb.Tombstones > 0 && string(tb.Smallest) < "m" {
					t.Fatalf("table %06d [%q, %q] keeps tombstones of keys outside every table", tb.FileNum, tb.Smallest, tb.Largest)
				}
			}
			if tombstones > 10 {
				t.Fatalf("%d tombstones of absent keys survived the flush; the filters' false positives allow ~5", tombstones)
			}
			// "a…" keys are outside every table (bottom, for that key), and
			// so are "m…-x" keys that fall between two tables; the rest are
			// inside one, proven absent by its filter.
			if drops := d.Stats().FlushDrops; keep && (drops[compaction.DropBottom] < 500 || drops[compaction.DropFilterProof] == 0 ||
				drops[compaction.DropBottom]+drops[compaction.DropFilterProof] < 990) {
				t.Fatalf("flush dropped %d tombstones by key range and %d by filter proof; want >= 500, > 0, and about 1000 together",
					drops[compaction.DropBottom], drops[compaction.DropFilterProof])
			}
		})
	}
}

// TestCompactionReadsOnlyItsInputs: while compactions drop tombstones by
// filter proof against deeper tables, the only table files read are the
// compactions' own inputs (and the outputs, opened to load their filters):
// the proofs come from filters already in memory.
func TestCompactionReadsOnlyItsInputs(t *testing.T) {
	fs := vfs.NewFault(vfs.NewMem())
	d := openMem(t, fs, &Options{MemtableSize: 16 << 10, TargetFileSize: 16 << 10, KeepAbsentDeletes: true})
	defer d.Close()
	putRange(t, d, "k", 3000)
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	deep, _ := d.Tables()
	deepNames := map[string]bool{}
	for _, tb := range deep {
		deepNames[fmt.Sprintf("/db/%06d.sst", tb.FileNum)] = true
	}
	var mu sync.Mutex
	read := map[string]bool{}
	fs.SetTrace(func(_ int64, op vfs.Op, name string, _ error) {
		if op == vfs.OpRead || op == vfs.OpOpen {
			mu.Lock()
			read[name] = true
			mu.Unlock()
		}
	})
	// Tombstones of keys between the deep tables' keys: only the deep
	// tables' Bloom filters can prove them unnecessary.
	for i := range 3000 {
		if err := d.Delete(fmt.Appendf(nil, "k%05d-x", i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	d.waitIdle()
	fs.SetTrace(nil)
	// A deep table that is still in the tree was no compaction's input (an
	// input is rewritten or moved, and a move reads nothing): it must not
	// have been read.
	final, _ := d.Tables()
	for _, tb := range final {
		if name := fmt.Sprintf("/db/%06d.sst", tb.FileNum); deepNames[name] && read[name] {
			t.Errorf("%s, a deeper table outside the compactions' inputs, was read", name)
		}
	}
	// Each tombstone goes by key range (it falls between deep tables) or by
	// a deep table's filter, or is still in a table no compaction has
	// taken yet (how many depends on how flushes and compactions met: the
	// test asked for "about 3000" dropped, and failed now and then); the
	// filters must have done real work.
	st := d.Stats()
	byFilter := st.FlushDrops[compaction.DropFilterProof] + st.CompactionDrops[compaction.DropFilterProof]
	byRange := st.FlushDrops[compaction.DropBottom] + st.CompactionDrops[compaction.DropBottom]
	var kept uint64
	for _, tb := range final {
		kept += tb.Tombstones
	}
	if byFilter < 1000 || byFilter+byRange+kept != 3000 {
		t.Fatalf("tombstones dropped by filter proof %d, by key range %d, kept %d; want >= 1000 by filter proof, and 3000 in all", byFilter, byRange, kept)
	}
}

// TestCompactRewritesTheLastLevel: versions a snapshot kept in the last
// level — a tombstone and the put below it, an overwritten value — are
// gone after the snapshot is released and Compact runs again: Compact
// rewrites the last level's tables that hold any.
func TestCompactRewritesTheLastLevel(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	for _, k := range []string{"deleted", "overwritten", "kept"} {
		if err := d.Put([]byte(k), []byte("v1")); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	s := d.NewSnapshot()
	d.Delete([]byte("deleted"))
	d.Put([]byte("overwritten"), []byte("v2"))
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	mustGet(t, s, "deleted", "v1")
	mustGet(t, s, "overwritten", "v1")
	count := func() (entries, tombstones uint64) {
		tables, err := d.Tables()
		if err != nil {
			t.Fatal(err)
		}
		for _, tb := range tables {
			if tb.Level != NumLevels-1 {
				t.Fatalf("table %06d in L%d after Compact", tb.FileNum, tb.Level)
			}
			entries += tb.Entries
			tombstones += tb.Tombstones
		}
		return entries, tombstones
	}
	if e, ts := count(); e != 5 || ts != 1 {
		t.Fatalf("with the snapshot open: %d entries, %d tombstones; want 5 and 1", e, ts)
	}
	s.Close()
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	if e, ts := count(); e != 2 || ts != 0 {
		t.Fatalf("after the snapshot closed and Compact: %d entries, %d tombstones; want 2 and 0", e, ts)
	}
	mustGet(t, d, "deleted", "")
	mustGet(t, d, "overwritten", "v2")
	mustGet(t, d, "kept", "v1")
}

// manifestBytes is the size of the one manifest in the DB's directory.
func manifestBytes(t *testing.T, fs vfs.FS) int64 {
	t.Helper()
	names, err := fs.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	var size int64
	n := 0
	for _, name := range names {
		if !strings.HasPrefix(name, "MANIFEST-") {
			continue
		}
		b, err := vfs.ReadFile(fs, "/db/"+name)
		if err != nil {
			t.Fatal(err)
		}
		size, n = int64(len(b)), n+1
	}
	if n != 1 {
		t.Fatalf("%d manifests in the directory, want 1: %v", n, names)
	}
	return size
}

// TestCompactStartsTheManifestAfresh: a full Compact leaves a manifest of
// one snapshot, not the log of every flush and compaction before it, and
// the DB reopens from it with every key.
func TestCompactStartsTheManifestAfresh(t *testing.T) {
	fs := vfs.NewMem()
	d := openMem(t, fs, &Options{MemtableSize: 8 << 10, TargetFileSize: 8 << 10, LBaseMaxBytes: 32 << 10})
	putRange(t, d, "k", 3000)
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	d.waitIdle()
	grown := manifestBytes(t, fs)
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	after := manifestBytes(t, fs)
	tables, err := d.Tables()
	if err != nil {
		t.Fatal(err)
	}
	// A snapshot names each table once; the log named each table the
	// fill made, and its removal, many times over.
	if after*4 > grown || after > int64(200*len(tables)+200) {
		t.Fatalf("manifest of %d bytes after Compact (%d before, %d tables): not a snapshot", after, grown, len(tables))
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openMem(t, fs, nil)
	defer d.Close()
	for i := range 3000 {
		if _, err := d.Get(fmt.Appendf(nil, "k%05d", i)); err != nil {
			t.Fatalf("k%05d after reopen: %v", i, err)
		}
	}
}
