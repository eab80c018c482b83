package sstable

import (
	"bytes"
	"testing"

	"github.com/monbandb/monban/internal/cache"
)

// TestEstimateBytesFollowsTheKeys: over pagedTable, pinned and paged, a
// range's estimate is its entries' share of the data bytes to within a
// block at each end (and 2% for the blocks' own overhead), the whole
// table's is all of them, and a range holding no key, or empty, is none.
func TestEstimateBytesFollowsTheKeys(t *testing.T) {
	es, data := pagedTable(t)
	share := func(lo, hi string) float64 {
		var in, all int
		for _, e := range es {
			n := len(e.key.UserKey) + len(e.value)
			all += n
			if bytes.Compare(e.key.UserKey, []byte(lo)) >= 0 && bytes.Compare(e.key.UserKey, []byte(hi)) < 0 {
				in += n
			}
		}
		return float64(in) / float64(all)
	}
	for _, paged := range []bool{false, true} {
		var b *MetaBudget
		if paged {
			b = NewMetaBudget(0, nil)
		}
		r := openPaged(t, data, cache.New(1<<20), b)
		all := r.Properties().DataBytes
		for _, tc := range [][2]string{
			{"", "kez"},
			{"key010000", "key020000"},
			{"key000000", "key001000"},
			{"key039999", "kez"}, // past the last key, key039998
			{"a", "b"},
			{"key020000", "key010000"},
		} {
			got, err := r.EstimateBytes([]byte(tc[0]), []byte(tc[1]))
			if err != nil {
				t.Fatal(err)
			}
			want := share(tc[0], tc[1]) * float64(all)
			if slack := 0.02*want + 2*(256+blockTrailerLen); float64(got) < want-slack || float64(got) > want+slack {
				t.Errorf("paged %t: EstimateBytes(%q, %q) = %d of %d data bytes, want %.0f", paged, tc[0], tc[1], got, all, want)
			}
		}
		// A range between two neighbouring keys lies in one block, or
		// starts the next, and weighs none of it: tombstones over a
		// handful of keys must not weigh a block each.
		if got, err := r.EstimateBytes([]byte("key010005\x00"), []byte("key010005\x01")); err != nil || got != 0 {
			t.Errorf("paged %t: EstimateBytes between two keys = %d, %v; want 0", paged, got, err)
		}
		r.Close()
	}
}
