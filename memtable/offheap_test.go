package memtable

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/monbandb/monban/internal/base"
)

// TestOffHeapBytesLiveWithTheirOwners checks Options.OffHeap's lifetime
// rule: an Iter keeps the memtable's bytes readable after the Memtable
// itself is unreachable, and a Get's value stays readable while the
// Memtable is. Race builds fault on memory a collected Buffer gave back
// (offheap, invariant 3).
func TestOffHeapBytesLiveWithTheirOwners(t *testing.T) {
	const n = 20000 // ~2 MB: many full 64 KiB chunks, mapped
	key := func(i int) []byte { return fmt.Appendf(nil, "key%06d", i) }
	value := func(i int) []byte { return fmt.Appendf(nil, "value-%06d-%090d", i, i) }
	fill := func() *Memtable {
		m := New(Options{OffHeap: true})
		for i := range n {
			if err := m.Add(base.SeqNum(i+1), base.KindSet, key(i), value(i)); err != nil {
				t.Fatal(err)
			}
		}
		if len(m.arena.held) == 0 {
			t.Fatal("no chunk is off the heap: the test checks nothing")
		}
		return m
	}
	it := fill().NewIter() // the Memtable is unreachable but through it
	kept := fill()
	for range 5 {
		runtime.GC()
	}
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		if string(it.Key().UserKey) != string(key(i)) || string(it.Value()) != string(value(i)) {
			t.Fatalf("entry %d after collections: %q = %q", i, it.Key().UserKey, it.Value())
		}
		i++
	}
	if err := it.Close(); err != nil || i != n {
		t.Fatalf("iterated %d of %d entries (%v)", i, n, err)
	}
	for i := range n {
		if v, res := kept.Get(key(i), base.MaxSeqNum); res != Found || string(v) != string(value(i)) {
			t.Fatalf("Get(%q) after collections: %q, %v", key(i), v, res)
		}
	}
	runtime.KeepAlive(kept)
}
