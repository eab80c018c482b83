package sstable

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
)

// randRangeEntries draws up to n entries over 8-byte big-endian integer
// keys (dense, with gaps) or, when mixed, over keys of 0 to 12 bytes that
// often share their first 8; sets and deletions, some with several
// versions; sorted and unique.
func randRangeEntries(seed uint64, n int, mixed bool) []entry {
	rng := newRand(seed)
	var es []entry
	x := rng.Uint64N(1 << 20)
	for range rng.IntN(n) + 1 {
		var uk []byte
		if mixed && rng.IntN(2) == 0 {
			uk = bytes.Repeat([]byte{byte(rng.IntN(3))}, rng.IntN(13))
		} else {
			x += 1 + rng.Uint64N(200)
			uk = binary.BigEndian.AppendUint64(nil, x)
		}
		for v := range rng.IntN(2) + 1 {
			kind := base.KindSet
			if rng.IntN(4) == 0 {
				kind = base.KindDelete
			}
			es = append(es, entry{base.MakeInternalKey(uk, base.SeqNum(v+1), kind), []byte("v")})
		}
	}
	slices.SortFunc(es, func(a, b entry) int { return base.Compare(a.key, b.key) })
	return slices.CompactFunc(es, func(a, b entry) bool { return base.Compare(a.key, b.key) == 0 })
}

// openPinnedOrPaged opens data through a block cache, paged (a budget
// of 0) or pinned, and checks that it is.
func openPinnedOrPaged(t *testing.T, data []byte, paged bool) *Reader {
	t.Helper()
	var budget *MetaBudget
	if paged {
		budget = NewMetaBudget(0, nil)
	}
	r := openPaged(t, data, cache.New(1<<20), budget)
	if r.Paged() != paged {
		t.Fatalf("paged %t, want %t", r.Paged(), paged)
	}
	return r
}

// TestRangeFilterModel checks MayContainRange against the table's keys,
// pinned and paged: a range holding a key of any kind (a deletion too) is
// never ruled out, empty ranges of 32 integers mostly are, and the
// properties and counters read back.
func TestRangeFilterModel(t *testing.T) {
	seeds := 40
	if testing.Short() || raceEnabled {
		seeds = 10
	}
	for seed := range uint64(seeds) {
		rng := newRand(seed)
		mixed := seed%3 == 0
		es := randRangeEntries(seed, []int{1, 300, 5000}[rng.IntN(3)], mixed)
		opts := filter.GrafiteOptions{BitsPerKey: []int{16, 10, 3}[rng.IntN(3)], RangeLen: []uint64{0, 1, 32, 1000}[rng.IntN(4)]}
		data, p := buildTable(t, es, WriterOptions{BlockSize: 512, BloomBitsPerKey: 10, RangeFilter: opts, TableID: rng.Uint64()})
		wantLen := opts.RangeLen
		if wantLen == 0 {
			wantLen = filter.DefaultGrafiteRangeLen
		}
		if p.RangeFilterBits != uint64(opts.BitsPerKey) || p.RangeFilterLen != wantLen || p.RangeFilterBytes == 0 {
			t.Fatalf("seed %d: properties %d bits, length %d; want %d, %d", seed, p.RangeFilterBits, p.RangeFilterLen, opts.BitsPerKey, wantLen)
		}
		keys := make([][]byte, len(es))
		for i, e := range es {
			keys[i] = e.key.UserKey
		}
		keys = slices.CompactFunc(keys, bytes.Equal)
		for _, paged := range []bool{false, true} {
			r := openPinnedOrPaged(t, data, paged)
			if r.Properties().RangeFilterLen != wantLen || r.Properties().RangeFilterBytes != p.RangeFilterBytes {
				t.Fatalf("seed %d: read range length %d, %d bytes", seed, r.Properties().RangeFilterLen, r.Properties().RangeFilterBytes)
			}
			asked, no, empty := 0, 0, 0
			for range 3000 {
				k := keys[rng.IntN(len(keys))]
				lo := binary.BigEndian.Uint64(append(slices.Clone(k), make([]byte, 8)...)) - rng.Uint64N(40)
				lower := binary.BigEndian.AppendUint64(nil, lo)
				upper := binary.BigEndian.AppendUint64(nil, lo+1+rng.Uint64N(64))
				if rng.IntN(8) == 0 {
					lower, upper = k, append(slices.Clone(k), 0) // exactly k
				}
				if bytes.Compare(lower, upper) >= 0 {
					continue
				}
				i, _ := slices.BinarySearchFunc(keys, lower, bytes.Compare)
				holds := i < len(keys) && bytes.Compare(keys[i], upper) < 0
				got := r.MayContainRange(lower, upper)
				asked++
				if holds && !got {
					t.Fatalf("seed %d (paged %t, %+v): [%x, %x) holds %x, ruled out", seed, paged, opts, lower, upper, keys[i])
				}
				if !holds {
					empty++
				}
				if !got {
					no++
				}
			}
			// Ranges of up to 64 integers: at L = 1 they pass the piece cap
			// and answer maybe.
			if !mixed && opts.BitsPerKey == 16 && opts.RangeLen != 1 && len(keys) > 50 && float64(no) < 0.9*float64(empty) {
				t.Fatalf("seed %d: %d of %d empty ranges ruled out at 16 bits per key", seed, no, empty)
			}
			if s := r.Stats(); s.RangeProbes != uint64(asked) || s.RangeNegatives != uint64(no) {
				t.Fatalf("seed %d: stats %d probes, %d negatives; want %d, %d", seed, s.RangeProbes, s.RangeNegatives, asked, no)
			}
			r.Close()
		}
	}
}

