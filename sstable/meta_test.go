package sstable

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
	"github.com/monbandb/monban/vfs"
)

// TestReopenReadsFooterOnly: a table the table cache closed to make room
// reopens from the meta it left in the block cache, reading its tail (the
// properties block and the footer, in one read) and nothing else, and
// answers as before; a deleted table (Evict) and a file
// put in the table's place leave or adopt no meta.
func TestReopenReadsTailOnly(t *testing.T) {
	fs := vfs.NewMem()
	if err := fs.MkdirAll("db"); err != nil {
		t.Fatal(err)
	}
	es := bigMetaEntries()
	refs := map[uint64]TableRef{}
	for n := uint64(1); n <= 3; n++ {
		refs[n] = writeTableFile(t, fs, "db", n, es)
	}
	bc := cache.New(8 << 20)
	tc := NewTableCache(fs, "db", 1, ReaderOptions{Cache: bc})
	before := offheapNow()
	var tailLen uint64
	get := func(n uint64) ReadStats {
		t.Helper()
		r, release, err := tc.Get(refs[n])
		if err != nil {
			t.Fatalf("Get(%d): %v", n, err)
		}
		defer release()
		for _, i := range []int{0, len(es) / 3, len(es) - 1} {
			uk := es[i].key.UserKey
			v, _, found, err := r.Get(uk, filter.Hash(uk), base.MaxSeqNum, &Lookup{})
			if err != nil || !found || !bytes.Equal(v, es[i].value) {
				t.Fatalf("table %d: Get(%s) = %q, %t, %v", n, uk, v, found, err)
			}
		}
		tailLen = uint64(len(r.tail))
		return r.Stats()
	}
	full := get(1)
	if full.OpenBlocksRead != 5 {
		t.Fatalf("a first open read %d blocks, want 5: footer, properties, top-level index, index partitions, filter", full.OpenBlocksRead)
	}
	get(2) // closes 1, which leaves its meta
	if st := get(1); st.OpenBlocksRead != 1 || st.OpenBytesRead != tailLen || tailLen > 1<<10 {
		t.Fatalf("a reopen read %d blocks, %d bytes; want the tail only (1 block of %d bytes, under 1 KiB)", st.OpenBlocksRead, st.OpenBytesRead, tailLen)
	}

	// Table 2 is closed now, its meta cached. Deleting it drops the meta;
	// table 1, deleted while open, leaves none when it closes.
	tc.Evict(2)
	tc.Evict(1)
	for _, n := range []uint64{1, 2} {
		if _, ok := bc.Get(n, metaOffset); ok {
			t.Fatalf("deleted table %d left its meta in the block cache", n)
		}
	}

	// Table 3's meta is cached; a file of the same size put in its place
	// must be read afresh and refused, not taken for the table.
	get(3)
	tc.Evict(99) // nothing: the cache is unchanged
	get(1)       // closes 3, which leaves its meta
	writeTableFile(t, fs, "db", 33, es)
	if err := fs.Rename(filepath.Join("db", TableFileName(33)), filepath.Join("db", TableFileName(3))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tc.Get(refs[3]); !errorsIs(err, base.ErrCorruption) {
		t.Fatalf("Get of a table replaced by another: %v, want ErrCorruption", err)
	}

	if err := tc.Close(); err != nil {
		t.Fatal(err)
	}
	bc.Close()
	if after := offheapNow(); after.Mapped != before.Mapped || after.Leaked != before.Leaked {
		t.Fatalf("after Close: %+d bytes mapped, %+d Buffers leaked; want both unchanged",
			after.Mapped-before.Mapped, after.Leaked-before.Leaked)
	}
}
