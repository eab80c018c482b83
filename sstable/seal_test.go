package sstable

import (
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
)

// sealTwin is one of two tables of the same shape: the same number of
// keys, of the same lengths, so that every block of one has the length
// and offset of the other's; only the letter the keys start with differs.
func sealTwin(t *testing.T, letter byte, id uint64) ([]entry, []byte, Properties) {
	t.Helper()
	var es []entry
	for i := range 400 {
		es = append(es, entry{base.MakeInternalKey(fmt.Appendf(nil, "%c%05d", letter, i), base.SeqNum(i+1), base.KindSet), fmt.Appendf(nil, "%c-value-%05d", letter, i)})
	}
	data, p := buildTable(t, es, WriterOptions{BlockSize: 256, BloomBitsPerKey: 10, KeyHashes: true, TableID: id,
		RangeFilter: filter.GrafiteOptions{BitsPerKey: 12}})
	return es, data, p
}

// TestBlocksAreSealedToTheirTable: a block copied from another table into
// the same place (a filter, data blocks, index partitions, the top-level
// index, the range filter, the key hashes), or moved within its own
// table, has a valid CRC of its bytes; a version 3 table served it as its
// own and answered for the other table's keys (a present key "not found").
// Sealed, every such block fails its check: Open or the read that meets
// it reports corruption, and whatever is answered is the table's own.
func TestBlocksAreSealedToTheirTable(t *testing.T) {
	es, a, pa := sealTwin(t, 'a', 1)
	_, b, pb := sealTwin(t, 'b', 2)
	if len(a) != len(b) || pa.IndexBytes != pb.IndexBytes || pa.FilterBytes != pb.FilterBytes || pa.keyHashBlock != pb.keyHashBlock {
		t.Fatalf("the twins differ in shape: %d and %d bytes", len(a), len(b))
	}
	ft, err := decodeFooter(a[len(a)-footerLen:], uint64(len(a)-footerLen))
	if err != nil {
		t.Fatal(err)
	}
	region := func(lo, hi uint64) [2]uint64 { return [2]uint64{lo, hi} }
	swaps := map[string][2]uint64{
		"data blocks":      region(0, ft.filter.offset),
		"filter":           region(ft.filter.offset, ft.filter.end()),
		"index partitions": region(ft.filter.end(), ft.index.offset),
		"top-level index":  region(ft.index.offset, ft.index.end()),
		"range filter":     region(pa.rangeFilterBlock.offset, pa.rangeFilterBlock.end()),
		"key hashes":       region(pa.keyHashBlock.offset, pa.keyHashBlock.end()),
	}
	// Within one table: the first two data blocks, each moved to where
	// the other was (their lengths match: same-length entries, 256-byte
	// blocks).
	moved := slices.Clone(a)
	r := openTable(t, a, nil)
	h0, h1 := r.ix.parts[0].handle(0), r.ix.parts[0].handle(1)
	r.Close()
	if h0.length != h1.length {
		t.Fatalf("data blocks 0 and 1 are %d and %d bytes", h0.length, h1.length)
	}
	copy(moved[h0.offset:], a[h1.offset:h1.end()])
	copy(moved[h1.offset:], a[h0.offset:h0.end()])

	cases := map[string][]byte{"data blocks 0 and 1 swapped": moved}
	for name, s := range swaps {
		bad := slices.Clone(a)
		copy(bad[s[0]:s[1]], b[s[0]:s[1]])
		cases["the other table's "+name] = bad
	}
	for name, data := range cases {
		for _, budget := range []*MetaBudget{nil, NewMetaBudget(0, nil)} {
			checkServesOnlyItsOwn(t, fmt.Sprintf("%s, paged %t", name, budget != nil), data, es, budget)
		}
	}
}

// checkServesOnlyItsOwn opens data expecting table id 1 and reads every
// key of es and a scan: each answer must be es's or an error wrapping
// ErrCorruption, and at least one error must be seen.
func checkServesOnlyItsOwn(t *testing.T, name string, data []byte, es []entry, budget *MetaBudget) {
	t.Helper()
	r, err := Open(&memFile{data: data}, ReaderOptions{Cache: cache.New(1 << 20), FileNum: 7, MetaBudget: budget, ExpectTableID: 1})
	if err != nil {
		if !errors.Is(err, base.ErrCorruption) {
			t.Errorf("%s: Open: %v does not wrap ErrCorruption", name, err)
		}
		return
	}
	defer r.Close()
	caught := false
	for _, e := range es {
		k := e.key.UserKey
		v, _, found, err := r.Get(k, filter.Hash(k), base.MaxSeqNum, &Lookup{})
		switch {
		case err != nil && !errors.Is(err, base.ErrCorruption):
			t.Errorf("%s: Get(%s): %v does not wrap ErrCorruption", name, k, err)
			return
		case err != nil:
			caught = true
		case !found || string(v) != string(e.value):
			t.Errorf("%s: Get(%s) = %q, %t: another table's answer", name, k, v, found)
			return
		}
	}
	it := r.NewIter(nil, nil)
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if n >= len(es) || base.Compare(it.Key(), es[n].key) != 0 {
			t.Errorf("%s: scan yields %v at %d", name, it.Key(), n)
			return
		}
		n++
	}
	if err := it.Close(); err != nil {
		if !errors.Is(err, base.ErrCorruption) {
			t.Errorf("%s: scan: %v does not wrap ErrCorruption", name, err)
			return
		}
		caught = true
	}
	if hs, err := r.AppendKeyHashes(nil); err != nil {
		caught = caught || errors.Is(err, base.ErrCorruption)
	} else if want := keyHashModel(es); !slices.Equal(hs, want) {
		t.Errorf("%s: the key hashes are another table's", name)
		return
	}
	for _, e := range es[:50] {
		k := e.key.UserKey
		if !r.MayContainRange(k, append(slices.Clone(k), 0)) {
			t.Errorf("%s: the range filter rules out %s, which the table holds", name, k)
			return
		}
	}
	if !caught {
		t.Errorf("%s: served without an error", name)
	}
}
