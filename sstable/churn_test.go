package sstable

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sync"
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
	data, _ := buildTable(t, es, WriterOptions{BloomBitsPerKey: 10, BlockSize: 128})
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
	if pinnedIndexBytes(r) < offheap.MinSize || r.filter.Size() < offheap.MinSize {
		t.Fatalf("index %d and filter %d bytes: the test needs both over offheap.MinSize", pinnedIndexBytes(r), r.filter.Size())
	}
	perTable := int64(pinnedIndexBytes(r) + r.filter.Size())
	r.Close()

	for _, capacity := range []int64{64 << 10, 1 << 20} {
		churn(t, fs, es, uint64(len(data)), capacity, perTable)
	}
}

func churn(t *testing.T, fs vfs.FS, es []entry, size uint64, capacity, perTable int64) {
	const tables, open, gets = 30, 2, 3000
	bc := cache.New(capacity)
	tc := NewTableCache(fs, "db", open, ReaderOptions{Cache: bc})
	before := offheapNow()
	// The open tables, the one a Get holds, slack for page rounding, what
	// the block cache holds, and the unused part of the chunks its buffers
	// are carved from: one for each size class read (data blocks, filter
	// pages, index partitions, a table's tail).
	bound := (open+2)*perTable + capacity + 4*offheap.ChunkSize
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
		if _, _, found, err := rd.Get(uk, filter.Hash(uk), base.MaxSeqNum, &Lookup{}); err != nil || !found {
			t.Fatalf("Get %d: table %d, key %s: found %t, %v", i, n, uk, found, err)
		}
		release()
		peak = max(peak, offheapNow().Mapped-before.Mapped)
	}
	if peak > bound {
		t.Fatalf("block cache %d: %d Gets over %d tables with %d open mapped up to %d bytes, more than %d (%d open tables of %d bytes of index and filter, 2 more, and the block cache)",
			capacity, gets, tables, open, peak, bound, open, perTable)
	}
	if err := tc.Close(); err != nil {
		t.Fatal(err)
	}
	bc.Close()
	if after := offheapNow(); after.Mapped != before.Mapped || after.Leaked != before.Leaked {
		t.Fatalf("block cache %d: after Close %+d bytes mapped, %+d Buffers leaked; want both unchanged",
			capacity, after.Mapped-before.Mapped, after.Leaked-before.Leaked)
	}
	t.Logf("block cache %d: peak mapped %d bytes, bound %d", capacity, peak, bound)
}

// TestConcurrentChurn runs Gets from several goroutines through a table
// cache of 2 over 8 tables, with deletions (Evict) among them, under
// -race: readers are closed, stash their meta and are reopened from it
// while other goroutines read, and every answer must be right; at Close
// every off-heap byte is freed, none by the safety net.
func TestConcurrentChurn(t *testing.T) {
	const tables = 8
	fs := vfs.NewMem()
	if err := fs.MkdirAll("db"); err != nil {
		t.Fatal(err)
	}
	es := bigMetaEntries()
	refs := map[uint64]TableRef{}
	for n := uint64(1); n <= tables; n++ {
		refs[n] = writeTableFile(t, fs, "db", n, es)
	}
	before := offheapNow()
	bc := cache.New(1 << 20)
	tc := NewTableCache(fs, "db", 2, ReaderOptions{Cache: bc})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := newRand(uint64(g))
			for i := range 300 {
				n := 1 + rng.Uint64N(tables)
				if i%50 == 49 {
					tc.Evict(n) // the file stays: the next Get opens it afresh
					continue
				}
				r, release, err := tc.Get(refs[n])
				if err != nil {
					t.Error(err)
					return
				}
				e := es[rng.IntN(len(es))]
				uk := e.key.UserKey
				v, _, found, err := r.Get(uk, filter.Hash(uk), base.MaxSeqNum, &Lookup{})
				release()
				if err != nil || !found || !bytes.Equal(v, e.value) {
					t.Errorf("table %d: Get(%s) = %q, %t, %v", n, uk, v, found, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := tc.Close(); err != nil {
		t.Fatal(err)
	}
	bc.Close()
	if after := offheapNow(); after.Mapped != before.Mapped || after.Leaked != before.Leaked {
		t.Fatalf("after Close: %+d bytes mapped, %+d Buffers leaked; want both unchanged",
			after.Mapped-before.Mapped, after.Leaked-before.Leaked)
	}
}
