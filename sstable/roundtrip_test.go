package sstable

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
)

// TestRoundTrip writes random tables of every shape and reads them back by
// point lookups at random snapshots and by bounded iterators in both
// directions, against the sorted-slice model.
func TestRoundTrip(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 1))
	rounds := 24 // four of each shape; MONBAN_LONG=1 for more
	if os.Getenv("MONBAN_LONG") != "" {
		rounds = 1200
	}
	for round := 0; round < rounds; round++ {
		shape := round % 6
		es := randEntries(rng, shape)
		opts := randOptions(rng)
		if shape == 2 {
			opts.BlockSize = 4096 // keep huge rounds quick
		}
		desc := fmt.Sprintf("seed %d round %d shape %d opts %+v entries %d", seed, round, shape, opts, len(es))
		data, props := buildTable(t, es, opts)
		checkProps(t, desc, es, props, len(data))
		// No cache, one that evicts (and recycles) blocks all the time, or
		// one that holds them all.
		c := [...]*Cache{nil, cache.New(4 << 10), cache.New(1 << 20)}[rng.IntN(3)]
		// With a cache, half the rounds read the index and filter paged.
		var budget *MetaBudget
		if c != nil && rng.IntN(2) == 0 {
			budget = NewMetaBudget(0, nil)
		}
		desc += fmt.Sprintf(" paged %t", budget != nil)
		r, err := Open(&memFile{data: data}, ReaderOptions{Cache: c, FileNum: 7, MetaBudget: budget})
		if err != nil {
			t.Fatalf("%s: Open: %v", desc, err)
		}
		if r.Paged() != (budget != nil) {
			t.Fatalf("%s: Paged() = %t", desc, r.Paged())
		}
		if got := *r.Properties(); !propsEqual(got, props) {
			t.Fatalf("%s: reopened properties %+v, writer said %+v", desc, got, props)
		}
		if hs, err := r.AppendKeyHashes(nil); err != nil || r.HasKeyHashes() != opts.KeyHashes || opts.KeyHashes && !slices.Equal(hs, keyHashModel(es)) {
			t.Fatalf("%s: %d key hashes (block %t), %v; want %d", desc, len(hs), r.HasKeyHashes(), err, len(keyHashModel(es)))
		}
		checkGets(t, desc, rng, r, es)
		checkFindNext(t, desc, rng, r, es)
		checkIters(t, desc, rng, r, es)
		if err := r.Close(); err != nil {
			t.Fatalf("%s: Close: %v", desc, err)
		}
		if n := budget.PagedTables(); n != 0 {
			t.Fatalf("%s: %d paged tables counted after Close", desc, n)
		}
	}
}

func propsEqual(a, b Properties) bool {
	return base.Compare(a.Smallest, b.Smallest) == 0 && base.Compare(a.Largest, b.Largest) == 0 &&
		fmt.Sprint(a.NumEntries, a.NumDeletions, a.SmallestSeq, a.LargestSeq, a.FilterLayout, a.FilterBitsPerKey,
			a.RawKeyBytes, a.RawValueBytes, a.DataBytes, a.IndexBytes, a.FilterBytes, a.FileSize, a.NumDataBlocks, a.TableID, a.OlderVersions,
			a.KeyHashes, a.KeyHashBytes) ==
			fmt.Sprint(b.NumEntries, b.NumDeletions, b.SmallestSeq, b.LargestSeq, b.FilterLayout, b.FilterBitsPerKey,
				b.RawKeyBytes, b.RawValueBytes, b.DataBytes, b.IndexBytes, b.FilterBytes, b.FileSize, b.NumDataBlocks, b.TableID, b.OlderVersions,
				b.KeyHashes, b.KeyHashBytes)
}

