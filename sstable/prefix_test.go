package sstable

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
)

// testSplits are the splits the prefix tests draw from: fixed lengths,
// a cut at the first '/', the whole key, the empty prefix, and one that
// breaks contract 2 of filter.Split (not monotone: its prefixes are not
// contiguous), which the filters must still answer for without a false
// negative, since they rely on contract 1 only.
var testSplits = []*filter.Split{
	{Name: "fixed1", Len: func(k []byte) int { return min(len(k), 1) }},
	{Name: "fixed3", Len: func(k []byte) int { return min(len(k), 3) }},
	{Name: "to-slash", Len: func(k []byte) int {
		if i := bytes.IndexByte(k, '/'); i >= 0 {
			return i
		}
		return len(k)
	}},
	{Name: "whole", Len: func(k []byte) int { return len(k) }},
	{Name: "empty", Len: func(k []byte) int { return 0 }},
	{Name: "scattered", Len: func(k []byte) int {
		if len(k) == 0 {
			return 0
		}
		return int(k[len(k)-1]) % (len(k) + 1)
	}},
}

// randPrefixEntries draws up to n entries whose user keys have a few
// prefix-like shapes ("ab/xyz", short keys, keys that are another key's
// prefix), several versions of some, sorted and unique.
func randPrefixEntries(rng *rand.Rand, n int) []entry {
	var es []entry
	for range rng.IntN(n) + 1 {
		uk := []byte{byte('a' + rng.IntN(4)), byte('a' + rng.IntN(8))}
		if rng.IntN(4) > 0 {
			uk = append(uk, '/')
			for range rng.IntN(6) {
				uk = append(uk, byte('a'+rng.IntN(26)))
			}
		}
		for v := range rng.IntN(3) + 1 {
			es = append(es, entry{base.MakeInternalKey(uk, base.SeqNum(v+1), base.KindSet), []byte("v")})
		}
	}
	slices.SortFunc(es, func(a, b entry) int { return base.Compare(a.key, b.key) })
	return slices.CompactFunc(es, func(a, b entry) bool { return base.Compare(a.key, b.key) == 0 })
}

// prefixesOf is the model: the set of split prefixes of the entries' keys.
func prefixesOf(es []entry, s *filter.Split) map[string]bool {
	m := map[string]bool{}
	for _, e := range es {
		m[string(s.Prefix(e.key.UserKey))] = true
	}
	return m
}

// TestPrefixModel checks MayContainPrefix against the model for random
// key sets, splits and densities, pinned and paged: every prefix a key
// has is admitted (no false negative, ever), and prefixes no key has are
// mostly ruled out, so the filter does hold prefixes rather than answer
// "maybe" to everything.
func TestPrefixModel(t *testing.T) {
	seeds := 60
	if testing.Short() || raceEnabled {
		seeds = 15
	}
	for seed := range uint64(seeds) {
		rng := newRand(seed)
		split := testSplits[rng.IntN(len(testSplits))]
		es := randPrefixEntries(rng, []int{10, 300, 20000}[rng.IntN(3)])
		bpk := []float64{10, 7.3, 2}[rng.IntN(3)]
		data, p := buildTable(t, es, WriterOptions{BlockSize: 512, BloomBitsPerKey: bpk, Split: split})
		if p.FilterSplit != split.Name {
			t.Fatalf("seed %d: FilterSplit %q, want %q", seed, p.FilterSplit, split.Name)
		}
		// Sized for keys and prefixes: one entry per distinct user key and
		// per run of keys with one prefix (each distinct prefix once, as
		// the split is contiguous; the scattered one's runs repeat).
		n := 0
		for i, e := range es {
			if i == 0 || !bytes.Equal(split.Prefix(e.key.UserKey), split.Prefix(es[i-1].key.UserKey)) {
				n++
			}
			if i == 0 || !bytes.Equal(e.key.UserKey, es[i-1].key.UserKey) {
				n++
			}
		}
		if want := uint64(math.Ceil(float64(n) * bpk / 512)); p.FilterLines != want {
			t.Fatalf("seed %d: %d filter lines for %d keys and prefix runs at %g bits/key, want %d", seed, p.FilterLines, n, bpk, want)
		}
		model := prefixesOf(es, split)
		for _, paged := range []bool{false, true} {
			r := openPinnedOrPaged(t, data, paged)
			if r.Properties().FilterSplit != split.Name {
				t.Fatalf("seed %d: read FilterSplit %q", seed, r.Properties().FilterSplit)
			}
			for pre := range model {
				if !r.MayContainPrefix(split, filter.PrefixHash([]byte(pre))) {
					t.Fatalf("seed %d (%s, %d entries, %g bits/key, paged %t): prefix %q ruled out, key %q has it",
						seed, split.Name, len(es), bpk, paged, pre, es[slices.IndexFunc(es, func(e entry) bool { return string(split.Prefix(e.key.UserKey)) == pre })].key.UserKey)
				}
			}
			absent, no := 0, 0
			for i := range 2000 {
				pre := fmt.Appendf(nil, "%c%c/absent%d", 'a'+rng.IntN(4), 'a'+rng.IntN(8), i)
				if model[string(pre)] {
					continue
				}
				absent++
				if !r.MayContainPrefix(split, filter.PrefixHash(pre)) {
					no++
				}
			}
			if float64(no) < 0.5*float64(absent) {
				t.Fatalf("seed %d (%s, %g bits/key, paged %t): %d of %d absent prefixes ruled out", seed, split.Name, bpk, paged, no, absent)
			}
			if s := r.Stats(); s.PrefixProbes != uint64(len(model)+absent) || s.PrefixNegatives != uint64(no) {
				t.Fatalf("seed %d: stats %d probes, %d negatives; want %d, %d", seed, s.PrefixProbes, s.PrefixNegatives, len(model)+absent, no)
			}
			for i := 0; i < len(es); i += len(es)/500 + 1 { // whole keys are still there
				e := es[i]
				if _, _, found, err := r.Get(e.key.UserKey, filter.Hash(e.key.UserKey), base.MaxSeqNum, &Lookup{}); !found || err != nil {
					t.Fatalf("seed %d: Get(%q): found %t, %v", seed, e.key.UserKey, found, err)
				}
			}
			r.Close()
		}
	}
}

