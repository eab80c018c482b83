package sstable

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
)

// TestSkipFiltersReadsPastDamagedFilters: a table whose filter or range
// filter alone is damaged fails Open, though every record in it is sound.
// Opened with SkipFilters it reads whole (the iteration and every Get
// match the entries written) and answers "maybe" to every filter
// question.
func TestSkipFiltersReadsPastDamagedFilters(t *testing.T) {
	es, data, p := sealTwin(t, 'a', 1)
	ft, err := decodeFooter(data[len(data)-footerLen:], uint64(len(data)-footerLen))
	if err != nil {
		t.Fatal(err)
	}
	damaged := map[string]uint64{
		"filter":       ft.filter.offset + ft.filter.length/2,
		"range filter": p.rangeFilterBlock.offset + p.rangeFilterBlock.length/2,
	}
	for name, at := range damaged {
		t.Run(name, func(t *testing.T) {
			bad := slices.Clone(data)
			bad[at] ^= 0x10
			if _, err := Open(&memFile{data: bad}, ReaderOptions{FileNum: 7}); !errors.Is(err, base.ErrCorruption) {
				t.Fatalf("Open of a table with a damaged %s: %v, want corruption", name, err)
			}
			r, err := Open(&memFile{data: bad}, ReaderOptions{FileNum: 7, SkipFilters: true})
			if err != nil {
				t.Fatalf("Open with SkipFilters: %v", err)
			}
			it := r.NewIter(nil, nil)
			i := 0
			for ok := it.First(); ok; ok = it.Next() {
				if i >= len(es) || base.Compare(it.Key(), es[i].key) != 0 || !bytes.Equal(it.Value(), es[i].value) {
					t.Fatalf("entry %d: %s, want %s", i, it.Key(), es[min(i, len(es)-1)].key)
				}
				i++
			}
			if err := it.Close(); err != nil || i != len(es) {
				t.Fatalf("iterated %d of %d entries: %v", i, len(es), err)
			}
			for _, e := range es {
				var l Lookup
				v, _, found, err := r.Get(e.key.UserKey, filter.Hash(e.key.UserKey), base.MaxSeqNum, &l)
				if err != nil || !found || !bytes.Equal(v, e.value) {
					t.Fatalf("Get(%s) = %q, %t, %v", e.key.UserKey, v, found, err)
				}
			}
			for i := range 100 {
				absent := fmt.Appendf(nil, "z%05d", i)
				if !r.MayContainHash(filter.Hash(absent)) || !r.MayContainRange(absent, append(absent, 0)) {
					t.Fatalf("a filter the Reader did not read answered \"absent\" for %s", absent)
				}
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}