func checkProps(t *testing.T, desc string, es []entry, p Properties, size int) {
	t.Helper()
	var dels, older, rk, rv uint64
	for i, e := range es {
		if e.key.Kind() == base.KindDelete {
			dels++
		}
		if i > 0 && bytes.Equal(e.key.UserKey, es[i-1].key.UserKey) {
			older++
		}
		rk += uint64(e.key.Size())
		rv += uint64(len(e.value))
	}
	if p.NumEntries != uint64(len(es)) || p.NumDeletions != dels || p.OlderVersions != older || p.RawKeyBytes != rk || p.RawValueBytes != rv ||
		p.FileSize != uint64(size) {
		t.Fatalf("%s: properties %+v disagree with the %d entries written", desc, p, len(es))
	}
	if len(es) > 0 && (base.Compare(p.Smallest, es[0].key) != 0 || base.Compare(p.Largest, es[len(es)-1].key) != 0) {
		t.Fatalf("%s: key range [%v, %v]", desc, p.Smallest, p.Largest)
	}
}

func checkGets(t *testing.T, desc string, rng *rand.Rand, r *Reader, es []entry) {
	t.Helper()
	probe := func(uk []byte, seq base.SeqNum) {
		wv, wk, wf := modelGet(es, uk, seq)
		v, k, f, err := r.Get(uk, filter.Hash(uk), seq, &Lookup{})
		if err != nil || f != wf || (f && (k != wk || !bytes.Equal(v, wv))) {
			t.Fatalf("%s: Get(%.20q, %d) = %.20q %v %v %v; model %.20q %v %v", desc, uk, seq, v, k, f, err, wv, wk, wf)
		}
	}
	n := 300
	if huge(es) {
		n = 10 // each probe reads a 2 MiB block
	}
	for i := 0; i < n && len(es) > 0; i++ {
		e := es[rng.IntN(len(es))]
		probe(e.key.UserKey, e.key.Seq())
		probe(e.key.UserKey, base.SeqNum(rng.IntN(1200)))
		probe(e.key.UserKey, base.MaxSeqNum)
		// A near miss: the key with a byte appended, or a random short key.
		probe(append(slices.Clip(e.key.UserKey), 0), base.MaxSeqNum)
		// A prefix of the key: what a bare separator may be (separator.go).
		probe(e.key.UserKey[:rng.IntN(len(e.key.UserKey)+1)], []base.SeqNum{base.MaxSeqNum, base.SeqNum(rng.IntN(1200))}[rng.IntN(2)])
	}
	for i := 0; i < 50; i++ {
		probe(randBytes(rng, rng.IntN(4)), base.MaxSeqNum)
	}
}

// checkFindNext: runs of keys in ascending order (present, near misses,
// repeats), looked up with one cursor at one sequence number, get the
// model's answers, and each data block they touch is fetched once: a
// lookup shares its block exactly when the one before used the same.
func checkFindNext(t *testing.T, desc string, rng *rand.Rand, r *Reader, es []entry) {
	t.Helper()
	rounds := 30
	if huge(es) {
		rounds = 3
	}
	for range rounds {
		var keys [][]byte
		for range rng.IntN(40) {
			switch {
			case len(es) > 0 && rng.IntN(3) > 0:
				keys = append(keys, es[rng.IntN(len(es))].key.UserKey)
			case len(es) > 0 && rng.IntN(2) == 0:
				keys = append(keys, append(slices.Clip(es[rng.IntN(len(es))].key.UserKey), 0))
			default:
				keys = append(keys, randBytes(rng, rng.IntN(4)))
			}
		}
		slices.SortFunc(keys, bytes.Compare)
		seq := []base.SeqNum{base.MaxSeqNum, base.SeqNum(rng.IntN(1200))}[rng.IntN(2)]
		var cur BlockCursor
		last := -1 // the block of the last lookup that reached one
		for _, uk := range keys {
			var l Lookup
			v, k, f, err := r.FindNext(uk, seq, &l, &cur)
			wv, wk, wf := modelGet(es, uk, seq)
			if err != nil || f != wf || (f && (k != wk || !bytes.Equal(v, wv))) {
				t.Fatalf("%s: FindNext(%.20q, %d) = %.20q %v %v %v; model %.20q %v %v", desc, uk, seq, v, k, f, err, wv, wk, wf)
			}
			if l.From == BlockNone {
				continue
			}
			if shared := l.Block == last; (l.From == BlockFromCursor) != shared {
				t.Fatalf("%s: FindNext(%.20q) in block %d after block %d: %v", desc, uk, l.Block, last, l.From)
			}
			last = l.Block
		}
		cur.Release()
	}
}

