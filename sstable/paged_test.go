package sstable

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
	"github.com/monbandb/monban/vfs"
)

// pagedTable is a table with many index partitions and filter pages: 20,000
// keys key%06d (even numbers only), 64-byte blocks, 10 bits per key.
func pagedTable(t testing.TB) ([]entry, []byte) {
	var es []entry
	for i := range 20000 {
		k := fmt.Appendf(nil, "key%06d", 2*i)
		es = append(es, entry{base.MakeInternalKey(k, base.SeqNum(i+1), base.KindSet), fmt.Appendf(nil, "v%d", i)})
	}
	data, p := buildTable(t, es, WriterOptions{BlockSize: 64, BloomBitsPerKey: 10})
	if pages := p.FilterBytes / filterPageSize; pages < 4 || p.IndexBytes < 8*indexPartitionSize {
		t.Fatalf("filter %d bytes, index %d: the test needs several pages of each", p.FilterBytes, p.IndexBytes)
	}
	return es, data
}

func openPaged(t testing.TB, data []byte, c *Cache, b *MetaBudget) *Reader {
	t.Helper()
	r, err := Open(&memFile{data: data}, ReaderOptions{Cache: c, FileNum: 7, MetaBudget: b})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return r
}

// TestPagedOpenReadsTheTopOnly: a paged Open reads the footer, the
// properties and the top-level index, a small fraction of what a pinned
// Open reads; then each absent-key Get reads at most one filter page and
// no data block (its filter says no), and a present key one partition and
// one data block at most; a scan reads every entry. So with a block
// cache, and without one, where each page is read from the file whenever
// it is needed: the budget holds without a cache too (it pinned every
// table once).
func TestPagedOpenReadsTheTopOnly(t *testing.T) {
	for _, c := range []*Cache{cache.New(1 << 20), nil} {
		t.Run(fmt.Sprintf("cache=%t", c != nil), func(t *testing.T) { testPagedOpen(t, c) })
	}
}

func testPagedOpen(t *testing.T, c *Cache) {
	es, data := pagedTable(t)
	pinned := openPaged(t, data, cache.New(1<<20), nil)
	full := pinned.Stats().OpenBytesRead
	pinned.Close()

	b := NewMetaBudget(0, nil)
	r := openPaged(t, data, c, b)
	defer r.Close()
	if !r.Paged() || b.PagedTables() != 1 || b.Pinned() != 0 {
		t.Fatalf("Paged %t, budget counts %d paged tables and %d pinned bytes", r.Paged(), b.PagedTables(), b.Pinned())
	}
	if open := r.Stats().OpenBytesRead; open*10 > full {
		t.Fatalf("a paged Open read %d bytes, a pinned one %d: want under a tenth", open, full)
	}
	negatives := 0
	for i := range 2000 {
		k := fmt.Appendf(nil, "key%06d", 2*i+1)
		before := r.Stats()
		_, _, found, err := r.Get(k, filter.Hash(k), base.MaxSeqNum, &Lookup{})
		if err != nil || found {
			t.Fatalf("Get(%s) = %t, %v", k, found, err)
		}
		after := r.Stats()
		meta := after.MetaBlocksRead + after.MetaCacheHits - before.MetaBlocksRead - before.MetaCacheHits
		data := after.BlocksRead + after.CacheHits - before.BlocksRead - before.CacheHits
		if after.FilterNegatives > before.FilterNegatives {
			negatives++
			if meta != 1 || data != 0 {
				t.Fatalf("Get(%s), a filter negative, fetched %d meta and %d data blocks; want its filter page only", k, meta, data)
			}
		} else if meta > 2 || data > 1 {
			t.Fatalf("Get(%s) fetched %d meta and %d data blocks; want a filter page, a partition and a block at most", k, meta, data)
		}
	}
	if negatives < 1900 {
		t.Fatalf("%d filter negatives of 2000 absent keys", negatives)
	}
	for _, i := range []int{0, 1, 7777, len(es) - 1} {
		e := es[i]
		v, _, found, err := r.Get(e.key.UserKey, filter.Hash(e.key.UserKey), base.MaxSeqNum, &Lookup{})
		if err != nil || !found || !bytes.Equal(v, e.value) {
			t.Fatalf("Get(%s) = %q, %t, %v", e.key.UserKey, v, found, err)
		}
	}
	it := r.NewIter(nil, nil)
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if base.Compare(it.Key(), es[n].key) != 0 || !bytes.Equal(it.Value(), es[n].value) {
			t.Fatalf("scan: entry %d is %s, want %s", n, it.Key(), es[n].key)
		}
		n++
	}
	if err := it.Close(); err != nil || n != len(es) {
		t.Fatalf("scan: %d of %d entries, %v", n, len(es), err)
	}
}

