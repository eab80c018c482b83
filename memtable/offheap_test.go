package memtable

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/offheap"
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
		if len(m.arena.held.bufs) == 0 {
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

// TestOffHeapChunksReleasedWithMemtable: a collected Memtable releases its
// chunks itself, so the offheap safety net, which would free and count
// them a collection after the Memtable's, frees none of them.
func TestOffHeapChunksReleasedWithMemtable(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("buffers are heap slices on " + runtime.GOOS)
	}
	before := offheap.Stats().Leaked
	collected := make(chan struct{})
	func() {
		m := New(Options{OffHeap: true})
		for i := range 5000 {
			if err := m.Add(base.SeqNum(i+1), base.KindSet, fmt.Appendf(nil, "key%06d", i), make([]byte, 100)); err != nil {
				t.Fatal(err)
			}
		}
		if len(m.arena.held.bufs) == 0 {
			t.Fatal("no chunk is off the heap: the test checks nothing")
		}
		runtime.AddCleanup(m, func(c chan struct{}) { close(c) }, collected)
	}()
	deadline := time.Now().Add(5 * time.Second)
	for done := false; !done; {
		select {
		case <-collected:
			done = true
		default:
			if time.Now().After(deadline) {
				t.Fatal("the memtable was never collected")
			}
			runtime.GC()
			time.Sleep(time.Millisecond)
		}
	}
	for range 3 {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if got := offheap.Stats().Leaked; got != before {
		t.Fatalf("the safety net freed %d Buffers: the memtable did not release its chunks", got-before)
	}
}

// TestLastUnrefFreesArena: the last Unref unmaps the arena at once, with
// no collection, and a Ref after it, or an Unref too many, panics rather
// than touch freed memory.
func TestLastUnrefFreesArena(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("buffers are heap slices on " + runtime.GOOS)
	}
	m := New(Options{OffHeap: true})
	for i := range 5000 {
		if err := m.Add(base.SeqNum(i+1), base.KindSet, fmt.Appendf(nil, "key%06d", i), make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
	}
	var arena int64 // the mapped part: chunks under offheap.MinSize are heap slices
	for _, b := range m.arena.held.bufs {
		if n := cap(b.Bytes()); n >= offheap.MinSize {
			arena += int64(n)
		}
	}
	if arena < 256<<10 {
		t.Fatalf("%d bytes of arena off the heap: the test checks nothing", arena)
	}
	m.Ref() // a reader
	before := offheap.Stats().Mapped
	m.Unref() // the creator lets go: the reader still reads
	if v, res := m.Get([]byte("key004999"), base.MaxSeqNum); res != Found || len(v) != 100 {
		t.Fatalf("Get with a holder left: %v, %d bytes", res, len(v))
	}
	if got := offheap.Stats().Mapped; got != before {
		t.Fatalf("mapped bytes went from %d to %d with a holder left", before, got)
	}
	m.Unref()
	if got := offheap.Stats().Mapped; before-got < arena {
		t.Fatalf("the last Unref unmapped %d bytes, want the arena's %d", before-got, arena)
	}
	for name, f := range map[string]func(){"Ref": m.Ref, "Unref": m.Unref} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s after the last Unref did not panic", name)
				}
			}()
			f()
		}()
	}
}