func checkIters(t *testing.T, desc string, rng *rand.Rand, r *Reader, es []entry) {
	t.Helper()
	pick := func() []byte {
		switch {
		case rng.IntN(4) == 0:
			return nil
		case len(es) > 0 && rng.IntN(2) == 0:
			return es[rng.IntN(len(es))].key.UserKey
		case len(es) > 0 && rng.IntN(2) == 0: // a prefix, as bare separators are
			uk := es[rng.IntN(len(es))].key.UserKey
			return uk[:rng.IntN(len(uk)+1)]
		}
		return randBytes(rng, rng.IntN(3))
	}
	rounds := 20
	if huge(es) {
		rounds = 3
	}
	for i := 0; i < rounds; i++ {
		lower, upper := pick(), pick()
		var in []entry // the model's view through the bounds
		for _, e := range es {
			if (lower == nil || bytes.Compare(e.key.UserKey, lower) >= 0) && (upper == nil || bytes.Compare(e.key.UserKey, upper) < 0) {
				in = append(in, e)
			}
		}
		it := r.NewIter(lower, upper)
		// Full scans both ways.
		n := 0
		for ok := it.First(); ok; ok = it.Next() {
			mustAt(t, desc, it, in, n, "forward")
			n++
		}
		if it.Error() != nil || n != len(in) {
			t.Fatalf("%s: forward scan [%q,%q) saw %d of %d entries, err %v", desc, lower, upper, n, len(in), it.Error())
		}
		n = len(in) - 1
		for ok := it.Last(); ok; ok = it.Prev() {
			mustAt(t, desc, it, in, n, "backward")
			n--
		}
		if it.Error() != nil || n != -1 {
			t.Fatalf("%s: backward scan stopped at %d, err %v", desc, n, it.Error())
		}
		// Seeks followed by a few steps either way.
		for j := 0; j < 20; j++ {
			var target base.InternalKey
			if len(es) > 0 && rng.IntN(3) > 0 {
				target = es[rng.IntN(len(es))].key
				target.Trailer = base.MakeTrailer(base.SeqNum(rng.IntN(1200)), base.Kind(rng.IntN(2)))
			} else {
				target = base.MakeInternalKey(randBytes(rng, rng.IntN(3)), base.SeqNum(rng.IntN(1200)), base.KindSet)
			}
			ge, _ := slices.BinarySearchFunc(in, target, func(e entry, k base.InternalKey) int { return base.Compare(e.key, k) })
			var pos int
			var ok bool
			if rng.IntN(2) == 0 {
				ok, pos = it.SeekGE(target), ge
			} else {
				ok, pos = it.SeekLT(target), ge-1
			}
			for step := 0; step < 5; step++ {
				if pos < 0 || pos >= len(in) {
					if ok || it.Error() != nil {
						t.Fatalf("%s: after seek %v step %d: valid=%v err=%v, model exhausted", desc, target, step, ok, it.Error())
					}
					break
				}
				if !ok {
					t.Fatalf("%s: after seek %v step %d: invalid (err %v), model at %v", desc, target, step, it.Error(), in[pos].key)
				}
				mustAt(t, desc, it, in, pos, "seek")
				if rng.IntN(2) == 0 {
					ok, pos = it.Next(), pos+1
				} else {
					ok, pos = it.Prev(), pos-1
				}
			}
		}
		if err := it.Close(); err != nil {
			t.Fatalf("%s: iterator Close: %v", desc, err)
		}
	}
}

