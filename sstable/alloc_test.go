package sstable

import (
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
)

// TestGetAllocs checks the allocation budget of Get: the returned value
// and nothing else on a block-cache hit or without a cache; nothing for an
// absent key the filter rejects.
func TestGetAllocs(t *testing.T) {
	data, _ := buildTable(t, evenKeys(5000), WriterOptions{BloomBitsPerKey: 10})
	present, absent := []byte("k000100"), []byte("k000101")
	for _, tc := range []struct {
		name  string
		c     *cache.Cache
		key   []byte
		limit float64
	}{
		{"hit/cached", cache.New(1 << 20), present, 1},
		{"hit/nocache", nil, present, 1},
		{"absent/filter", nil, absent, 0},
	} {
		r := openTable(t, data, tc.c)
		h := filter.Hash(tc.key)
		var tr GetTrace
		r.Get(tc.key, h, base.MaxSeqNum, &tr) // warm cache and pool
		got := testing.AllocsPerRun(200, func() {
			r.Get(tc.key, h, base.MaxSeqNum, &tr)
		})
		limit := tc.limit
		if raceEnabled {
			limit++ // the pooled scratch may have been dropped (race_on_test.go)
		}
		if got > limit {
			t.Errorf("%s: %.2f allocations per Get, want <= %.0f", tc.name, got, tc.limit)
		}
	}
}
