package sstable

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/offheap"
)

// TestMetaOutlivesReader checks that a table's filter and index, held
// outside the Go heap when they are large, stay readable for as long as
// something uses them, after their Reader is closed and unreachable: a
// copy of the filter (what FileMetadata keeps for the delete proofs) and a
// reader made by WithFile (what a compaction reads with). Race builds
// fault on memory a collected Buffer gave back (offheap, invariant 3).
func TestMetaOutlivesReader(t *testing.T) {
	var entries []entry
	for i := range 60000 {
		entries = append(entries, entry{base.MakeInternalKey(fmt.Appendf(nil, "key%08d", i), 1, base.KindSet), []byte("v")})
	}
	data, _ := buildTable(t, entries, WriterOptions{BloomBitsPerKey: 10, BlockSize: 512})
	r := openTable(t, data, nil)
	if len(r.index.data) < offheap.MinSize || r.filter.Size() < offheap.MinSize {
		t.Fatalf("index %d and filter %d bytes: the test needs both over offheap.MinSize", len(r.index.data), r.filter.Size())
	}
	f := r.Filter()
	view, err := r.WithFile(&memFile{data: data})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	r = nil
	for range 5 {
		runtime.GC()
	}
	for _, e := range entries {
		if !f.MayContain(e.key.UserKey) {
			t.Fatalf("the filter lost %q after its Reader went", e.key.UserKey)
		}
	}
	it := view.NewIter(nil, nil)
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		if base.Compare(it.Key(), entries[i].key) != 0 {
			t.Fatalf("entry %d: %v, want %v", i, it.Key(), entries[i].key)
		}
		i++
	}
	if err := it.Close(); err != nil || i != len(entries) {
		t.Fatalf("the view read %d of %d entries (%v)", i, len(entries), err)
	}
	k := entries[len(entries)/2].key.UserKey
	if _, _, found, err := view.Get(k, filter.Hash(k), base.MaxSeqNum, nil); !found || err != nil {
		t.Fatalf("Get(%q) through the view: found %t, %v", k, found, err)
	}
}

func TestWithFileRefusesAnotherSize(t *testing.T) {
	data, _ := buildTable(t, []entry{{base.MakeInternalKey([]byte("k"), 1, base.KindSet), []byte("v")}}, WriterOptions{})
	r := openTable(t, data, nil)
	other := &memFile{data: append(data[:len(data):len(data)], 0)}
	if _, err := r.WithFile(other); !errorsIs(err, base.ErrCorruption) {
		t.Fatalf("WithFile of a file one byte longer: %v, want ErrCorruption", err)
	}
	if !other.closed {
		t.Fatal("WithFile did not close the file it refused")
	}
}
