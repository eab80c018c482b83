package sstable

import (
	"encoding/binary"
	"errors"
	"flag"
	"os"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
)

// FuzzBlock feeds arbitrary bytes to the block decoder (as a data block,
// an index block and a properties block): it must never panic or loop, and
// every failure must wrap ErrCorruption. Block contents are decoded only
// after their checksum matched, but the decoder does not rely on that.
//
// Inputs are short: seeds of about 100 bytes, and inputs over 512 bytes
// are skipped. The fuzzer minimizes every input that finds new coverage,
// trying candidates quadratic in number in its length, and reports no
// executions meanwhile: with seeds of 40 entries (2 KiB) one minimization
// took the first 40 s of a 60 s run, and a 2 KiB input left in the fuzz
// cache by such a run stalled the next one the same way.
func FuzzBlock(f *testing.F) {
	for _, ri := range []int{1, 3, 16} {
		b := blockBuilder{restartInterval: ri}
		for _, e := range randEntries(newRand(uint64(ri)), 4)[:6] {
			b.add(e.key.Append(nil), e.value[:min(len(e.value), 4)])
		}
		f.Add(b.finish())
	}
	for _, seed := range []uint64{1, 2} {
		f.Add(compactIndexModel(seed, 12).block())
	}
	p := Properties{NumEntries: 1, Smallest: base.MakeInternalKey([]byte("a"), 1, base.KindSet), Largest: base.MakeInternalKey([]byte("b"), 1, base.KindSet)}
	f.Add(p.encode())
	p.TableID = 0x8a1c2b3d4e5f6071
	f.Add(p.encode())
	p.FilterLayout, p.FilterSplit = FilterLayoutCacheLine, "user-id"
	f.Add(p.encode())
	p.KeyHashes, p.keyHashBlock = 1, handle{offset: 10, length: 20}
	f.Add(p.encode())
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 512 {
			return
		}
		var it blockIter
		if it.init(data) != nil {
			return
		}
		n := 0
		for ok := it.first(); ok; ok = it.next() {
			n++
		}
		for ok := it.last(); ok && n >= 0; ok = it.prev() {
			n-- // a malformed block may scan differently backwards; only termination matters
		}
		for _, k := range [][]byte{nil, []byte("k"), []byte("kzz")} {
			it.seekGE(k, 1<<8)
			it.seekLT(k, 1<<8)
			if it.err != nil && !errors.Is(it.err, base.ErrCorruption) {
				t.Fatalf("block error %v does not wrap ErrCorruption", it.err)
			}
		}
		x, err := newIndex(data, false, dataHandles(1<<20))
		checkFuzzedIndex(t, x, err)
		x, err = newCompactIndex(data, 1<<20)
		checkFuzzedIndex(t, x, err)
		if _, err := decodeProperties(data); err != nil && !errors.Is(err, base.ErrCorruption) {
			t.Fatalf("properties error %v does not wrap ErrCorruption", err)
		}
	})
}

// checkFuzzedIndex: an index newIndex or newCompactIndex accepts is read
// without checks, so every entry must decode to a key above the one
// before and a handle in range (a compact index's contiguous), and search
// must find each whole key where it is; a refusal must wrap
// ErrCorruption.
func checkFuzzedIndex(t *testing.T, x index, err error) {
	if err != nil {
		if !errors.Is(err, base.ErrCorruption) {
			t.Fatalf("index error %v does not wrap ErrCorruption", err)
		}
		return
	}
	var buf []byte
	var prev indexKey
	end := uint64(0)
	for i := range x.len() {
		k := x.key(i, &buf)
		if i > 0 && !prev.below(k) {
			t.Fatalf("index key %d %v not above the one before, %v", i, k, prev)
		}
		h := x.handle(i)
		if h.end() > 1<<20 || x.compact && i > 0 && h.offset != end {
			t.Fatalf("index handle %d %v, the block before ends at %d", i, h, end)
		}
		end = h.end()
		got := x.search
		if x.compact {
			got = func(from int, ukey []byte, trailer uint64) int {
				i, h, ok := x.compactSearch(from, ukey, trailer)
				if ok && h != x.handle(i) {
					t.Fatalf("search's handle of entry %d %v, handle() says %v", i, h, x.handle(i))
				}
				return i
			}
		}
		if j := got(0, k.ukey, k.trailer); k.whole && j != i {
			t.Fatalf("search for key %d %v finds %d", i, k, j)
		}
		prev = indexKey{ukey: append([]byte(nil), k.ukey...), trailer: k.trailer, whole: k.whole}
	}
}