// TestRangeFilterNeverSkipsOtherTables: a table without a range-filter
// block is never ruled out: built without one, of format version 1
// (testdata/v1.sst, before the block existed), or read with IgnoreFilter.
func TestRangeFilterNeverSkipsOtherTables(t *testing.T) {
	es := randRangeEntries(1, 2000, false)
	v1, err := os.ReadFile("testdata/v1.sst")
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := buildTable(t, es, WriterOptions{BloomBitsPerKey: 10})
	ranged, _ := buildTable(t, es, WriterOptions{RangeFilter: filter.GrafiteOptions{BitsPerKey: 16}})
	for _, tc := range []struct {
		name   string
		data   []byte
		ignore bool
	}{{"no range filter", plain, false}, {"version 1", v1, false}, {"filter ignored", ranged, true}} {
		r, err := Open(&memFile{data: tc.data}, ReaderOptions{IgnoreFilter: tc.ignore})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for i := range uint64(1000) {
			if !r.MayContainRange(binary.BigEndian.AppendUint64(nil, i<<40), binary.BigEndian.AppendUint64(nil, i<<40+32)) {
				t.Fatalf("%s: a range ruled out", tc.name)
			}
		}
		if s := r.Stats(); s.RangeProbes != 0 {
			t.Fatalf("%s: %d range probes counted, none consulted a filter", tc.name, s.RangeProbes)
		}
		r.Close()
	}
}

// TestRangeFilterSurvivesWithFile: a reader made by WithFile (what a
// compaction reads with) asks the same filter.
func TestRangeFilterSurvivesWithFile(t *testing.T) {
	es := randRangeEntries(2, 500, false)
	data, _ := buildTable(t, es, WriterOptions{RangeFilter: filter.GrafiteOptions{BitsPerKey: 16}})
	r := openTable(t, data, nil)
	defer r.Close()
	v, err := r.WithFile(&memFile{data: data})
	if err != nil {
		t.Fatal(err)
	}
	defer v.Close()
	last := es[len(es)-1].key.UserKey
	past := binary.BigEndian.AppendUint64(nil, binary.BigEndian.Uint64(last)+1000)
	beyond := binary.BigEndian.AppendUint64(nil, binary.BigEndian.Uint64(last)+1032)
	if r.MayContainRange(past, beyond) || v.MayContainRange(past, beyond) {
		t.Fatalf("a range past every key is not ruled out")
	}
}

// TestRangeFilterCorrupt: a range-filter block whose bytes or properties
// are wrong fails Open with ErrCorruption, never a panic or a filter
// that rules out a key.
func TestRangeFilterCorrupt(t *testing.T) {
	es := randRangeEntries(3, 300, false)
	data, p := buildTable(t, es, WriterOptions{RangeFilter: filter.GrafiteOptions{BitsPerKey: 12}})
	h := p.rangeFilterBlock
	end := h.offset + h.length // the trailer's type byte, then its CRC
	for _, c := range []struct {
		name string
		edit func(b []byte)
	}{
		{"tag", func(b []byte) { b[h.offset] = 'X' }},
		{"codes", func(b []byte) { b[h.offset+4]++ }},
		{"sample", func(b []byte) { b[end-1]++ }},
	} {
		b := slices.Clone(data)
		c.edit(b)
		putLE32(b[end+1:], checksum(b[h.offset:end], b[end])^p.seal(h.offset))
		if _, err := Open(&memFile{data: b}, ReaderOptions{}); !errors.Is(err, base.ErrCorruption) || !errors.Is(err, filter.ErrCorrupt) {
			t.Errorf("%s: Open: %v, want ErrCorruption wrapping filter.ErrCorrupt", c.name, err)
		}
	}
	b := slices.Clone(data)
	b[h.offset+1] ^= 1 // the block's checksum catches it
	if _, err := Open(&memFile{data: b}, ReaderOptions{}); !errors.Is(err, base.ErrCorruption) {
		t.Errorf("flipped bit: Open: %v", err)
	}
	for _, q := range []Properties{
		{RangeFilterBits: 0, RangeFilterLen: 32, rangeFilterBlock: h},  // a block of no bits
		{RangeFilterBits: 41, RangeFilterLen: 32, rangeFilterBlock: h}, // beyond the builder's limit
		{RangeFilterBits: 12, RangeFilterLen: 0, rangeFilterBlock: h},  // no length
	} {
		q.NumDataBlocks, q.IndexBytes = 1, 1
		if _, err := decodeProperties(q.encode()); !errors.Is(err, base.ErrCorruption) {
			t.Errorf("properties %+v decoded: %v", q, err)
		}
	}
}

// BenchmarkWriteRange is BenchmarkWrite (no snappy) over 8-byte
// big-endian integer keys, without a range filter and with one of 16 bits
// per key: the difference in cpu-ns/op over benchKeys is the range
// filter's CPU per key in the writer.
func BenchmarkWriteRange(b *testing.B) {
	es := benchEntries()
	for i := range es {
		es[i].key.UserKey = binary.BigEndian.AppendUint64(nil, uint64(2*i))
	}
	for _, tc := range []struct {
		name string
		rf   filter.GrafiteOptions
	}{{"none", filter.GrafiteOptions{}}, {"range-16", filter.GrafiteOptions{BitsPerKey: 16}}} {
		b.Run(tc.name, func(b *testing.B) {
			benchWrite(b, es, WriterOptions{BloomBitsPerKey: 10, RangeFilter: tc.rf})
		})
	}
}