// TestMetaBudgetPinsWhatFits: with room for one table's index and filter,
// the first Reader pins them and the second reads paged; closing the first
// returns its bytes, and the next Reader pins again.
func TestMetaBudgetPinsWhatFits(t *testing.T) {
	_, data := pagedTable(t)
	p := openTable(t, data, nil).Properties()
	need := int64(p.IndexBytes + p.FilterBytes)
	b := NewMetaBudget(need, nil)
	c := cache.New(1 << 20)
	first := openPaged(t, data, c, b)
	second := openPaged(t, data, c, b)
	if first.Paged() || !second.Paged() || b.Pinned() != need {
		t.Fatalf("first paged %t, second paged %t, %d bytes pinned of %d", first.Paged(), second.Paged(), b.Pinned(), need)
	}
	first.Close()
	second.Close()
	if b.Pinned() != 0 || b.PagedTables() != 0 {
		t.Fatalf("after Close: %d bytes pinned, %d paged tables", b.Pinned(), b.PagedTables())
	}
	third := openPaged(t, data, c, b)
	defer third.Close()
	if third.Paged() {
		t.Fatal("a Reader with the budget free again reads paged")
	}
}

// TestPagedFilterPageCorruption: a flipped bit in one filter page is
// reported by the first Get whose probe lands on that page, as corruption,
// and Gets whose probes land elsewhere still answer.
func TestPagedFilterPageCorruption(t *testing.T) {
	es, data := pagedTable(t)
	r := openTable(t, data, nil)
	shape := r.filter.Shape()
	r.Close()
	ft, err := decodeFooter(data[len(data)-footerLen:], uint64(len(data))-footerLen)
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(data)
	bad[ft.filter.offset+2*filterPageSize+100] ^= 0x10
	p := openPaged(t, bad, cache.New(1<<20), NewMetaBudget(0, nil))
	defer p.Close()
	hitBad := 0
	for _, e := range es {
		k := e.key.UserKey
		_, _, found, err := p.Get(k, filter.Hash(k), base.MaxSeqNum, &Lookup{})
		onBadPage := shape.LineOffset(filter.Hash(k))/filterPageSize == 2
		switch {
		case onBadPage && !errors.Is(err, base.ErrCorruption):
			t.Fatalf("Get(%s) on the damaged page: found %t, %v; want ErrCorruption", k, found, err)
		case onBadPage:
			hitBad++
		case err != nil || !found:
			t.Fatalf("Get(%s) elsewhere: found %t, %v", k, found, err)
		}
	}
	if hitBad == 0 {
		t.Fatal("no key's probe landed on the damaged page")
	}
}

// TestVersion1TableStillReads opens a table written by format version 1
// (testdata/v1.sst: one index block, no filter page properties; 1,000 keys
// key%05d of even numbers, value value%05d), pinned whatever the budget.
func TestVersion1TableStillReads(t *testing.T) {
	data, err := os.ReadFile("testdata/v1.sst")
	if err != nil {
		t.Fatal(err)
	}
	b := NewMetaBudget(0, nil)
	for _, budget := range []*MetaBudget{nil, b} {
		r := openPaged(t, data, cache.New(1<<20), budget)
		if r.Paged() || len(r.ix.parts) != 1 || r.Properties().TableID != 0x5eed {
			t.Fatalf("budget %v: paged %t, %d partitions, id %#x", budget != nil, r.Paged(), len(r.ix.parts), r.Properties().TableID)
		}
		if budget != nil && budget.Pinned() != int64(r.Properties().IndexBytes+r.Properties().FilterBytes) {
			t.Fatalf("a version 1 table pins %d bytes of the budget", budget.Pinned())
		}
		for i := range 2000 {
			k := fmt.Appendf(nil, "key%05d", i)
			v, _, found, err := r.Get(k, filter.Hash(k), base.MaxSeqNum, &Lookup{})
			if err != nil || found != (i%2 == 0) || found && string(v) != fmt.Sprintf("value%05d", i) {
				t.Fatalf("Get(%s) = %q, %t, %v", k, v, found, err)
			}
		}
		n := 0
		it := r.NewIter(nil, nil)
		for ok := it.First(); ok; ok = it.Next() {
			n++
		}
		if err := it.Close(); err != nil || n != 1000 {
			t.Fatalf("scan: %d entries, %v", n, err)
		}
		r.Close()
	}
	if b.Pinned() != 0 {
		t.Fatalf("%d bytes still pinned after Close", b.Pinned())
	}
}