// FuzzReader opens arbitrary bytes as a table and reads everything it
// finds: errors must wrap ErrCorruption, nothing may panic. A table that
// opens must pass the identity check with its own size and id and fail it
// with any other id. Seeds are valid tables, some with an id;
// fixChecksums lets mutations reach past the block checksums.
//
// When fuzzing (not when the seeds run as tests), inputs over 1 KiB are
// skipped, and two small tables (about 640 bytes, most of it properties,
// filter and footer) seed the fuzzer: minimizing a new input costs a number
// of executions quadratic in its length, and with only the large seeds a
// 40 s run made 13 executions. A table is never tiny, so a minimization
// still takes seconds; -fuzzminimizetime 5s bounds it.
func FuzzReader(f *testing.F) {
	_, data := corruptTable(f)
	f.Add(data, false)
	for i, o := range []WriterOptions{{BlockSize: 64, BlockRestartInterval: 2, BloomBitsPerKey: 10}, {BlockSize: 1, Compression: true, TableID: 7,
		RangeFilter: filter.GrafiteOptions{BitsPerKey: 6, RangeLen: 4}, KeyHashes: true}} {
		es := randEntries(newRand(uint64(10+i)), 4)[:4]
		for j := range es {
			es[j].value = es[j].value[:min(len(es[j].value), 6)]
		}
		d, _ := buildTable(f, es, o)
		f.Add(d, i == 0)
	}
	for shape := 0; shape < 5; shape++ {
		if shape == 2 {
			continue // huge entries make slow fuzz inputs
		}
		d, _ := buildTable(f, randEntries(newRand(uint64(shape)), shape), randOptions(newRand(uint64(shape))))
		f.Add(d, shape%2 == 0)
	}
	{
		// A range-deletion block, and a table of nothing else.
		w := &memFile{}
		tw := NewWriter(w, WriterOptions{})
		tw.SetRangeDels(testSpans())
		if _, err := tw.Finish(); err != nil {
			f.Fatal(err)
		}
		f.Add(w.data, true)
	}
	for _, old := range []string{"testdata/v1.sst", "testdata/v2.sst", "testdata/v3.sst"} {
		// Tables of the older versions this build still reads.
		d, err := os.ReadFile(old)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(d, false)
	}
	fuzzing := flag.Lookup("test.fuzz").Value.String() != ""
	f.Fuzz(func(t *testing.T, data []byte, fix bool) {
		if fuzzing && len(data) > 1<<10 {
			return
		}
		if fix {
			fixChecksums(data)
		}
		fuzzRead(t, data, ReaderOptions{FileNum: 1, Cache: cache.New(64 << 10), MetaBudget: NewMetaBudget(0, nil)})
		fuzzRead(t, data, ReaderOptions{FileNum: 1, MetaBudget: NewMetaBudget(0, nil)}) // paged, no cache
		fuzzRead(t, data, ReaderOptions{FileNum: 1, SkipFilters: true})                 // as Repair reads a table
		r, err := Open(&memFile{data: data}, ReaderOptions{FileNum: 1})
		if err != nil {
			if !errors.Is(err, base.ErrCorruption) {
				t.Fatalf("Open: %v does not wrap ErrCorruption", err)
			}
			return
		}
		defer r.Close()
		id, other := r.Properties().TableID, r.Properties().TableID+1
		if other == 0 {
			other = 1 // 0 would skip the check
		}
		r2, err := Open(&memFile{data: data}, ReaderOptions{FileNum: 1, ExpectSize: uint64(len(data)), ExpectTableID: id})
		if err != nil {
			t.Fatalf("Open expecting the table's own size and id %#x: %v", id, err)
		}
		r2.Close()
		if _, err := Open(&memFile{data: data}, ReaderOptions{FileNum: 1, ExpectTableID: other}); !errors.Is(err, base.ErrCorruption) {
			t.Fatalf("Open of the table with id %#x expecting %#x: %v", id, other, err)
		}
		readEverything(t, r)
		salvageEverything(t, r)
	})
}

// salvageEverything reads r forward with a salvage iterator: every fault
// of a file in memory is damage, which it steps over, so it must end
// without an error, its keys in strict order.
func salvageEverything(t *testing.T, r *Reader) {
	it := r.NewSalvageIter()
	var prev InternalKey
	for ok, first := it.First(), true; ok; ok, first = it.Next(), false {
		k := it.Key()
		if !first && base.Compare(prev, k) >= 0 {
			t.Fatalf("salvage: %q after %q", k.UserKey, prev.UserKey)
		}
		prev = InternalKey{UserKey: append(prev.UserKey[:0], k.UserKey...), Trailer: k.Trailer}
	}
	if err := it.Close(); err != nil {
		t.Fatalf("salvage of a file in memory stopped: %v", err)
	}
}

// fuzzRead opens data with opts (the fuzz target's other ways in: paged,
// reading index partitions and filter pages on demand, or without the
// filters) and reads it all.
func fuzzRead(t *testing.T, data []byte, opts ReaderOptions) {
	r, err := Open(&memFile{data: data}, opts)
	if err != nil {
		if !errors.Is(err, base.ErrCorruption) {
			t.Fatalf("Open %+v: %v does not wrap ErrCorruption", opts, err)
		}
		return
	}
	defer r.Close()
	readEverything(t, r)
}

