package sstable

import (
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
)

func TestSmoke(t *testing.T) {
	es := []entry{
		{base.MakeInternalKey([]byte("apple"), 3, base.KindSet), []byte("red")},
		{base.MakeInternalKey([]byte("banana"), 5, base.KindDelete), nil},
		{base.MakeInternalKey([]byte("banana"), 2, base.KindSet), []byte("yellow")},
	}
	data, p := buildTable(t, es, WriterOptions{BloomBitsPerKey: 10, BlockSize: 16})
	t.Logf("%d bytes, %+v", len(data), p)
	r := openTable(t, data, nil)
	for _, tc := range []struct {
		k   string
		seq base.SeqNum
	}{{"apple", 10}, {"banana", 10}, {"banana", 4}, {"banana", 1}, {"cherry", 9}, {"b", 9}} {
		var tr GetTrace
		v, kind, found, err := r.Get([]byte(tc.k), filter.Hash([]byte(tc.k)), tc.seq, &tr)
		t.Logf("%s@%d: %q %v %v %v | %s", tc.k, tc.seq, v, kind, found, err, tr.String())
	}
	it := r.NewIter(nil, nil)
	for ok := it.First(); ok; ok = it.Next() {
		t.Logf("%v %q", it.Key(), it.Value())
	}
	t.Logf("%+v", r.Stats())
}