func mustAt(t *testing.T, desc string, it *Iter, in []entry, i int, how string) {
	t.Helper()
	if i < 0 || i >= len(in) {
		t.Fatalf("%s: %s: iterator at %v, model exhausted (index %d of %d)", desc, how, it.Key(), i, len(in))
	}
	if base.Compare(it.Key(), in[i].key) != 0 || it.Key().Trailer != in[i].key.Trailer || !bytes.Equal(it.Value(), in[i].value) {
		t.Fatalf("%s: %s: iterator at %v, model %v (index %d)", desc, how, it.Key(), in[i].key, i)
	}
}

// TestAddOrder checks invariant 1: out-of-order and duplicate keys are
// refused without spoiling the table.
func TestAddOrder(t *testing.T) {
	w := NewWriter(&memFile{}, WriterOptions{})
	if err := w.Add(base.MakeInternalKey([]byte("b"), 5, base.KindSet), nil); err != nil {
		t.Fatal(err)
	}
	for _, k := range []base.InternalKey{
		base.MakeInternalKey([]byte("b"), 5, base.KindSet), // duplicate
		base.MakeInternalKey([]byte("b"), 6, base.KindSet), // newer sorts first
		base.MakeInternalKey([]byte("a"), 1, base.KindSet),
	} {
		if err := w.Add(k, nil); !errorsIs(err, ErrOutOfOrder) {
			t.Fatalf("Add(%v) = %v, want ErrOutOfOrder", k, err)
		}
	}
	if err := w.Add(base.MakeInternalKey([]byte("c"), 1, base.Kind(7)), nil); !errorsIs(err, ErrTooLarge) {
		t.Fatalf("bad kind: %v", err)
	}
	if err := w.Add(base.MakeInternalKey(make([]byte, MaxKeySize+1), 1, base.KindSet), nil); !errorsIs(err, ErrTooLarge) {
		t.Fatalf("huge key: %v", err)
	}
	if err := w.Add(base.MakeInternalKey([]byte("b"), 4, base.KindSet), []byte("v")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(); !errorsIs(err, ErrClosed) {
		t.Fatalf("second Finish: %v", err)
	}
	if err := w.Add(base.MakeInternalKey([]byte("z"), 1, base.KindSet), nil); !errorsIs(err, ErrClosed) {
		t.Fatalf("Add after Finish: %v", err)
	}
}

func huge(es []entry) bool {
	for _, e := range es {
		if len(e.key.UserKey) > 64<<10 {
			return true
		}
	}
	return false
}

// TestFilterDensityProperty: a table records its filter's density to the
// thousandth of a bit (filter.millibits_per_key), and a table written
// before that property, with the whole-bit filter.bits_per_key, still
// reads back its density.
func TestFilterDensityProperty(t *testing.T) {
	_, p := buildTable(t, evenKeys(100), WriterOptions{BloomBitsPerKey: 9.49372})
	if p.FilterBitsPerKey != 9.494 {
		t.Fatalf("FilterBitsPerKey %v, want 9.494", p.FilterBitsPerKey)
	}
	b := blockBuilder{restartInterval: 1}
	b.add([]byte(propDataBlocks), []byte{1})
	b.add([]byte(propEntries), []byte{0})
	b.add([]byte(propFilterBits), []byte{10})
	b.add([]byte(propFilterLayout), []byte(FilterLayoutCacheLine))
	b.add([]byte(propIndexBytes), []byte{1})
	old, err := decodeProperties(b.finish())
	if err != nil || old.FilterBitsPerKey != 10 {
		t.Fatalf("old table's properties: %+v, %v; want FilterBitsPerKey 10", old, err)
	}
}
