package sstable

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
)

// TestSeparatorIsNotAVersion pins Get's reading of separators
// (invariant 4). One-entry blocks "a"#1 | "bz"#4 | "c"#5 | "c"#3 | "d"#2
// have the separators "b" (bare), "c" (bare), "c"#5 (whole: the versions
// of "c" span the boundary), "d" (bare) and "d"#2 (the last key). A Get
// of "b" lands at the start of block 1 after the bare "b": it has the
// bytes of the key looked up, yet it is no version of it.
func TestSeparatorIsNotAVersion(t *testing.T) {
	var es []entry
	for _, e := range []struct {
		k string
		s base.SeqNum
	}{{"a", 1}, {"bz", 4}, {"c", 5}, {"c", 3}, {"d", 2}} {
		es = append(es, entry{base.MakeInternalKey([]byte(e.k), e.s, base.KindSet), []byte(e.k)})
	}
	data, _ := buildTable(t, es, WriterOptions{BlockSize: 1})
	r := openTable(t, data, nil)
	defer r.Close()
	for _, tc := range []struct {
		key     string
		seq     base.SeqNum
		outcome Outcome
	}{
		{"b", base.MaxSeqNum, OutcomeNoVersion},
		{"b", 3, OutcomeNoVersion},
		{"bz", base.MaxSeqNum, OutcomeFound},
		{"c", base.MaxSeqNum, OutcomeFound}, // (c, the greatest trailer) is above the bare "c"
		{"c", 4, OutcomeFound},              // "c"#3, past the whole "c"#5
		{"c", 2, OutcomeNotVisible},
		{"ca", base.MaxSeqNum, OutcomeNoVersion},
		{"d", 1, OutcomeNotVisible}, // above the table's last key, "d"#2
	} {
		var l Lookup
		_, _, found, err := r.Get([]byte(tc.key), filter.Hash([]byte(tc.key)), tc.seq, &l)
		if err != nil || found != (tc.outcome == OutcomeFound) || l.Outcome != tc.outcome {
			t.Errorf("Get(%s, %d): found %t, %v, %s", tc.key, tc.seq, found, err, l.String())
		}
	}
}

// TestCompactPartitionExample writes docs/format.md's example of a
// version 3 partition ("Index keys and compact partitions") and pins its
// bytes, entry by entry as the doc's table lists them.
func TestCompactPartitionExample(t *testing.T) {
	var es []entry
	for _, e := range []struct {
		k string
		s base.SeqNum
		v string
	}{{"apple", 3, "red"}, {"apricot", 2, "orange"}, {"banana", 5, "yellow"}, {"banana", 2, "green"}, {"cherry", 9, "dark"}} {
		es = append(es, entry{base.MakeInternalKey([]byte(e.k), e.s, base.KindSet), []byte(e.v)})
	}
	data, _ := buildTable(t, es, WriterOptions{BlockSize: 1})
	r := openTable(t, data, nil)
	defer r.Close()
	h := r.ix.partHandle(0)
	want := strings.Join([]string{
		"000302 617072 3600",
		"000101 62 40",
		"010d01 616e616e61 0105000000000000 3f",
		"000101 63 3c",
		"000e03 636865727279 0109000000000000 3b 8c01",
		"00000000 23000000 02000000",
	}, "")
	if got := hex.EncodeToString(data[h.offset : h.offset+h.length]); got != strings.ReplaceAll(want, " ", "") {
		t.Fatalf("partition\n got %s\nwant %s", got, strings.ReplaceAll(want, " ", ""))
	}
	var c indexCursor
	defer c.release()
	if err := r.holdPart(&c, 0); err != nil {
		t.Fatal(err)
	}
	for i, off := range []uint64{0, 32, 69, 105, 140} {
		if got := r.blockHandle(&c, i).offset; got != off {
			t.Errorf("block %d at %d, want %d", i, got, off)
		}
	}
}

// TestOlderTablesStillRead opens tables written by format versions 2
// (testdata/v2.sst: whole last keys in partitions, every entry a restart
// point; id 0x5eed2) and 3 (testdata/v3.sst: separators, blocks unsealed;
// id 0x5eed3, with a range-deletion block of spans in [a, d), a range
// filter of 12 bits per key and a key-hash block), each of 1,000 keys
// key%05d of even numbers, value value%05d, at sequence number the key's
// number + 1, 64-byte blocks, 10 bits per key, pinned and paged, and reads
// them by Gets, scans and bounded iterators both ways.
func TestOlderTablesStillRead(t *testing.T) {
	for file, id := range map[string]uint64{"testdata/v2.sst": 0x5eed2, "testdata/v3.sst": 0x5eed3} {
		t.Run(file, func(t *testing.T) { checkOlderTable(t, file, id) })
	}
}

