package sstable

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
	"github.com/monbandb/monban/vfs"
)

// writeTableFile writes table fileNum with a table id derived from fileNum
// and returns what a manifest would record of it.
func writeTableFile(t *testing.T, fs vfs.FS, dir string, fileNum uint64, es []entry) TableRef {
	t.Helper()
	f, err := fs.Create(filepath.Join(dir, TableFileName(fileNum)))
	if err != nil {
		t.Fatal(err)
	}
	id := 0x9e3779b97f4a7c15*fileNum | 1<<63 // top bit set: every id a 10-byte uvarint, so same-content tables have the same size
	w := NewWriter(f, WriterOptions{BloomBitsPerKey: 10, TableID: id})
	for _, e := range es {
		if err := w.Add(e.key, e.value); err != nil {
			t.Fatal(err)
		}
	}
	p, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return TableRef{FileNum: fileNum, Size: p.FileSize, TableID: id}
}

// TestTableCache checks the open-file bound, that a reader in use is never
// closed under its user (even when evicted), Evict, Peek and Close.
func TestTableCache(t *testing.T) {
	fs := vfs.NewMem()
	if err := fs.MkdirAll("db"); err != nil {
		t.Fatal(err)
	}
	refs := map[uint64]TableRef{}
	for n := uint64(1); n <= 5; n++ {
		refs[n] = writeTableFile(t, fs, "db", n, evenKeys(int(n)*10))
	}
	bc := cache.New(1 << 20)
	tc := NewTableCache(fs, "db", 2, ReaderOptions{Cache: bc})
	get := func(n uint64) (*Reader, func()) {
		r, release, err := tc.Get(refs[n])
		if err != nil {
			t.Fatalf("Get(%d): %v", n, err)
		}
		if r.Properties().NumEntries != n*10 {
			t.Fatalf("Get(%d) returned table with %d entries", n, r.Properties().NumEntries)
		}
		return r, release
	}
	r1, rel1 := get(1)
	get2, rel2 := get(2)
	rel2()
	_ = get2
	for n := uint64(3); n <= 5; n++ { // pushes 1 out of the cache while in use
		_, rel := get(n)
		rel()
	}
	k := []byte("k000000")
	if _, _, found, err := r1.Get(k, filter.Hash(k), base.MaxSeqNum, &Lookup{}); !found || err != nil {
		t.Fatalf("evicted reader in use: found=%v err=%v", found, err)
	}
	rel1()
	if _, _, _, err := r1.Get(k, filter.Hash(k), base.MaxSeqNum, &Lookup{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("released evicted reader still open: %v", err)
	}
	if _, _, ok := tc.Peek(1); ok {
		t.Fatal("Peek found a table that left the cache")
	}
	r5, rel5, ok := tc.Peek(5)
	if !ok || r5.Properties().NumEntries != 50 {
		t.Fatal("Peek missed an open table")
	}
	rel5()
	// Evict drops the table and its blocks.
	r5, rel5 = get(5)
	r5.Get(k, filter.Hash(k), base.MaxSeqNum, &Lookup{}) // caches a block
	tc.Evict(5)
	if _, ok := bc.Get(5, 0); ok {
		t.Fatal("Evict left blocks in the block cache")
	}
	if _, _, found, err := r5.Get(k, filter.Hash(k), base.MaxSeqNum, &Lookup{}); !found || err != nil {
		t.Fatal("Evict closed a reader in use")
	}
	rel5()
	if _, _, err := tc.Get(TableRef{FileNum: 99}); err == nil {
		t.Fatal("Get of a missing table succeeded")
	}
	if err := tc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tc.Get(refs[1]); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
}

// TestTableCacheConcurrent: many goroutines Get, read and release tables
// through a cache smaller than the table count, under -race.
func TestTableCacheConcurrent(t *testing.T) {
	fs := vfs.NewMem()
	fs.MkdirAll("db")
	refs := map[uint64]TableRef{}
	for n := uint64(1); n <= 6; n++ {
		refs[n] = writeTableFile(t, fs, "db", n, evenKeys(200))
	}
	tc := NewTableCache(fs, "db", 3, ReaderOptions{Cache: cache.New(256 << 10)})
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				n := uint64((g+i)%6 + 1)
				r, release, err := tc.Get(refs[n])
				if err != nil {
					t.Error(err)
					return
				}
				k := []byte(fmt.Sprintf("k%06d", 2*(i%200)))
				if _, _, found, err := r.Get(k, filter.Hash(k), base.MaxSeqNum, &Lookup{}); !found || err != nil {
					t.Errorf("table %d key %s: found=%v err=%v", n, k, found, err)
				}
				release()
				if i%50 == 0 {
					tc.Evict(n)
				}
			}
		}(g)
	}
	wg.Wait()
	tc.Close()
}

// TestTableCacheChecksIdentity is issue 11: two table files swapped. Both
// are valid tables of the same size, so only the id tells them apart; the
// cache must refuse the wrong one rather than answer from it, must not
// remember the failure, and must check a table it already holds as well.
func TestTableCacheChecksIdentity(t *testing.T) {
	fs := vfs.NewMem()
	fs.MkdirAll("db")
	ref1 := writeTableFile(t, fs, "db", 1, evenKeys(50))
	ref2 := writeTableFile(t, fs, "db", 2, evenKeys(50))
	if ref1.Size != ref2.Size {
		t.Fatalf("sizes %d and %d: the test wants tables told apart by id alone", ref1.Size, ref2.Size)
	}
	swap := func() {
		t.Helper()
		p1, p2, tmp := filepath.Join("db", TableFileName(1)), filepath.Join("db", TableFileName(2)), filepath.Join("db", "tmp")
		for _, mv := range [][2]string{{p1, tmp}, {p2, p1}, {tmp, p2}} {
			if err := fs.Rename(mv[0], mv[1]); err != nil {
				t.Fatal(err)
			}
		}
	}
	tc := NewTableCache(fs, "db", 4, ReaderOptions{})
	defer tc.Close()

	swap()
	want := fmt.Sprintf("000001.sst holds table id %#016x, the manifest expects %#016x", ref2.TableID, ref1.TableID)
	if _, _, err := tc.Get(ref1); !errors.Is(err, base.ErrCorruption) || !strings.Contains(err.Error(), want) {
		t.Fatalf("Get of swapped table 1: %v; want corruption %q", err, want)
	}
	if _, _, ok := tc.Peek(1); ok {
		t.Fatal("a table that failed its identity check stayed in the cache")
	}

	swap() // back in place: the failure was not cached, so Get retries
	r, release, err := tc.Get(ref1)
	if err != nil {
		t.Fatalf("Get after the files were restored: %v", err)
	}
	release()

	// Open already: a Get expecting something else still fails, and the
	// reader stays cached for Gets that expect it.
	for _, bad := range []TableRef{
		{FileNum: 1, Size: ref1.Size, TableID: ref2.TableID},
		{FileNum: 1, Size: ref1.Size + 1, TableID: ref1.TableID},
	} {
		if _, _, err := tc.Get(bad); !errors.Is(err, base.ErrCorruption) || !strings.Contains(err.Error(), "000001.sst") {
			t.Errorf("Get(%+v) of the open table %+v: %v; want corruption naming 000001.sst", bad, ref1, err)
		}
	}
	for _, good := range []TableRef{ref1, {FileNum: 1}} {
		r2, release, err := tc.Get(good)
		if err != nil || r2 != r {
			t.Fatalf("Get(%+v) after failed checks: reader %p (want %p), %v", good, r2, r, err)
		}
		release()
	}
}
