package filter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// sortedSet is the model of a range filter: the distinct values, sorted.
type sortedSet []uint64

func newSortedSet(xs []uint64) sortedSet {
	s := slices.Clone(xs)
	slices.Sort(s)
	return slices.Compact(s)
}

// anyIn reports whether the set holds a value in [lo, hi].
func (s sortedSet) anyIn(lo, hi uint64) bool {
	i := sort.Search(len(s), func(i int) bool { return s[i] >= lo })
	return lo <= hi && i < len(s) && s[i] <= hi
}

func buildGrafite(t testing.TB, xs []uint64, bitsPerKey int, rangeLen, seed uint64) Grafite {
	t.Helper()
	b := NewGrafiteBuilder(bitsPerKey, rangeLen, seed)
	for _, x := range xs {
		b.Add(x)
	}
	g, err := OpenGrafite(b.Finish(nil))
	if err != nil {
		t.Fatalf("open what the builder wrote: %v", err)
	}
	return g
}

// grafiteValues draws a set shaped by one of several distributions:
// uniform over 2^64, dense runs, clusters at both ends of the universe,
// and a few values in one block.
func grafiteValues(rng *rand.Rand, n int, rangeLen uint64) []uint64 {
	xs := make([]uint64, 0, n)
	switch rng.IntN(5) {
	case 0:
		for range n {
			xs = append(xs, rng.Uint64())
		}
	case 1: // runs of adjacent integers with gaps
		x := rng.Uint64N(1 << 40)
		for range n {
			x += 1 + rng.Uint64N(3*rangeLen)
			xs = append(xs, x)
		}
	case 2: // near 0 and near 2^64−1
		for range n {
			v := rng.Uint64N(4 * rangeLen * uint64(n+1))
			if rng.IntN(2) == 0 {
				v = math.MaxUint64 - v
			}
			xs = append(xs, v)
		}
	case 3: // within a few blocks, with duplicates
		base := rng.Uint64() / 2
		for range n {
			xs = append(xs, base+rng.Uint64N(2*rangeLen))
		}
	case 4: // 8-byte big-endian integers scattered over a small keyspace
		for range n {
			xs = append(xs, rng.Uint64N(uint64(n)*64))
		}
	}
	return xs
}

// grafiteQuery draws a range [lo, hi]: around a stored value or
// anywhere, of length 1..L, a little over L, or many blocks, clipped at
// both ends of the universe.
func grafiteQuery(rng *rand.Rand, xs []uint64, rangeLen uint64) (lo, hi uint64) {
	var length uint64
	switch rng.IntN(4) {
	case 0, 1:
		length = 1 + rng.Uint64N(rangeLen)
	case 2:
		length = rangeLen + 1 + rng.Uint64N(2*rangeLen)
	case 3:
		length = 1 + rng.Uint64N(min(rangeLen*(grafiteMaxPieces+4), math.MaxUint64/2))
	}
	switch {
	case len(xs) > 0 && rng.IntN(2) == 0:
		x := xs[rng.IntN(len(xs))]
		off := rng.Uint64N(length + 2)
		lo = x - min(off, x) // may start at, before or just after x
		if rng.IntN(3) == 0 {
			lo = x + 1 + rng.Uint64N(4) // just past x: the correlated case
		}
	case rng.IntN(4) == 0:
		lo = math.MaxUint64 - rng.Uint64N(2*rangeLen)
	case rng.IntN(4) == 0:
		lo = rng.Uint64N(2 * rangeLen)
	default:
		lo = rng.Uint64()
	}
	hi = lo + (length - 1)
	if hi < lo {
		hi = math.MaxUint64
	}
	return lo, hi
}

// TestGrafiteNoFalseNegatives: for random sets and parameters, every
// range that holds a value of the set is answered "maybe", and a filter
// of no values answers "no" to everything. The filter is also asked
// whether it ever says "no" to an empty range, so a filter that always
// says "maybe" fails.
func TestGrafiteNoFalseNegatives(t *testing.T) {
	seeds := 400
	if testing.Short() || raceEnabled {
		seeds = 60
	}
	noes := 0
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		n, err := runGrafiteModel(seed)
		if err != nil {
			t.Fatalf("seed %d: %v (rerun: runGrafiteModel(%d))", seed, err, seed)
		}
		noes += n
	}
	if noes < seeds*100 {
		t.Fatalf("%d certain noes over %d seeds: the filter rules out too little", noes, seeds)
	}
}