func checkOlderTable(t *testing.T, file string, id uint64) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, budget := range []*MetaBudget{nil, NewMetaBudget(0, nil)} {
		r := openPaged(t, data, cache.New(1<<20), budget)
		if r.Paged() != (budget != nil) || id == 0x5eed2 && r.ix.numParts() < 3 || r.ix.top.sep != (id == 0x5eed3) || r.Properties().TableID != id {
			t.Fatalf("paged %t, %d partitions, id %#x", r.Paged(), r.ix.numParts(), r.Properties().TableID)
		}
		if p := r.Properties(); id == 0x5eed3 && (p.KeyHashes != 1000 || p.RangeDelSpans == 0 || p.RangeFilterBits != 12) {
			t.Fatalf("v3 table: %d key hashes, %d range-deletion spans, range filter of %d bits", p.KeyHashes, p.RangeDelSpans, p.RangeFilterBits)
		}
		if hs, err := r.AppendKeyHashes(nil); err != nil || len(hs) != int(r.Properties().KeyHashes) {
			t.Fatalf("key hashes: %d, %v", len(hs), err)
		}
		for i := range 2000 {
			k := fmt.Appendf(nil, "key%05d", i)
			v, _, found, err := r.Get(k, filter.Hash(k), base.MaxSeqNum, &Lookup{})
			if err != nil || found != (i%2 == 0) || found && string(v) != fmt.Sprintf("value%05d", i) {
				t.Fatalf("Get(%s) = %q, %t, %v", k, v, found, err)
			}
			if _, _, found, _ := r.Get(k, filter.Hash(k), base.SeqNum(i), &Lookup{}); found {
				t.Fatalf("Get(%s) at a snapshot before it found it", k)
			}
		}
		lower, upper := []byte("key00500"), []byte("key00900")
		it := r.NewIter(lower, upper)
		var fwd, back []string
		for ok := it.First(); ok; ok = it.Next() {
			fwd = append(fwd, string(it.Key().UserKey))
		}
		for ok := it.Last(); ok; ok = it.Prev() {
			back = append(back, string(it.Key().UserKey))
		}
		if err := it.Close(); err != nil || len(fwd) != 200 || len(back) != 200 || fwd[0] != "key00500" || back[0] != "key00898" {
			t.Fatalf("bounded scans: %d forward from %v, %d back from %v, %v", len(fwd), fwd[:min(1, len(fwd))], len(back), back[:min(1, len(back))], err)
		}
		if est, err := r.EstimateBytes(lower, upper); err != nil || est == 0 || est > r.Properties().DataBytes {
			t.Fatalf("EstimateBytes = %d, %v", est, err)
		}
		r.Close()
	}
}

// TestIndexShrinks: at bench/peers' shape (16-byte random keys, 100-byte
// values, 4 KiB blocks) a version 3 index costs at most 12 bytes per data
// block, where version 2 spent 37 (BenchmarkIndexBytes measures 2^20
// keys; this test a sixteenth of that).
func TestIndexShrinks(t *testing.T) {
	rng := newRand(30)
	es := make([]entry, 1<<16)
	for i := range es {
		es[i] = entry{base.MakeInternalKey(randBytes(rng, 16), base.SeqNum(i+1), base.KindSet), randBytes(rng, 100)}
	}
	slices.SortFunc(es, func(a, b entry) int { return base.Compare(a.key, b.key) })
	_, p := buildTable(t, es, WriterOptions{BloomBitsPerKey: 10})
	if perBlock := float64(p.IndexBytes) / float64(p.NumDataBlocks); perBlock > 12 {
		t.Fatalf("%.1f index bytes per data block", perBlock)
	}
}

// TestLongKeyVersionsSpanBlocks: versions of a 1 MiB user key, one per
// block, are indexed under whole 1 MiB separators (the versions share a
// user key), with multi-byte lengths in every entry, and a key that
// extends it by one byte follows; Gets at snapshots between the versions
// and scans both ways, pinned and paged, agree with the model.
func TestLongKeyVersionsSpanBlocks(t *testing.T) {
	long := bytes.Repeat([]byte{'k'}, 1<<20)
	var es []entry
	for s := base.SeqNum(9); s >= 3; s -= 2 {
		es = append(es, entry{base.MakeInternalKey(long, s, base.KindSet), fmt.Appendf(nil, "v%d", s)})
	}
	es = append(es, entry{base.MakeInternalKey(append(bytes.Clone(long), 0), 1, base.KindSet), []byte("x")}, entry{base.MakeInternalKey(nil, 1, base.KindSet), nil})
	es = append(es[len(es)-1:], es[:len(es)-1]...) // the empty key first
	data, p := buildTable(t, es, WriterOptions{BlockSize: 1})
	if p.NumDataBlocks != uint64(len(es)) || p.IndexBytes < 4<<20 {
		t.Fatalf("%d blocks, %d index bytes: want a block per entry and whole 1 MiB separators", p.NumDataBlocks, p.IndexBytes)
	}
	for _, budget := range []*MetaBudget{nil, NewMetaBudget(0, nil)} {
		r := openPaged(t, data, cache.New(16<<20), budget)
		for _, uk := range [][]byte{nil, long, append(bytes.Clone(long), 0), long[:1000]} {
			for seq := base.SeqNum(0); seq <= 10; seq++ {
				wv, _, wf := modelGet(es, uk, seq)
				v, _, f, err := r.Get(uk, filter.Hash(uk), seq, &Lookup{})
				if err != nil || f != wf || !bytes.Equal(v, wv) {
					t.Fatalf("paged %t: Get(%d-byte key, %d) = %q %t %v; model %q %t", budget != nil, len(uk), seq, v, f, err, wv, wf)
				}
			}
		}
		it := r.NewIter(long[:10], nil)
		n := 0
		for ok := it.Last(); ok; ok = it.Prev() {
			n++
		}
		for ok := it.First(); ok; ok = it.Next() {
			n++
		}
		if err := it.Close(); err != nil || n != 2*(len(es)-1) {
			t.Fatalf("paged %t: scans saw %d entries, want %d: %v", budget != nil, n, 2*(len(es)-1), err)
		}
		r.Close()
	}
}
