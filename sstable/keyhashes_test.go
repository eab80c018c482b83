package sstable

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
)

// keyHashModel is what a table's key-hash block must hold: the top 40
// bits of the Hash of each distinct user key of its point entries,
// sorted, each once.
func keyHashModel(es []entry) []uint64 {
	var out []uint64
	for _, e := range es {
		out = append(out, filter.Hash(e.key.UserKey)>>(64-filter.KeyHashBits)<<(64-filter.KeyHashBits))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// TestKeyHashesRoundTrip: the key-hash block holds exactly the model —
// every user key of a set or a deletion, and neither the range
// tombstones' bounds nor a split's prefixes — read pinned, paged and
// through WithFile, under every writer option, and the properties count
// it.
func TestKeyHashesRoundTrip(t *testing.T) {
	split := &filter.Split{Name: "first2", Len: func(k []byte) int { return min(len(k), 2) }}
	deletedOnly := 0 // tables holding a user key of deletions only
	for seed := range uint64(24) {
		rng := newRand(seed)
		es := randEntries(rng, []int{0, 1, 3, 4, 5}[seed%5])
		opts := randOptions(rng)
		opts.KeyHashes = true
		if seed%2 == 0 {
			opts.BloomBitsPerKey, opts.Split = 10, split
		}
		w := &memFile{}
		tw := NewWriter(w, opts)
		for _, e := range es {
			if err := tw.Add(e.key, e.value); err != nil {
				t.Fatal(err)
			}
		}
		if seed%3 == 0 {
			tw.SetRangeDels(testSpans())
		}
		p, err := tw.Finish()
		if err != nil {
			t.Fatal(err)
		}
		want := keyHashModel(es)
		if p.KeyHashes != uint64(len(want)) || p.KeyHashBytes != p.keyHashBlock.length+blockTrailerLen || p.KeyHashBytes == 0 {
			t.Fatalf("seed %d: properties count %d key hashes in %d bytes, want %d", seed, p.KeyHashes, p.KeyHashBytes, len(want))
		}
		if got := tw.KeyHashes(); !slices.Equal(got, want) {
			t.Fatalf("seed %d: the writer hands over %d key hashes, want the %d of its block", seed, len(got), len(want))
		}
		deletedOnly += deletionOnlyKeys(es)
		// What a careless writer might add: the range tombstones' bounds
		// and the split's prefixes (none of them a point key here).
		var notKeys []uint64
		for _, k := range []string{"a", "b", "c", "d"} {
			if !hasUserKey(es, []byte(k)) {
				notKeys = append(notKeys, filter.Hash([]byte(k)))
			}
		}
		for _, e := range es {
			notKeys = append(notKeys, filter.PrefixHash(e.key.UserKey[:split.Len(e.key.UserKey)]))
		}
		for _, budget := range []*MetaBudget{nil, NewMetaBudget(0, nil)} {
			r, err := Open(&memFile{data: w.data}, ReaderOptions{Cache: cache.New(1 << 20), FileNum: 7, MetaBudget: budget})
			if err != nil {
				t.Fatal(err)
			}
			v, err := r.WithFile(&memFile{data: w.data})
			if err != nil {
				t.Fatal(err)
			}
			for _, rd := range []*Reader{r, v} {
				if !rd.HasKeyHashes() || rd.Properties().KeyHashes != p.KeyHashes || rd.Properties().KeyHashBytes != p.KeyHashBytes {
					t.Fatalf("seed %d: has %t, properties read back %d in %d bytes", seed, rd.HasKeyHashes(), rd.Properties().KeyHashes, rd.Properties().KeyHashBytes)
				}
				got, err := rd.AppendKeyHashes([]uint64{1})
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				if got[0] != 1 || !slices.Equal(got[1:], want) {
					t.Fatalf("seed %d: %d key hashes read, want %d (dst kept: %t)", seed, len(got)-1, len(want), got[0] == 1)
				}
				for _, x := range notKeys {
					if _, ok := slices.BinarySearch(got[1:], x>>24<<24); ok {
						t.Fatalf("seed %d: %#x, not a point key's hash, is in the block", seed, x)
					}
				}
			}
			before := r.Stats().OpenBlocksRead
			if _, err := r.AppendKeyHashes(nil); err != nil || r.Stats().OpenBlocksRead != before+1 {
				t.Fatalf("seed %d: the block's read counted %d, %v", seed, r.Stats().OpenBlocksRead-before, err)
			}
			v.Close()
			r.Close()
		}
	}
	if deletedOnly == 0 {
		t.Fatal("no table had a user key of deletions only: the test proves nothing about them")
	}
}

// deletionOnlyKeys counts the user keys of es (sorted) whose every entry
// is a deletion.
func deletionOnlyKeys(es []entry) int {
	n := 0
	for i := 0; i < len(es); {
		j, dels := i, true
		for ; j < len(es) && bytes.Equal(es[j].key.UserKey, es[i].key.UserKey); j++ {
			dels = dels && es[j].key.Kind() == base.KindDelete
		}
		if dels {
			n++
		}
		i = j
	}
	return n
}

func hasUserKey(es []entry, k []byte) bool {
	return slices.ContainsFunc(es, func(e entry) bool { return bytes.Equal(e.key.UserKey, k) })
}

// TestKeyHashesDeletionsOnly: a table of one deletion holds its key's
// hash, and one of range tombstones only holds an empty set, not none.
func TestKeyHashesDeletionsOnly(t *testing.T) {
	del := []entry{{key: base.MakeInternalKey([]byte("gone"), 3, base.KindDelete)}}
	data, _ := buildTable(t, del, WriterOptions{KeyHashes: true})
	r := openTable(t, data, nil)
	got, err := r.AppendKeyHashes(nil)
	r.Close()
	if err != nil || !slices.Equal(got, keyHashModel(del)) {
		t.Fatalf("a deletion's table: %x, %v; want %x", got, err, keyHashModel(del))
	}
	w := &memFile{}
	tw := NewWriter(w, WriterOptions{KeyHashes: true})
	tw.SetRangeDels(testSpans())
	if _, err := tw.Finish(); err != nil {
		t.Fatal(err)
	}
	r = openTable(t, w.data, nil)
	defer r.Close()
	if got, err := r.AppendKeyHashes(nil); !r.HasKeyHashes() || len(got) != 0 || err != nil {
		t.Fatalf("a table of range tombstones: has %t, %x, %v", r.HasKeyHashes(), got, err)
	}
}

// TestKeyHashesAbsent: a table written without the option, and one of
// format version 1 (before the block existed), have no key-hash block:
// no properties, and AppendKeyHashes appends nothing without an error.
func TestKeyHashesAbsent(t *testing.T) {
	v1, err := os.ReadFile("testdata/v1.sst")
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := buildTable(t, randEntries(newRand(1), 4), WriterOptions{BloomBitsPerKey: 10})
	for name, data := range map[string][]byte{"no option": plain, "version 1": v1} {
		r := openTable(t, data, nil)
		got, err := r.AppendKeyHashes([]uint64{9})
		if r.HasKeyHashes() || r.Properties().KeyHashes != 0 || r.Properties().KeyHashBytes != 0 || err != nil || !slices.Equal(got, []uint64{9}) {
			t.Errorf("%s: has %t, properties %d in %d bytes, read %x, %v", name, r.HasKeyHashes(), r.Properties().KeyHashes, r.Properties().KeyHashBytes, got, err)
		}
		r.Close()
	}
}

// TestKeyHashesCorrupt: every flipped byte of the key-hash block leaves
// Open to succeed (it does not read the block) and fails AppendKeyHashes
// with ErrCorruption naming the file, dst as given; with the checksum
// fixed, the decoder and the count check refuse what the CRC let pass, or
// it decodes another set (a flipped low bit is another value), never the
// table's (a set has one encoding) and never a panic.
func TestKeyHashesCorrupt(t *testing.T) {
	es := randEntries(newRand(2), 4)
	data, p := buildTable(t, es, WriterOptions{KeyHashes: true, TableID: 3})
	h, want := p.keyHashBlock, keyHashModel(es)
	decoded := 0
	for off := h.offset; off < h.end(); off++ {
		for _, fix := range []bool{false, true} {
			bad := slices.Clone(data)
			bad[off] ^= 0x10
			if fix && off < h.offset+h.length+1 {
				putLE32(bad[h.offset+h.length+1:], checksum(bad[h.offset:h.offset+h.length], bad[h.offset+h.length])^p.seal(h.offset))
			}
			r, err := Open(&memFile{data: bad}, ReaderOptions{FileNum: 7})
			if err != nil {
				t.Fatalf("byte %d flipped: Open: %v", off, err)
			}
			got, err := r.AppendKeyHashes([]uint64{5})
			r.Close()
			switch {
			case err == nil && fix && !slices.Equal(got[1:], want):
				decoded++ // another set, which the CRC would have caught
			case !errors.Is(err, base.ErrCorruption) || !bytes.Contains([]byte(err.Error()), []byte("000007.sst")):
				t.Fatalf("byte %d flipped (checksum fixed %t): %v, want ErrCorruption naming the file", off, fix, err)
			case !slices.Equal(got, []uint64{5}):
				t.Fatalf("byte %d flipped: dst %x on error", off, got)
			}
		}
	}
	t.Logf("%d of %d flips with the checksum fixed decode to another set", decoded, h.length)
}

// TestKeyHashesInconsistentProperties: a key-hash handle without a count
// or a count without a handle, a count above the entries, and a handle
// outside the file fail Open with ErrCorruption.
func TestKeyHashesInconsistentProperties(t *testing.T) {
	data, p := buildTable(t, randEntries(newRand(3), 4), WriterOptions{KeyHashes: true})
	h := p.keyHashBlock
	same := func(*Properties) {}
	for _, c := range []struct {
		name string
		edit func(*Properties)
		drop string // a property to leave out
	}{
		{"no count", same, propKeyHashes},
		{"no handle", same, propKeyHashBlock},
		{"count above the entries", func(q *Properties) { q.KeyHashes = q.NumEntries + 1 }, ""},
		{"handle past the file", func(q *Properties) { q.keyHashBlock = handle{offset: q.FileSize, length: h.length} }, ""},
		{"empty handle", func(q *Properties) { q.keyHashBlock = handle{offset: h.offset} }, ""},
	} {
		if r, err := Open(&memFile{data: rewriteProps(t, data, c.edit, c.drop)}, ReaderOptions{FileNum: 7}); !errors.Is(err, base.ErrCorruption) {
			if err == nil {
				r.Close()
			}
			t.Errorf("%s: Open: %v, want ErrCorruption", c.name, err)
		}
	}
	r := openTable(t, rewriteProps(t, data, same, ""), nil)
	r.Close()
	// A count the block does not hold passes Open, which does not read
	// the block, and fails its read.
	r = openTable(t, rewriteProps(t, data, func(q *Properties) { q.KeyHashes-- }, ""), nil)
	defer r.Close()
	if _, err := r.AppendKeyHashes(nil); !errors.Is(err, base.ErrCorruption) {
		t.Errorf("count one short: %v, want ErrCorruption", err)
	}
}

// rewriteProps returns data with its properties block replaced by the
// table's properties after edit, without the property named drop (if
// not ""), and the footer pointing at it.
func rewriteProps(t *testing.T, data []byte, edit func(*Properties), drop string) []byte {
	t.Helper()
	ft, err := decodeFooter(data[len(data)-footerLen:], uint64(len(data)-footerLen))
	if err != nil {
		t.Fatal(err)
	}
	r := openTable(t, data, nil)
	p := *r.Properties()
	r.Close()
	edit(&p)
	enc := p.encode()
	if drop != "" {
		var it blockIter
		if err := it.init(enc); err != nil {
			t.Fatal(err)
		}
		b := blockBuilder{restartInterval: 1}
		for ok := it.first(); ok; ok = it.next() {
			if string(it.key) != drop {
				b.add(slices.Clone(it.key), slices.Clone(it.val))
			}
		}
		enc = b.finish()
	}
	out := slices.Clone(data[:ft.props.offset])
	ft.props = handle{offset: uint64(len(out)), length: uint64(len(enc))}
	out = append(out, enc...)
	out = append(out, compressionNone, 0, 0, 0, 0)
	putLE32(out[len(out)-4:], checksum(enc, compressionNone))
	return append(out, ft.encode()...)
}

// BenchmarkWriteKeyHashes is BenchmarkWrite (no snappy) without and with
// a key-hash block: the difference in cpu-ns/op over benchKeys is the
// block's CPU per key in the writer.
func BenchmarkWriteKeyHashes(b *testing.B) {
	es := benchEntries()
	for _, kh := range []bool{false, true} {
		b.Run(map[bool]string{false: "none", true: "key-hashes"}[kh], func(b *testing.B) {
			benchWrite(b, es, WriterOptions{BloomBitsPerKey: 10, KeyHashes: kh})
		})
	}
}