func runGrafiteModel(seed uint64) (noes int, err error) {
	rng := rand.New(rand.NewPCG(seed, 0x6772))
	rangeLen := []uint64{1, 2, 7, 32, 64, 1000, 1 << 20}[rng.IntN(7)]
	bitsPerKey := GrafiteMinBitsPerKey + rng.IntN(GrafiteMaxBitsPerKey-GrafiteMinBitsPerKey+1)
	n := []int{0, 1, 2, 3, 50, 1000, 5000}[rng.IntN(7)]
	xs := grafiteValues(rng, n, rangeLen)
	b := NewGrafiteBuilder(bitsPerKey, rangeLen, rng.Uint64())
	for _, x := range xs {
		b.Add(x)
	}
	enc := b.Finish(nil)
	g, err := OpenGrafite(enc)
	if err != nil {
		return 0, fmt.Errorf("open: %v", err)
	}
	set := newSortedSet(xs)
	for range 2000 {
		lo, hi := grafiteQuery(rng, set, rangeLen)
		got, want := g.MayContainRange(lo, hi), set.anyIn(lo, hi)
		if want && !got {
			return noes, fmt.Errorf("L=%d B=%d n=%d: [%d, %d] holds a value, filter says no", rangeLen, bitsPerKey, n, lo, hi)
		}
		if len(set) == 0 && got {
			return noes, fmt.Errorf("empty filter says maybe to [%d, %d]", lo, hi)
		}
		if !got {
			noes++
		}
	}
	for _, x := range set { // every value alone, and the ranges ending and starting at it
		if !g.MayContainRange(x, x) || !g.MayContainRange(x-min(x, rangeLen), x) || !g.MayContainRange(x, x+min(math.MaxUint64-x, rangeLen)) {
			return noes, fmt.Errorf("L=%d B=%d: value %d ruled out", rangeLen, bitsPerKey, x)
		}
	}
	return noes, nil
}

// TestGrafiteEdges pins answers the model test meets only by chance:
// values at 0 and 2^64−1, a range of the whole universe, an inverted
// range, a value in the last and the first code of the universe, and
// the zero Grafite.
func TestGrafiteEdges(t *testing.T) {
	for _, rangeLen := range []uint64{1, 32, math.MaxUint64} {
		g := buildGrafite(t, []uint64{0, math.MaxUint64}, 16, rangeLen, 7)
		for _, q := range [][2]uint64{{0, 0}, {math.MaxUint64, math.MaxUint64}, {0, math.MaxUint64},
			{math.MaxUint64 - 31, math.MaxUint64}, {0, 31}} {
			if !g.MayContainRange(q[0], q[1]) {
				t.Errorf("L=%d: [%d, %d] ruled out", rangeLen, q[0], q[1])
			}
		}
		if g.MayContainRange(5, 4) {
			t.Errorf("L=%d: an inverted range is not empty", rangeLen)
		}
	}
	empty := buildGrafite(t, nil, 10, 32, 1)
	if empty.MayContainRange(0, math.MaxUint64) {
		t.Errorf("a filter of no values says maybe")
	}
	var zero Grafite
	if !zero.MayContainRange(1, 1) || !zero.MayContainKeys([]byte("b"), []byte("a")) {
		t.Errorf("the zero Grafite ruled a range out")
	}
}

// TestGrafiteWrap builds filters whose codes wrap past r − 1 within a
// block (L = 64 against r = 4 codes a value, 20 values), and asks for
// short ranges around each value, counting those whose value's code lies
// in the part of the interval that wrapped to 0: dropping that part
// (mayContainPiece) fails it.
func TestGrafiteWrap(t *testing.T) {
	const rangeLen = 64
	wrapped := 0
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 1))
		xs := grafiteValues(rng, 20, rangeLen)
		g := buildGrafite(t, xs, 4, rangeLen, seed)
		for _, x := range xs {
			lo, hi := x-min(x, rng.Uint64N(8)), x+min(math.MaxUint64-x, rng.Uint64N(8))
			// The piece of [lo, hi] in x's block, and whether x's code is
			// past r − 1 from the piece's start, so reduced to the front.
			s, e := max(lo, x/rangeLen*rangeLen), min(hi, x/rangeLen*rangeLen+rangeLen-1)
			if e-s < g.r-1 && g.code(s)+(x-s) >= g.r {
				wrapped++
			}
			if !g.MayContainRange(lo, hi) {
				t.Fatalf("seed %d: [%d, %d] holds %d, ruled out", seed, lo, hi, x)
			}
		}
	}
	if wrapped < 100 {
		t.Fatalf("only %d queries wrapped", wrapped)
	}
}

