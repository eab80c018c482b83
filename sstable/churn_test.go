package sstable

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
	"github.com/monbandb/monban/internal/offheap"
	"github.com/monbandb/monban/vfs"
)

// TestChurnKeepsMappedMemoryBounded: a table cache of 2 over 30 tables
// whose index and filter lie outside the heap reopens a table on nearly
// every Get, and the memory mapped for them must stay within what the
// open tables hold (offheap, invariant 5) and the block cache's budget,
// which holds the meta of closed tables, with no garbage collection asked
// for: reopened tables' blocks are freed when their reader closes, or
// when the block cache evicts them, not when the collector next runs
// (issue 30).
func TestChurnKeepsMappedMemoryBounded(t *testing.T) {
	const tables = 30
	var es []entry
	for i := range 20000 {
		es = append(es, entry{base.MakeInternalKey(fmt.Appendf(nil, "key%08d", i), 1, base.KindSet), []byte("v")})
	}
	data, _ := buildTable(t, es, WriterOptions{BloomBitsPerKey: 10, BlockSize: 256})
	fs := vfs.NewMem()
	if err := fs.MkdirAll("db"); err != nil {
		t.Fatal(err)
	}
	for n := uint64(1); n <= tables; n++ {
		f, err := fs.Create(filepath.Join("db", TableFileName(n)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
	}
	r := openTable(t, data, nil)
	if len(r.index.data) < offheap.MinSize || r.filter.Size() < offheap.MinSize {
		t.Fatalf("index %d and filter %d bytes: the test needs both over offheap.MinSize", len(r.index.data), r.filter.Size())
	}
	perTable := int64(len(r.index.data) + r.filter.Size())
	r.Close()

	for _, capacity := range []int64{64 << 10, 1 << 20} {
		churn(t, fs, es, uint64(len(data)), capacity, perTable)
	}
}

func churn(t *testing.T, fs vfs.FS, es []entry, size uint64, capacity, perTable int64) {
	const tables, open, gets = 30, 2, 3000
	tc := NewTableCache(fs, "db", open, ReaderOptions{Cache: cache.New(capacity)})
	before := offheap.Stats()
	// The open tables, the one a Get holds, slack for page rounding, and
	// what the block cache holds.
	bound := (open+2)*perTable + capacity
	rng := newRand(30)
	var peak int64
	for i := range gets {
		n := 1 + rng.Uint64N(tables)
		e := es[rng.IntN(len(es))]
		rd, release, err := tc.Get(TableRef{FileNum: n, Size: size})
		if err != nil {
			t.Fatal(err)
		}
		uk := e.key.UserKey
		if _, _, found, err := rd.Get(uk, filter.Hash(uk), base.MaxSeqNum, nil); err != nil || !found {
			t.Fatalf("Get %d: table %d, key %s: found %t, %v", i, n, uk, found, err)
		}
		release()
		peak = max(peak, offheap.Stats().Mapped-before.Mapped)
	}
	if peak > bound {
		t.Fatalf("block cache %d: %d Gets over %d tables with %d open mapped up to %d bytes, more than %d (%d open tables of %d bytes of index and filter, 2 more, and the block cache)",
			capacity, gets, tables, open, peak, bound, open, perTable)
	}
	if err := tc.Close(); err != nil {
		t.Fatal(err)
	}
	if after := offheap.Stats(); after.Mapped != before.Mapped || after.Leaked != before.Leaked {
		t.Fatalf("block cache %d: after Close %+d bytes mapped, %+d Buffers leaked; want both unchanged",
			capacity, after.Mapped-before.Mapped, after.Leaked-before.Leaked)
	}
	t.Logf("block cache %d: peak mapped %d bytes, bound %d", capacity, peak, bound)
}
