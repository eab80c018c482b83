package sstable

import (
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
)

// TestGetAllocs checks the allocation budget of Get: the returned value
// and nothing else, on a block-cache hit, on a miss (the block is read into
// the buffer of the one evicted before) and without a cache; nothing for
// an absent key the filter rejects.
func TestGetAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items at random")
	}
	data, _ := buildTable(t, evenKeys(5000), WriterOptions{BloomBitsPerKey: 10})
	present, absent := []byte("k000100"), []byte("k000101")
	for _, tc := range []struct {
		name  string
		c     *Cache
		evict bool // before each Get, so that it misses
		key   []byte
		limit float64
	}{
		{"hit/cached", cache.New(1 << 20), false, present, 1},
		{"hit/cache-miss", cache.New(1 << 20), true, present, 1},
		{"hit/nocache", nil, false, present, 1},
		{"absent/filter", nil, false, absent, 0},
	} {
		r := openTable(t, data, tc.c)
		h := filter.Hash(tc.key)
		var l Lookup
		get := func() {
			if tc.evict {
				tc.c.EvictFile(7)
			}
			r.Get(tc.key, h, base.MaxSeqNum, &l)
		}
		get() // warm the cache and the pools
		if got := testing.AllocsPerRun(200, get); got > tc.limit {
			t.Errorf("%s: %.2f allocations per Get, want <= %.0f", tc.name, got, tc.limit)
		}
		if tc.evict && l.From != BlockFromFile {
			t.Errorf("%s: the Get hit the cache", tc.name)
		}
	}
}

// TestIterAllocs checks that a scan allocates nothing per entry or per
// block, from the cache or the file: Init reuses the iterator and its key
// buffer, and blocks read from the file come from the pools.
func TestIterAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector makes sync.Pool drop items at random")
	}
	es := evenKeys(5000)
	for _, compress := range []bool{false, true} {
		data, _ := buildTable(t, es, WriterOptions{BlockSize: 512, Compression: compress})
		for _, c := range []*Cache{nil, cache.New(1 << 20)} {
			r := openTable(t, data, c)
			var it Iter
			scan := func() {
				it.Init(r, nil, nil)
				n := 0
				for ok := it.First(); ok; ok = it.Next() {
					n++
				}
				if err := it.Close(); err != nil || n != len(es) {
					t.Fatalf("scan: %d entries, %v", n, err)
				}
			}
			scan()
			if got := testing.AllocsPerRun(20, scan); got > 0 {
				t.Errorf("compress %v, cache %v: %.2f allocations per scan of %d blocks", compress, c != nil, got, r.Properties().NumDataBlocks)
			}
		}
	}
}