// TestEliasFanoExact: the Elias–Fano successor search is exact (the
// filter's only approximation is the hash), so anyIn must agree with the
// model for every range, for random sequences of every density and low
// width, including empty buckets and runs longer than a sample.
func TestEliasFanoExact(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 2))
		l := uint(rng.IntN(12))
		r := 1 + rng.Uint64N(5000)<<l + rng.Uint64N(1<<l)
		m := int(rng.Uint64N(min(r, 3000) + 1))
		codes := make([]uint64, 0, m)
		for range m {
			codes = append(codes, rng.Uint64N(r))
		}
		set := newSortedSet(codes)
		if got := sortCodes(codes, l, r, make([]uint64, len(codes))); !slices.Equal(got, set) {
			t.Fatalf("seed %d: sortCodes gives %d codes, not the %d sorted distinct ones", seed, len(got), len(set))
		}
		enc := appendEliasFano(nil, set, l, r)
		ef, err := openEliasFano(enc, len(set), l, r)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if used := len(set) * int(l); used%64 != 0 { // a bit past the low parts: another encoding of the set
			bad := slices.Clone(enc)
			bad[used/64*8+7] |= 0x80
			if _, err := openEliasFano(bad, len(set), l, r); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("seed %d: a bit set past the low parts: %v", seed, err)
			}
		}
		for i, c := range set {
			if got := uint64(i); ef.lowAt(got) != c&(1<<l-1) {
				t.Fatalf("seed %d: low %d of code %d", seed, ef.lowAt(got), i)
			}
		}
		for range 3000 {
			lo := rng.Uint64N(r)
			hi := lo + rng.Uint64N(min(r-lo, 1+rng.Uint64N(64)<<l))
			if got, want := ef.anyIn(lo, hi), set.anyIn(lo, hi); got != want {
				t.Fatalf("seed %d (l=%d r=%d m=%d): anyIn(%d, %d) = %v, model %v", seed, l, r, len(set), lo, hi, got, want)
			}
		}
	}
}

// TestOpenEliasFanoCount: a count one too large that leaves every length
// as it was, over buckets a multiple of the sample rate, is refused, not
// a sample read past the end (the extra zero it implies is zero nb, which
// has none).
func TestOpenEliasFanoCount(t *testing.T) {
	const l, m = 3, 10
	r := uint64(2*efSampleRate) << l
	codes := make([]uint64, m)
	for i := range codes {
		codes[i] = uint64(i) * 100
	}
	enc := appendEliasFano(nil, codes, l, r)
	if _, err := openEliasFano(enc, m, l, r); err != nil {
		t.Fatal(err)
	}
	if _, err := openEliasFano(enc, m+1, l, r); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("one code too many: %v", err)
	}
	// So a filter of 256 points at 5 bits per key (256 buckets).
	b := NewGrafiteBuilder(5, 32, 1)
	for i := range uint64(256) {
		b.Add(i * 1000003)
	}
	g := b.Finish(nil)
	binary.LittleEndian.PutUint32(g[4:8], binary.LittleEndian.Uint32(g[4:8])+1)
	if _, err := OpenGrafite(g); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("grafite filter with one code too many: %v", err)
	}
}

// TestGrafiteBounds: the integer range of a key range holds the point of
// every key in it, and is empty only when the key range is. Keys are
// short, long, and share bytes and zero tails with the bounds, where the
// upper bound's refinement (hi less one) could go wrong.
func TestGrafiteBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	key := func() []byte {
		k := make([]byte, rng.IntN(12))
		for i := range k {
			k[i] = []byte{0, 1, 0x7f, 0xff}[rng.IntN(4)]
		}
		return k
	}
	for range 20000 {
		lower, upper := key(), key()
		keys := [][]byte{lower, upper, key(), append(slices.Clone(upper), 0), append(slices.Clone(lower), 0)}
		for j := range len(upper) + 1 {
			keys = append(keys, upper[:j], append(slices.Clone(upper[:j]), 0xff))
		}
		lo, hi, ok := GrafiteBounds(lower, upper)
		for _, k := range keys {
			if bytes.Compare(lower, k) > 0 || bytes.Compare(k, upper) >= 0 {
				continue
			}
			if p := GrafitePoint(k); !ok || p < lo || p > hi {
				t.Fatalf("[%x, %x) holds %x (point %#x), bounds [%#x, %#x] ok=%v", lower, upper, k, p, lo, hi, ok)
			}
		}
	}
	if _, hi, _ := GrafiteBounds(nil, be(256)); hi != 256 {
		t.Errorf("upper 256 (last byte zero) gives hi %d, want 256: 7-byte keys below it share its point", hi)
	}
	if _, hi, _ := GrafiteBounds(nil, be(257)); hi != 256 {
		t.Errorf("upper 257 gives hi %d, want 256", hi)
	}
	if _, _, ok := GrafiteBounds(nil, []byte{}); ok {
		t.Errorf("no key is below the empty key")
	}
}