// TestPrefixNeverSkipsOtherTables: a table whose filter does not hold a
// split's prefixes is never ruled out for one, whatever is asked: built
// without a split, with another split, without a filter, of format
// version 1 (testdata/v1.sst, before the property existed), read with
// IgnoreFilter, or asked with no split or an unnamed one.
func TestPrefixNeverSkipsOtherTables(t *testing.T) {
	es := randPrefixEntries(newRand(1), 2000)
	split, other := testSplits[1], testSplits[2]
	v1, err := os.ReadFile("testdata/v1.sst")
	if err != nil {
		t.Fatal(err)
	}
	build := func(o WriterOptions) []byte { data, _ := buildTable(t, es, o); return data }
	tables := []struct {
		name string
		data []byte
		ro   ReaderOptions
		ask  *filter.Split
	}{
		{"no split", build(WriterOptions{BloomBitsPerKey: 10}), ReaderOptions{}, split},
		{"other split", build(WriterOptions{BloomBitsPerKey: 10, Split: other}), ReaderOptions{}, split},
		{"no filter", build(WriterOptions{Split: split}), ReaderOptions{}, split},
		{"version 1", v1, ReaderOptions{}, split},
		{"filter ignored", build(WriterOptions{BloomBitsPerKey: 10, Split: split}), ReaderOptions{IgnoreFilter: true}, split},
		{"asked without split", build(WriterOptions{BloomBitsPerKey: 10, Split: split}), ReaderOptions{}, nil},
		{"asked unnamed", build(WriterOptions{BloomBitsPerKey: 10, Split: split}), ReaderOptions{}, &filter.Split{Len: split.Len}},
	}
	for _, tc := range tables {
		for _, budget := range []*MetaBudget{nil, NewMetaBudget(0, nil)} {
			tc.ro.Cache, tc.ro.FileNum, tc.ro.MetaBudget = cache.New(1<<20), 7, budget
			r, err := Open(&memFile{data: tc.data}, tc.ro)
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			for i := range 1000 {
				pre := fmt.Appendf(nil, "%03d", i)
				if !r.MayContainPrefix(tc.ask, filter.PrefixHash(pre)) {
					t.Fatalf("%s (paged %t): prefix %q ruled out", tc.name, r.Paged(), pre)
				}
			}
			if s := r.Stats(); s.PrefixProbes != 0 {
				t.Fatalf("%s: %d prefix probes counted, none consulted the filter", tc.name, s.PrefixProbes)
			}
			r.Close()
		}
	}
}

// TestPrefixApartFromKeys: a prefix in the filter does not make the whole
// key of the same bytes look present (filter.PrefixHash): Get's probes of
// 2000 prefixes that are no key answer "maybe" at about the filter's
// false-positive rate (1% at 10 bits per key), not always.
func TestPrefixApartFromKeys(t *testing.T) {
	var es []entry
	for i := range 2000 {
		es = append(es, entry{base.MakeInternalKey(fmt.Appendf(nil, "u%04d/x", i), 1, base.KindSet), nil})
	}
	data, _ := buildTable(t, es, WriterOptions{BloomBitsPerKey: 10, Split: testSplits[2]})
	r := openTable(t, data, nil)
	defer r.Close()
	maybe := 0
	for i := range 2000 {
		pre := fmt.Appendf(nil, "u%04d", i)
		if !r.MayContainPrefix(testSplits[2], filter.PrefixHash(pre)) {
			t.Fatalf("prefix %q ruled out", pre)
		}
		if r.MayContainHash(filter.Hash(pre)) {
			maybe++
		}
	}
	if maybe > 60 { // 3%: at 1%, 20 expected, sd 4.5
		t.Fatalf("%d of 2000 prefixes probed as whole keys answer maybe", maybe)
	}
}

// TestSplitNeedsAName: a writer given a split without a name fails rather
// than write a table no reader could match.
func TestSplitNeedsAName(t *testing.T) {
	w := NewWriter(&memFile{}, WriterOptions{BloomBitsPerKey: 10, Split: &filter.Split{Len: testSplits[0].Len}})
	if err := w.Add(base.MakeInternalKey([]byte("a"), 1, base.KindSet), nil); err == nil {
		t.Fatal("Add succeeded")
	}
	w.Abort()
}
