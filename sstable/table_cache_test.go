package sstable

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
	"github.com/monbandb/monban/internal/vfs"
)

func writeTableFile(t *testing.T, fs vfs.FS, dir string, fileNum uint64, es []entry) {
	t.Helper()
	f, err := fs.Create(filepath.Join(dir, TableFileName(fileNum)))
	if err != nil {
		t.Fatal(err)
	}
	w := NewWriter(f, WriterOptions{BloomBitsPerKey: 10})
	for _, e := range es {
		if err := w.Add(e.key, e.value); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
}

// TestTableCache checks the open-file bound, that a reader in use is never
// closed under its user (even when evicted), Evict, Peek and Close.
func TestTableCache(t *testing.T) {
	fs := vfs.NewMem()
	if err := fs.MkdirAll("db"); err != nil {
		t.Fatal(err)
	}
	for n := uint64(1); n <= 5; n++ {
		writeTableFile(t, fs, "db", n, evenKeys(int(n)*10))
	}
	bc := cache.New(1 << 20)
	tc := NewTableCache(fs, "db", 2, ReaderOptions{Cache: bc})
	get := func(n uint64) (*Reader, func()) {
		r, release, err := tc.Get(n)
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
	if _, _, found, err := r1.Get(k, filter.Hash(k), base.MaxSeqNum, nil); !found || err != nil {
		t.Fatalf("evicted reader in use: found=%v err=%v", found, err)
	}
	rel1()
	if _, _, _, err := r1.Get(k, filter.Hash(k), base.MaxSeqNum, nil); !errors.Is(err, ErrClosed) {
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
	r5.Get(k, filter.Hash(k), base.MaxSeqNum, nil) // caches a block
	tc.Evict(5)
	if _, ok := bc.Get(5, 0); ok {
		t.Fatal("Evict left blocks in the block cache")
	}
	if _, _, found, err := r5.Get(k, filter.Hash(k), base.MaxSeqNum, nil); !found || err != nil {
		t.Fatal("Evict closed a reader in use")
	}
	rel5()
	if _, _, err := tc.Get(99); err == nil {
		t.Fatal("Get of a missing table succeeded")
	}
	if err := tc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tc.Get(1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
}

// TestTableCacheConcurrent: many goroutines Get, read and release tables
// through a cache smaller than the table count, under -race.
func TestTableCacheConcurrent(t *testing.T) {
	fs := vfs.NewMem()
	fs.MkdirAll("db")
	for n := uint64(1); n <= 6; n++ {
		writeTableFile(t, fs, "db", n, evenKeys(200))
	}
	tc := NewTableCache(fs, "db", 3, ReaderOptions{Cache: cache.New(256 << 10)})
	var wg sync.WaitGroup
	for g := 0; g < 6; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 300; i++ {
				n := uint64((g+i)%6 + 1)
				r, release, err := tc.Get(n)
				if err != nil {
					t.Error(err)
					return
				}
				k := []byte(fmt.Sprintf("k%06d", 2*(i%200)))
				if _, _, found, err := r.Get(k, filter.Hash(k), base.MaxSeqNum, nil); !found || err != nil {
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