func be(x uint64) []byte { return binary.BigEndian.AppendUint64(nil, x) }

// TestGrafiteKeys: MayContainKeys over big-endian integer keys and over
// arbitrary keys never rules out a range holding a key.
func TestGrafiteKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	var keys [][]byte
	for i := range 2000 {
		if i%2 == 0 {
			keys = append(keys, be(rng.Uint64N(1<<20)))
		} else {
			k := make([]byte, rng.IntN(16))
			for j := range k {
				k[j] = byte(rng.IntN(4))
			}
			keys = append(keys, k)
		}
	}
	b := NewGrafiteBuilder(12, 32, 9)
	for _, k := range keys {
		b.AddKey(k)
	}
	g, err := OpenGrafite(b.Finish(nil))
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(keys, bytes.Compare)
	for range 20000 {
		lower := keys[rng.IntN(len(keys))]
		upper := binary.BigEndian.AppendUint64(nil, GrafitePoint(lower)+1+rng.Uint64N(40))
		i, _ := slices.BinarySearchFunc(keys, lower, bytes.Compare)
		if i < len(keys) && bytes.Compare(keys[i], upper) < 0 && !g.MayContainKeys(lower, upper) {
			t.Fatalf("[%x, %x) holds %x, ruled out", lower, upper, keys[i])
		}
	}
}

// TestOpenGrafiteRejects: each header field out of range, a length off
// by one byte, a stray bit past the high part and a wrong sample give
// ErrCorrupt, never a filter.
func TestOpenGrafiteRejects(t *testing.T) {
	good := NewGrafiteBuilder(10, 32, 1)
	for i := range uint64(1000) {
		good.Add(i * 97)
	}
	enc := good.Finish(nil)
	if _, err := OpenGrafite(enc); err != nil {
		t.Fatal(err)
	}
	lowLen := 8 * ((1000*8 + 63) / 64)
	highStart := grafiteHeaderLen + lowLen
	highLen := 8 * ((1000 + 1000 + 63) / 64)
	cases := map[string]func(b []byte) []byte{
		"short":       func(b []byte) []byte { return b[:20] },
		"tag":         func(b []byte) []byte { b[0] = 'X'; return b },
		"version":     func(b []byte) []byte { b[2] = 2; return b },
		"low bits":    func(b []byte) []byte { b[3] = 9; return b },
		"too many lb": func(b []byte) []byte { b[3] = 60; return b },
		"codes":       func(b []byte) []byte { b[4]++; return b },
		"range len":   func(b []byte) []byte { clear(b[16:24]); return b },
		"universe 0":  func(b []byte) []byte { clear(b[24:32]); return b },
		"universe":    func(b []byte) []byte { b[31] = 0x80; return b },
		"truncated":   func(b []byte) []byte { return b[:len(b)-1] },
		"longer":      func(b []byte) []byte { return append(b, 0) },
		"stray bit":   func(b []byte) []byte { b[highStart+highLen-1] |= 0x80; return b },
		"one moved":   func(b []byte) []byte { b[highStart] ^= 0xff; return b },
		"sample":      func(b []byte) []byte { b[len(b)-4]++; return b },
	}
	for name, corrupt := range cases {
		g, err := OpenGrafite(corrupt(slices.Clone(enc)))
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err %v, want ErrCorrupt", name, err)
		}
		if !g.MayContainRange(3, 3) {
			t.Errorf("%s: a failed open returned a filter that rules out", name)
		}
	}
}

// TestGrafiteQueryAllocs: a query allocates nothing (invariant 4).
func TestGrafiteQueryAllocs(t *testing.T) {
	xs := make([]uint64, 1000)
	for i := range xs {
		xs[i] = uint64(i) * 1000
	}
	g := buildGrafite(t, xs, 12, 32, 5)
	lower, upper := be(5), be(900)
	var sink bool
	if a := testing.AllocsPerRun(100, func() { sink = g.MayContainKeys(lower, upper) != sink }); a != 0 {
		t.Fatalf("%v allocations per query", a)
	}
}
