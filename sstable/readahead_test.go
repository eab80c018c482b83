package sstable

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/monbandb/monban/internal/base"
)

// sizedReads records the length of every read of a table's file.
type sizedReads struct {
	memFile
	sizes []int
}

func (f *sizedReads) ReadAt(p []byte, off int64) (int, error) {
	f.sizes = append(f.sizes, len(p))
	return f.memFile.ReadAt(p, off)
}

// readaheadTable is a table of 3,000 entries in some hundred 4 KiB data
// blocks, opened over a file that records its reads.
func readaheadTable(t *testing.T, c *Cache) (*Reader, *sizedReads, []entry) {
	t.Helper()
	entries := make([]entry, 3000)
	for i := range entries {
		entries[i] = entry{base.MakeInternalKey([]byte(fmt.Sprintf("key%06d", i)), base.SeqNum(i+1), base.KindSet),
			bytes.Repeat([]byte{byte(i)}, 100)}
	}
	data, props := buildTable(t, entries, WriterOptions{})
	if props.NumDataBlocks < 64 {
		t.Fatalf("%d data blocks, want a table of many", props.NumDataBlocks)
	}
	f := &sizedReads{memFile: memFile{data: data}}
	r, err := Open(f, ReaderOptions{Cache: c, FileNum: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	f.sizes = nil
	return r, f, entries
}

func checkEntry(t *testing.T, it *Iter, want entry) {
	t.Helper()
	if !it.Valid() || base.Compare(it.Key(), want.key) != 0 || !bytes.Equal(it.Value(), want.value) {
		t.Fatalf("iterator at %v (valid %v), want %v: %v", it.Key(), it.Valid(), want.key, it.Error())
	}
}

// TestIterReadsAhead: a forward scan of a whole table reads its data in a
// few windows, not a read per block, and returns every entry; with a
// block cache, the blocks the windows brought are cached, and a second
// scan reads nothing.
func TestIterReadsAhead(t *testing.T) {
	for _, c := range []*Cache{nil, NewCache(8 << 20)} {
		r, f, entries := readaheadTable(t, c)
		blocks := int(r.Properties().NumDataBlocks)
		it := r.NewIter(nil, nil)
		i := 0
		for ok := it.First(); ok; ok = it.Next() {
			checkEntry(t, it, entries[i])
			i++
		}
		if err := it.Close(); err != nil || i != len(entries) {
			t.Fatalf("scan of %d entries, want %d: %v", i, len(entries), err)
		}
		// Two blocks alone, a window of readaheadMin, then readaheadMax.
		want := 2 + 1 + int(r.Properties().DataBytes)/readaheadMax + 1
		if len(f.sizes) > want || len(f.sizes) >= blocks/4 {
			t.Fatalf("cache %v: a scan of %d blocks made %d reads %v, want at most %d", c != nil, blocks, len(f.sizes), f.sizes, want)
		}
		if c == nil {
			continue
		}
		f.sizes = nil
		it = r.NewIter(nil, nil)
		for ok := it.First(); ok; ok = it.Next() {
		}
		if err := it.Close(); err != nil || len(f.sizes) != 0 {
			t.Fatalf("a second scan made %d reads, want none from the cache: %v", len(f.sizes), err)
		}
	}
}

// TestIterReadsAloneOffARun: seeks that land on blocks apart, and a
// backward scan, read one block per read, never a window, and return what
// the table holds.
func TestIterReadsAloneOffARun(t *testing.T) {
	r, f, entries := readaheadTable(t, nil)
	it := r.NewIter(nil, nil)
	defer it.Close()
	for i := 0; i < len(entries); i += 97 {
		it.SeekGE(entries[i].key)
		checkEntry(t, it, entries[i])
	}
	i := len(entries) - 1
	for ok := it.Last(); ok; ok = it.Prev() {
		checkEntry(t, it, entries[i])
		i--
	}
	if i != -1 || it.Error() != nil {
		t.Fatalf("backward scan stopped at %d: %v", i, it.Error())
	}
	for _, n := range f.sizes {
		if n >= readaheadMin {
			t.Fatalf("a read of %d bytes off a forward run: %v", n, f.sizes)
		}
	}
}