// readEverything scans r both ways and looks up every key it saw: every
// failure must wrap ErrCorruption.
func readEverything(t *testing.T, r *Reader) {
	it := r.NewIter(nil, nil)
	var keys [][]byte
	for ok := it.First(); ok && len(keys) < 1000; ok = it.Next() {
		keys = append(keys, append([]byte(nil), it.Key().UserKey...))
	}
	for ok := it.Last(); ok; ok = it.Prev() {
	}
	for _, k := range append(keys, []byte("zz")) {
		r.MayContainRange(k, append(k, 0))
		if _, _, _, err := r.Get(k, filter.Hash(k), base.MaxSeqNum, &Lookup{}); err != nil && !errors.Is(err, base.ErrCorruption) {
			t.Fatalf("Get: %v does not wrap ErrCorruption", err)
		}
		it.SeekGE(base.SeekKey(k, 5))
		it.SeekLT(base.SeekKey(k, 5))
	}
	if err := it.Close(); err != nil && !errors.Is(err, base.ErrCorruption) {
		t.Fatalf("iterator: %v does not wrap ErrCorruption", err)
	}
	if _, err := r.AppendKeyHashes(nil); err != nil && !errors.Is(err, base.ErrCorruption) {
		t.Fatalf("key hashes: %v does not wrap ErrCorruption", err)
	}
}

// fixChecksums rewrites the footer checksum and, walking the footer's,
// the index's and the properties' handles where they are in bounds, every
// block checksum, so fuzz mutations inside blocks reach the decoders
// instead of stopping at a CRC.
func fixChecksums(data []byte) {
	if len(data) < footerLen {
		return
	}
	ft := data[len(data)-footerLen:]
	putLE32(ft[52:], crc32Castagnoli(ft[:52]))
	// The properties block first, unsealed; then every other block,
	// sealed with the id the properties hold, when they decode.
	props := Properties{formatVersion: binary.LittleEndian.Uint32(ft[48:])}
	fixAt := func(off, n uint64) {
		limit := uint64(len(data)) - footerLen
		if off > limit || n > limit || off+n+blockTrailerLen > limit { // no overflow: both <= limit
			return
		}
		putLE32(data[off+n+1:], checksum(data[off:off+n], data[off+n])^props.seal(off))
	}
	propsOff, propsLen := leUint64(ft[32:]), leUint64(ft[40:])
	fixAt(propsOff, propsLen)
	if propsOff <= uint64(len(data)) && propsLen <= uint64(len(data))-propsOff {
		if p, err := decodeProperties(data[propsOff : propsOff+propsLen]); err == nil {
			props.TableID = p.TableID
			for _, h := range []handle{p.rangeDelBlock, p.rangeFilterBlock, p.keyHashBlock} {
				fixAt(h.offset, h.length)
			}
		}
	}
	for i := 0; i < 2; i++ { // the index and filter handles
		fixAt(leUint64(ft[16*i:]), leUint64(ft[16*i+8:]))
	}
	// The footer's index handle: a version 1 index of data blocks, or a
	// version 2 or 3 top-level block of partitions, each an index of data
	// blocks. A partition's checksum is fixed after its entries'.
	v3 := props.formatVersion >= formatVersionSeparators
	var walk func(off, n uint64, depth int)
	walk = func(off, n uint64, depth int) {
		if n > maxBlockLen || off > uint64(len(data)) || off+n > uint64(len(data)) || depth > 1 {
			return
		}
		var it blockIter
		if it.init(data[off:off+n]) != nil {
			return
		}
		next := uint64(0) // a version 3 partition's next block
		for i, ok := 0, it.first(); ok; i, ok = i+1, it.next() {
			if depth == 0 {
				if h, _, ok := decodePartEntry(it.val, v3); ok {
					walk(h.offset, h.length, depth+1)
					fixAt(h.offset, h.length)
				} else if h, ok := decodeHandle(it.val); ok && !v3 {
					fixAt(h.offset, h.length)
				}
				continue
			}
			if !v3 {
				if h, ok := decodeHandle(it.val); ok {
					fixAt(h.offset, h.length)
				}
				continue
			}
			lenFlag, k := binary.Uvarint(it.val)
			if k <= 0 {
				return
			}
			if i%indexRestartInterval == 0 {
				if next, k = binary.Uvarint(it.val[k:]); k <= 0 {
					return
				}
			}
			h := handle{offset: next, length: lenFlag >> 1}
			fixAt(h.offset, h.length)
			next = h.end()
		}
	}
	walk(leUint64(ft[0:]), leUint64(ft[8:]), 0)
	fixAt(leUint64(ft[0:]), leUint64(ft[8:]))
}
