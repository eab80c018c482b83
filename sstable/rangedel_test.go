package sstable

import (
	"errors"
	"fmt"
	"testing"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
	"github.com/monbandb/monban/internal/keyspan"
)

func testSpans() keyspan.Spans {
	return keyspan.Fragment([]keyspan.Tombstone{
		{Start: []byte("a"), End: []byte("c"), Seq: 5},
		{Start: []byte("b"), End: []byte("d"), Seq: 7},
	})
}

func tableWithSpans(t *testing.T, entries []entry, spans keyspan.Spans) ([]byte, Properties) {
	t.Helper()
	f := &memFile{}
	w := NewWriter(f, WriterOptions{BloomBitsPerKey: 10})
	for _, e := range entries {
		if err := w.Add(e.key, e.value); err != nil {
			t.Fatal(err)
		}
	}
	w.SetRangeDels(spans)
	p, err := w.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return f.data, p
}

// TestRangeDelsRoundTrip: the spans a Writer is given come back from the
// Reader, pinned or paged, and through WithFile; the properties count
// them and include their sequence numbers, also in a table of spans only.
func TestRangeDelsRoundTrip(t *testing.T) {
	spans := testSpans()
	for _, entries := range [][]entry{nil, {{key: base.MakeInternalKey([]byte("b"), 9, base.KindSet), value: []byte("v")}}} {
		data, p := tableWithSpans(t, entries, spans)
		if p.RangeDelSpans != uint64(spans.Len()) || p.SmallestSeq != 5 || p.LargestSeq != max(7, p.LargestSeq) {
			t.Fatalf("%d entries: properties %+v", len(entries), p)
		}
		for _, budget := range []*MetaBudget{nil, NewMetaBudget(1, nil)} {
			r, err := Open(&memFile{data: data}, ReaderOptions{Cache: cache.New(1 << 20), FileNum: 7, MetaBudget: budget})
			if err != nil {
				t.Fatal(err)
			}
			if got, want := fmt.Sprint(collect(r.RangeDels())), fmt.Sprint(collect(spans)); got != want {
				t.Fatalf("spans %s, want %s", got, want)
			}
			if r.Properties().RangeDelSpans != uint64(spans.Len()) {
				t.Fatalf("reopened properties count %d spans", r.Properties().RangeDelSpans)
			}
			v, err := r.WithFile(&memFile{data: data})
			if err != nil {
				t.Fatal(err)
			}
			if v.RangeDels().Len() != spans.Len() {
				t.Fatal("WithFile lost the spans")
			}
			v.Close()
			r.Close()
		}
	}
}

// TestNoRangeDels: a table written without spans has no range-deletion
// block and no rangedel property, so its bytes are those of a table
// written before the block existed.
func TestNoRangeDels(t *testing.T) {
	data, p := tableWithSpans(t, []entry{{key: base.MakeInternalKey([]byte("a"), 1, base.KindSet)}}, keyspan.Spans{})
	r := openTable(t, data, nil)
	defer r.Close()
	if p.RangeDelSpans != 0 || r.RangeDels().Len() != 0 || p.rangeDelBlock != (handle{}) {
		t.Fatalf("properties %+v, %d spans", p, r.RangeDels().Len())
	}
}

// TestRangeDelsCorrupt: a flipped byte of the range-deletion block fails
// Open with ErrCorruption (the block's CRC), never a panic.
func TestRangeDelsCorrupt(t *testing.T) {
	data, p := tableWithSpans(t, nil, testSpans())
	h := p.rangeDelBlock
	for off := h.offset; off < h.end(); off++ {
		bad := append([]byte(nil), data...)
		bad[off] ^= 0x10
		if _, err := Open(&memFile{data: bad}, ReaderOptions{FileNum: 7}); !errors.Is(err, base.ErrCorruption) {
			t.Fatalf("byte %d flipped: Open error %v, want corruption", off, err)
		}
	}
}

func collect(s keyspan.Spans) []keyspan.Span {
	var out []keyspan.Span
	for sp := range s.All() {
		out = append(out, sp)
	}
	return out
}