// TestMetaBudgetKeepsRoomForHighPriority: low-priority tables (lsm: the
// last level's) pin only within what the other open tables leave, paged
// ones included, so a low table opened after a high one was paged for lack
// of room does not take the room that frees.
func TestMetaBudgetKeepsRoomForHighPriority(t *testing.T) {
	_, data := pagedTable(t)
	p := openTable(t, data, nil).Properties()
	n := int64(p.IndexBytes + p.FilterBytes)
	low := func(fileNum uint64) (bool, int) { return fileNum >= 100, 0 }
	b := NewMetaBudget(2*n, low)
	c := cache.New(1 << 20)
	open := func(fileNum uint64) *Reader {
		r, err := Open(&memFile{data: data}, ReaderOptions{Cache: c, FileNum: fileNum, MetaBudget: b})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	x, y := open(100), open(101) // low, with nothing else open: both pin
	a := open(1)                 // high, no room left: paged
	if x.Paged() || y.Paged() || !a.Paged() {
		t.Fatalf("paged: low %t %t, high %t; want false false true", x.Paged(), y.Paged(), a.Paged())
	}
	x.Close()
	z := open(102) // low: the room x left is the open high table's
	if !z.Paged() {
		t.Fatal("a low table took the room an open high table needs")
	}
	h := open(2) // high: pins in it
	if h.Paged() {
		t.Fatal("a high table found no room")
	}
	for _, r := range []*Reader{y, a, z, h} {
		r.Close()
	}
	if b.Pinned() != 0 || b.PagedTables() != 0 {
		t.Fatalf("after Close: %d bytes pinned, %d paged tables", b.Pinned(), b.PagedTables())
	}
}

// TestMetaBudgetFollowsTheMemory: a pinned Reader's bytes stay counted for
// as long as their memory lives — a filter kept past Close (what lsm keeps
// for the proofs) keeps its share until its holder lets go.
func TestMetaBudgetFollowsTheMemory(t *testing.T) {
	_, data := pagedTable(t)
	b := NewMetaBudget(1<<30, nil)
	r := openPaged(t, data, cache.New(1<<20), b)
	p := r.Properties()
	if b.Pinned() != int64(p.IndexBytes+p.FilterBytes) {
		t.Fatalf("%d bytes pinned, want the index's and filter's %d", b.Pinned(), p.IndexBytes+p.FilterBytes)
	}
	kept := r.filter.Ref()
	filterBytes := int64(p.FilterBytes)
	r.Close()
	if b.Pinned() != filterBytes {
		t.Fatalf("after Close with the filter kept: %d bytes pinned, want the filter's %d", b.Pinned(), filterBytes)
	}
	kept.Release()
	if b.Pinned() != 0 {
		t.Fatalf("after the filter's release: %d bytes pinned", b.Pinned())
	}
}

// TestLowTablePinsItsIndexFirst: a low table whose index and filter do not
// fit together pins its index alone when that fits, pages its filter, and
// is counted apart (PagedFilterTables); a high table in its place pages
// both. Its lookups read filter pages and no index partition, and a
// reopen from the meta it leaves in the block cache keeps the same
// shape.
func TestLowTablePinsItsIndexFirst(t *testing.T) {
	es, data := pagedTable(t)
	p := *openTable(t, data, nil).Properties()
	limit := int64(p.IndexBytes + p.FilterBytes/2)
	low := NewMetaBudget(limit, func(uint64) (bool, int) { return true, 1 })
	r := openPaged(t, data, cache.New(1<<20), low)
	if r.Paged() || !r.FilterPaged() || low.Pinned() != int64(p.IndexBytes) || low.PagedTables() != 0 || low.PagedFilterTables() != 1 {
		t.Fatalf("low: paged %t, filter paged %t, %d bytes pinned of index %d, %d paged, %d filter-paged",
			r.Paged(), r.FilterPaged(), low.Pinned(), p.IndexBytes, low.PagedTables(), low.PagedFilterTables())
	}
	for _, e := range es {
		uk := e.key.UserKey
		if _, _, found, err := r.Get(uk, filter.Hash(uk), base.MaxSeqNum, &Lookup{}); err != nil || !found {
			t.Fatalf("Get(%s): %t, %v", uk, found, err)
		}
	}
	if st, pages := r.Stats(), p.FilterBytes/filterPageSize+1; st.MetaBlocksRead > pages {
		t.Fatalf("%d meta blocks read: more than the filter's %d pages", st.MetaBlocksRead, pages)
	}
	r.Close()
	if low.Pinned() != 0 || low.PagedFilterTables() != 0 {
		t.Fatalf("after Close: %d bytes pinned, %d filter-paged tables", low.Pinned(), low.PagedFilterTables())
	}

	high := NewMetaBudget(limit, nil)
	r = openPaged(t, data, cache.New(1<<20), high)
	if !r.Paged() || !r.FilterPaged() || high.PagedTables() != 1 || high.PagedFilterTables() != 0 {
		t.Fatalf("high: paged %t, filter paged %t, %d paged, %d filter-paged", r.Paged(), r.FilterPaged(), high.PagedTables(), high.PagedFilterTables())
	}
	r.Close()

	// Through a table cache of one: table 1 pins its index, table 2 finds
	// no room, and table 1 reopens from its stashed meta as it was.
	fs := vfs.NewMem()
	if err := fs.MkdirAll("db"); err != nil {
		t.Fatal(err)
	}
	refs := map[uint64]TableRef{1: writeTableFile(t, fs, "db", 1, es), 2: writeTableFile(t, fs, "db", 2, es)}
	bc := cache.New(8 << 20)
	probe := NewTableCache(fs, "db", 1, ReaderOptions{})
	pr, release, err := probe.Get(refs[1])
	if err != nil {
		t.Fatal(err)
	}
	q := *pr.Properties()
	release()
	probe.Close()
	low = NewMetaBudget(int64(q.IndexBytes+q.FilterBytes/2), func(uint64) (bool, int) { return true, 1 })
	tc := NewTableCache(fs, "db", 1, ReaderOptions{Cache: bc, MetaBudget: low})
	for _, n := range []uint64{1, 2, 1} {
		r, release, err := tc.Get(refs[n])
		if err != nil {
			t.Fatal(err)
		}
		uk := es[len(es)/2].key.UserKey
		if _, _, found, err := r.Get(uk, filter.Hash(uk), base.MaxSeqNum, &Lookup{}); err != nil || !found {
			t.Fatalf("table %d: Get(%s): %t, %v", n, uk, found, err)
		}
		if n == 1 && (r.Paged() || !r.FilterPaged()) {
			t.Fatalf("table 1: paged %t, filter paged %t", r.Paged(), r.FilterPaged())
		}
		release()
	}
	if err := tc.Close(); err != nil {
		t.Fatal(err)
	}
	bc.Close()
	if low.Pinned() != 0 || low.PagedTables() != 0 || low.PagedFilterTables() != 0 {
		t.Fatalf("after Close: %d bytes pinned, %d paged, %d filter-paged", low.Pinned(), low.PagedTables(), low.PagedFilterTables())
	}
}

// TestLowTablesPinEveryIndexBeforeAFilter: low tables opened one after
// another, with room for every index and half a filter, all pin their
// index. First come, first served, the first would pin both and the last
// neither, each of its hits then reading an index partition.
func TestLowTablesPinEveryIndexBeforeAFilter(t *testing.T) {
	_, data := pagedTable(t)
	p := *openTable(t, data, nil).Properties()
	const tables = 4
	limit := int64(tables*p.IndexBytes + p.FilterBytes/2)
	b := NewMetaBudget(limit, func(uint64) (bool, int) { return true, tables })
	c := cache.New(1 << 20)
	var readers []*Reader
	for range tables {
		r := openPaged(t, data, c, b)
		readers = append(readers, r)
		if r.Paged() {
			t.Fatalf("low table %d of %d pages its index: %d of %d bytes pinned", len(readers), tables, b.Pinned(), limit)
		}
	}
	if b.Pinned() > limit || b.PagedFilterTables() != tables {
		t.Fatalf("%d bytes pinned of %d, %d tables page their filter", b.Pinned(), limit, b.PagedFilterTables())
	}
	for _, r := range readers {
		r.Close()
	}
	if b.Pinned() != 0 || b.PagedFilterTables() != 0 {
		t.Fatalf("after Close: %d bytes pinned, %d filter-paged", b.Pinned(), b.PagedFilterTables())
	}
}
