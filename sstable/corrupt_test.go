package sstable

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
)

// corruptTable is a small table with every region present: several data
// blocks (some snappy-compressed), a filter, an index, properties (with a
// table id), footer.
func corruptTable(t testing.TB) ([]entry, []byte) {
	var es []entry
	for i := 0; i < 60; i++ {
		uk := []byte{'k', byte('a' + i/26), byte('a' + i%26)}
		es = append(es, entry{base.MakeInternalKey(uk, base.SeqNum(100-i), base.KindSet), bytes.Repeat(uk, 8)})
		if i%7 == 0 {
			es = append(es, entry{base.MakeInternalKey(uk, base.SeqNum(1), base.KindDelete), nil})
		}
	}
	data, _ := buildTable(t, es, WriterOptions{BlockSize: 256, BloomBitsPerKey: 10, Compression: true, BlockRestartInterval: 4, TableID: 0x8a1c2b3d4e5f6071})
	return es, data
}

// readAll opens data and reads everything back by Get and by both scans,
// pinned, and again paged (MetaBudget) through a block cache: its index
// partitions and filter pages read on demand, each checked by its own
// checksum. It fails the test on wrong data and returns the first error
// seen (nil if every read succeeded with correct data).
func readAll(t *testing.T, es []entry, data []byte, what string) error {
	t.Helper()
	if err := readAllWith(t, es, data, what, ReaderOptions{FileNum: 12}); err != nil {
		return err
	}
	return readAllWith(t, es, data, what+" (paged)", ReaderOptions{FileNum: 12, Cache: cache.New(1 << 20), MetaBudget: NewMetaBudget(0, nil)})
}

func readAllWith(t *testing.T, es []entry, data []byte, what string, opts ReaderOptions) error {
	t.Helper()
	r, err := Open(&memFile{data: data}, opts)
	if err != nil {
		if !errors.Is(err, base.ErrCorruption) {
			t.Fatalf("%s: Open error %v does not wrap ErrCorruption", what, err)
		}
		if !bytes.Contains([]byte(err.Error()), []byte("000012.sst")) {
			t.Fatalf("%s: Open error %q does not name the file", what, err)
		}
		return err
	}
	defer r.Close()
	if r.Paged() != (opts.MetaBudget != nil) {
		t.Fatalf("%s: Paged() = %t", what, r.Paged())
	}
	var first error
	note := func(err error) {
		if err != nil && first == nil {
			if !errors.Is(err, base.ErrCorruption) {
				t.Fatalf("%s: read error %v does not wrap ErrCorruption", what, err)
			}
			first = err
		}
	}
	for _, e := range es {
		for _, seq := range []base.SeqNum{e.key.Seq(), base.MaxSeqNum} {
			v, k, found, err := r.Get(e.key.UserKey, filter.Hash(e.key.UserKey), seq, &Lookup{})
			if err != nil {
				note(err)
				continue
			}
			wv, wk, wf := modelGet(es, e.key.UserKey, seq)
			if found != wf || k != wk || !bytes.Equal(v, wv) {
				t.Fatalf("%s: Get(%q, %d) = %q %v %v, want %q %v %v: wrong data accepted", what, e.key.UserKey, seq, v, k, found, wv, wk, wf)
			}
		}
	}
	it := r.NewIter(nil, nil)
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		if i >= len(es) || base.Compare(it.Key(), es[i].key) != 0 || !bytes.Equal(it.Value(), es[i].value) {
			t.Fatalf("%s: forward scan entry %d is %v, wrong data accepted", what, i, it.Key())
		}
		i++
	}
	note(it.Error())
	if it.Error() == nil && i != len(es) {
		t.Fatalf("%s: forward scan saw %d of %d entries without an error", what, i, len(es))
	}
	i = len(es) - 1
	for ok := it.Last(); ok; ok = it.Prev() {
		if i < 0 || base.Compare(it.Key(), es[i].key) != 0 || !bytes.Equal(it.Value(), es[i].value) {
			t.Fatalf("%s: backward scan entry %d is %v, wrong data accepted", what, i, it.Key())
		}
		i--
	}
	note(it.Close())
	return first
}

// TestCorruptionBitFlips flips one bit at every byte of a table (data,
// filter, index, properties, footer): each read must fail with a corruption
// error or return correct data. With a checksum over every block and the
// footer, every flip is in fact detected.
func TestCorruptionBitFlips(t *testing.T) {
	es, data := corruptTable(t)
	if err := readAll(t, es, data, "intact"); err != nil {
		t.Fatal(err)
	}
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 2))
	undetected := 0
	for off := range data {
		bad := bytes.Clone(data)
		bad[off] ^= 1 << rng.IntN(8)
		if readAll(t, es, bad, "flip") == nil {
			undetected++
			t.Logf("seed %d: flip at %d of %d went unnoticed (data was still correct)", seed, off, len(data))
		}
	}
	if undetected > 0 {
		t.Fatalf("seed %d: %d bit flips read back as if intact", seed, undetected)
	}
}

// TestCorruptionTruncation cuts the table at every length: Open must fail.
func TestCorruptionTruncation(t *testing.T) {
	es, data := corruptTable(t)
	for n := 0; n < len(data); n++ {
		if readAll(t, es, data[:n], "truncated") == nil {
			t.Fatalf("table truncated to %d of %d bytes opened and read cleanly", n, len(data))
		}
	}
	// Garbage appended after the footer is not a table either.
	if readAll(t, es, append(bytes.Clone(data), 0), "extended") == nil {
		t.Fatal("a byte after the footer went unnoticed")
	}
}

// TestCorruptionOverwrite overwrites random spans with random bytes,
// including spans that may forge lengths, many times.
func TestCorruptionOverwrite(t *testing.T) {
	es, data := corruptTable(t)
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 3))
	for i := 0; i < 500; i++ {
		bad := bytes.Clone(data)
		off := rng.IntN(len(bad))
		n := min(rng.IntN(16)+1, len(bad)-off)
		copy(bad[off:], randBytes(rng, n))
		readAll(t, es, bad, "overwrite")
	}
}
