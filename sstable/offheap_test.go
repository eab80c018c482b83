package sstable

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
	"github.com/monbandb/monban/internal/offheap"
)

// TestMetaOutlivesReader checks that a table's filter and index, held
// outside the Go heap when they are large, stay readable for as long as a
// holder with a reference uses them, after their Reader is closed and
// unreachable: a copy of the filter with a Ref (what FileMetadata keeps for
// the delete proofs) and a reader made by WithFile (what a compaction
// reads with). Race builds fault on memory a Buffer freed (offheap,
// invariant 3), and the safety net must not have fired.
func TestMetaOutlivesReader(t *testing.T) {
	entries := bigMetaEntries()
	data, _ := buildTable(t, entries, WriterOptions{BloomBitsPerKey: 10, BlockSize: 256})
	r := openTable(t, data, nil)
	if pinnedIndexBytes(r) < offheap.MinSize || r.filter.Size() < offheap.MinSize {
		t.Fatalf("index %d and filter %d bytes: the test needs both over offheap.MinSize", pinnedIndexBytes(r), r.filter.Size())
	}
	leaked := offheapNow().Leaked
	f := r.filter.Ref()
	defer f.Release()
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
	if _, _, found, err := view.Get(k, filter.Hash(k), base.MaxSeqNum, &Lookup{}); !found || err != nil {
		t.Fatalf("Get(%q) through the view: found %t, %v", k, found, err)
	}
	if err := view.Close(); err != nil {
		t.Fatal(err)
	}
	if got := offheapNow().Leaked; got != leaked {
		t.Fatalf("the offheap safety net freed %d Buffers: a holder did not release", got-leaked)
	}
}

// TestMetaFreedAtClose: the last holder's release frees a table's index
// and filter memory at once, with no collection: Close, when no other
// holder has it, or else the last holder's release. In race builds a
// read of it afterwards faults (offheap, invariant 3).
func TestMetaFreedAtClose(t *testing.T) {
	data, _ := buildTable(t, bigMetaEntries(), WriterOptions{BloomBitsPerKey: 10, BlockSize: 256})
	for _, holder := range []string{"none", "filter", "view"} {
		before := offheapNow()
		r := openTable(t, data, nil)
		index, stale := r.ix.parts[0].data, r.filter // copies without a reference: what a use after free would hold
		size := int64(len(index) + r.filter.Size())
		if got := offheapNow().Mapped - before.Mapped; got < size {
			t.Fatalf("%s: an open table maps %d bytes, its index and filter are %d", holder, got, size)
		}
		release := func() {}
		switch holder {
		case "filter":
			f := r.filter.Ref()
			release = f.Release
		case "view":
			v, err := r.WithFile(&memFile{data: data})
			if err != nil {
				t.Fatal(err)
			}
			release = func() { v.Close() }
		}
		if err := r.Close(); err != nil {
			t.Fatal(err)
		}
		if holder != "none" && offheapNow().Mapped == before.Mapped {
			t.Fatalf("%s: Close freed memory another holder still has", holder)
		}
		release()
		if got := offheapNow(); got.Mapped != before.Mapped || got.Leaked != before.Leaked {
			t.Fatalf("%s: after the last release %+d bytes mapped, %+d leaked; want both unchanged",
				holder, got.Mapped-before.Mapped, got.Leaked-before.Leaked)
		}
		if raceEnabled && (!faults(func() { sink = index[0] }) || !faults(func() { stale.MayContainHash(1) })) {
			t.Fatalf("%s: reading the index or filter after the last release did not fault", holder)
		}
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

// bigMetaEntries make a table whose index and filter are both over
// offheap.MinSize at BlockSize 256 and 10 bits per key.
func bigMetaEntries() []entry {
	var entries []entry
	for i := range 60000 {
		entries = append(entries, entry{base.MakeInternalKey(fmt.Appendf(nil, "key%08d", i), 1, base.KindSet), []byte("v")})
	}
	return entries
}

var sink byte

// faults reports whether read faults.
func faults(read func()) (faulted bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() { faulted = recover() != nil }()
	read()
	return false
}

// offheapNow is offheap's counters without the block buffers' spare
// chunks (internal/cache), which no block uses: a test that a table's
// memory is freed compares what its holders map.
func offheapNow() offheap.Counters {
	c := offheap.Stats()
	c.Mapped -= cache.SpareBytes()
	return c
}
