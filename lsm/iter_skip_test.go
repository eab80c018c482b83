package lsm

import (
	"fmt"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// sstReads counts the reads of table files: iterators' block reads, which
// Stats does not count.
type sstReads struct {
	vfs.FS
	n atomic.Int64
}

func (f *sstReads) Open(name string) (vfs.File, error) {
	file, err := f.FS.Open(name)
	if err != nil || len(name) < 4 || name[len(name)-4:] != ".sst" {
		return file, err
	}
	return &sstReadsFile{File: file, n: &f.n}, nil
}

type sstReadsFile struct {
	vfs.File
	n *atomic.Int64
}

func (f *sstReadsFile) ReadAt(p []byte, off int64) (int, error) {
	f.n.Add(1)
	return f.File.ReadAt(p, off)
}

// TestIterSkipsRangeDeleted: an iterator seeks past the entries a range
// tombstone deletes in tables older than it, instead of stepping over
// each, and still returns every key written after the tombstone inside its
// span (in a newer table, or in the memtable) and, at a snapshot taken
// before it, every deleted key.
func TestIterSkipsRangeDeleted(t *testing.T) {
	fs := &sstReads{FS: vfs.NewMem()}
	d, err := Open("/db", &Options{FS: fs, MemtableSize: 256 << 10, BlockCacheSize: 0, TargetFileSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	key := func(i int) []byte { return fmt.Appendf(nil, "k%06d", i) }
	const n = 20000
	val := make([]byte, 100)
	for i := range n {
		if err := d.Put(key(i), val); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	snap := d.NewSnapshot()
	defer snap.Close()
	if err := d.DeleteRange(key(100), key(n-100)); err != nil {
		t.Fatal(err)
	}
	// Newer than the tombstone, inside its span: one in a table of its own
	// (flushed), one left in the memtable.
	if err := d.Put(key(5000), []byte("table")); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.Put(key(15000), []byte("memtable")); err != nil {
		t.Fatal(err)
	}

	var want [][]byte
	for i := range n {
		if i < 100 || i >= n-100 || i == 5000 || i == 15000 {
			want = append(want, key(i))
		}
	}
	for _, forward := range []bool{true, false} {
		before := fs.n.Load()
		it := d.NewIter(nil)
		var got [][]byte
		if forward {
			for ok := it.First(); ok; ok = it.Next() {
				got = append(got, slices.Clone(it.Key()))
			}
		} else {
			for ok := it.Last(); ok; ok = it.Prev() {
				got = append(got, slices.Clone(it.Key()))
			}
			slices.Reverse(got)
		}
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(got, want, func(a, b []byte) bool { return string(a) == string(b) }) {
			t.Fatalf("forward %t: iterator returned %d keys, want %d (%s ... %s)", forward, len(got), len(want), want[0], want[len(want)-1])
		}
		// 20,000 entries of 116 bytes fill some 570 blocks; a scan that
		// stepped over the deleted ones would read them all.
		if reads := fs.n.Load() - before; reads > 60 {
			t.Errorf("forward %t: a scan over a range-deleted span read %d blocks, want it to seek past them", forward, reads)
		}
	}

	it := snap.NewIter(nil)
	count := 0
	for ok := it.First(); ok; ok = it.Next() {
		count++
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if count != n {
		t.Fatalf("a snapshot from before the DeleteRange sees %d keys, want %d", count, n)
	}
}

// BenchmarkIterFirstAfterDeleteRange: First on a DB whose first 199,000 of
// 200,000 keys a range tombstone deletes (a raft log truncated from the
// front), the tables not yet compacted: a seek per table rather than a
// step per deleted entry.
func BenchmarkIterFirstAfterDeleteRange(b *testing.B) {
	d, err := Open("/db", &Options{FS: vfs.NewMem()})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	key := func(i int) []byte { return fmt.Appendf(nil, "k%08d", i) }
	const n = 200000
	val := make([]byte, 100)
	for i := range n {
		if err := d.Put(key(i), val); err != nil {
			b.Fatal(err)
		}
	}
	if err := d.Compact(); err != nil {
		b.Fatal(err)
	}
	if err := d.DeleteRange(key(0), key(n-1000)); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for range b.N {
		it := d.NewIter(nil)
		if !it.First() || string(it.Key()) != string(key(n-1000)) {
			b.Fatalf("First: %q, want %s", it.Key(), key(n-1000))
		}
		it.Close()
	}
}
