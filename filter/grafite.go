package filter

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"slices"
	"sync"
)

// Grafite is a range filter (Costa, Ferragina, Vinciguerra, "Grafite:
// Taming Adversarial Queries with Optimal Range Filters", SIGMOD 2024): it
// answers "may the set hold a value in [lo, hi]?" over 64-bit integers,
// with no false negatives and, for a range of ℓ ≤ L values at B bits per
// key, a false-positive rate of at most ℓ/2^(B−2) on any data.
//
// How: n values x are hashed to codes h(x) = (q(⌊x/L⌋) + x mod L) mod r
// in a universe of r = n·2^(B−2) codes, q a hash of the block number
// ⌊x/L⌋ into [0, r). (The paper adds x rather than x mod L; the two differ
// by ⌊x/L⌋·L mod r, a constant per block that a random q absorbs, and
// x mod L spares a division.) Inside one block of L values h is x plus a
// constant mod r, so it keeps order and adjacency: the codes of [lo, hi]
// within a block form one interval mod r, and "is a code stored in it?"
// is a successor search in the sorted codes. Distinct blocks land at independent
// offsets, so a range holding no value meets another block's code with
// probability ≤ ℓ·n/r = ℓ/2^(B−2). The sorted codes are stored in an
// Elias–Fano sequence (grafite_ef.go) of B−2 low bits per code and about
// two bits per code of unary high parts, B bits per key in all.
//
// A range longer than L is cut at block boundaries into at most
// grafiteMaxPieces pieces, each asked as above; the bound still holds
// (ℓ/2^(B−2) summed over the pieces), and beyond the cap the answer is
// "maybe".
//
// Keys become integers by GrafitePoint: the first 8 bytes, big-endian,
// zero-padded. The projection is monotone, so a key range maps to an
// integer range that holds every key's point (GrafiteBounds): never a
// false negative. It separates only keys that differ in their first 8
// bytes: fixed-width big-endian integers and timestamps gain; keys that
// share a longer prefix project to one point, and the filter answers
// "maybe" for any range inside it.
//
// The zero Grafite, the stand-in for a filter that failed to decode,
// answers "maybe" to every range. A Grafite aliases the bytes given to
// OpenGrafite, which must not change while it is used; it is a small
// value, safe for concurrent queries, and a query allocates nothing.
type Grafite struct {
	ef       eliasFano
	rangeLen uint64 // L
	r        uint64
	seed     uint64
	// shift is log2 L when L is a power of two, which spares the query a
	// division; -1 otherwise.
	shift int
	ok    bool // false only in the zero value
}

// Version 1 of the Grafite encoding (docs/format.md, "Grafite range
// filter"): a 32-byte header
//
//	tag "GF" | version u8 = 1 | low bits l u8 | codes m u32 LE |
//	seed u64 LE | range length L u64 LE | universe r u64 LE
//
// then the Elias–Fano sequence (grafite_ef.go). A change to the layout,
// the hash q, or the projection of keys needs a new version.
const (
	grafiteTag       = "GF"
	grafiteVersion   = 1
	grafiteHeaderLen = 32
)

// Limits of the builder and the decoder. Bits per key below 3 leave one
// low bit and a bound above 1/2 per value; above 40 the filter costs more
// than most keys. r ≤ 2^62 keeps q(b) + (x mod r) from overflowing.
// grafiteMaxPieces bounds the work of one query: a range of more blocks
// than that answers "maybe" without looking.
const (
	GrafiteMinBitsPerKey = 3
	GrafiteMaxBitsPerKey = 40
	grafiteMaxUniverse   = 1 << 62
	grafiteMaxPieces     = 16
)

// GrafiteOptions are the parameters of the range filters an engine
// builds for its tables; the zero value builds none.
type GrafiteOptions struct {
	// BitsPerKey is B, in [GrafiteMinBitsPerKey, GrafiteMaxBitsPerKey];
	// 0 builds no range filter.
	BitsPerKey int
	// RangeLen is L, the length of the ranges the filter is tuned for
	// (ranges of up to L points cost one or two searches); 0 selects
	// DefaultGrafiteRangeLen.
	RangeLen uint64
}

// DefaultGrafiteRangeLen is the range length GrafiteOptions.RangeLen 0
// selects.
const DefaultGrafiteRangeLen = 32

// Builder returns a builder of o's parameters seeded with seed, nil when
// o builds no filter.
func (o GrafiteOptions) Builder(seed uint64) *GrafiteBuilder {
	if o.BitsPerKey <= 0 {
		return nil
	}
	rangeLen := o.RangeLen
	if rangeLen == 0 {
		rangeLen = DefaultGrafiteRangeLen
	}
	return NewGrafiteBuilder(o.BitsPerKey, rangeLen, seed)
}

// GrafiteBuilder collects the values of a Grafite. It is not safe for
// concurrent use.
type GrafiteBuilder struct {
	bits     int
	rangeLen uint64
	seed     uint64
	xs       []uint64
}

// NewGrafiteBuilder returns a builder for a filter of bitsPerKey bits per
// distinct value (clamped to [GrafiteMinBitsPerKey, GrafiteMaxBitsPerKey])
// tuned for ranges of rangeLen values (at least 1), whose hash q is
// seeded with seed. Different seeds give filters with the same bound and
// different false positives: a seed an adversary does not know keeps it
// from choosing ranges that are all false positives.
func NewGrafiteBuilder(bitsPerKey int, rangeLen, seed uint64) *GrafiteBuilder {
	return &GrafiteBuilder{
		bits:     min(max(bitsPerKey, GrafiteMinBitsPerKey), GrafiteMaxBitsPerKey),
		rangeLen: max(rangeLen, 1),
		seed:     seed,
	}
}

// Add adds the value x, in any order; duplicates count once. A value
// equal to the last one added is dropped at once, so the versions of a
// key added in order cost nothing.
func (b *GrafiteBuilder) Add(x uint64) {
	if b.xs == nil {
		b.xs = scratch(0)
	}
	if n := len(b.xs); n == 0 || b.xs[n-1] != x {
		b.xs = append(b.xs, x)
	}
}

// AddKey adds GrafitePoint(key).
func (b *GrafiteBuilder) AddKey(key []byte) { b.Add(GrafitePoint(key)) }

// Finish appends the encoded filter to dst and returns it, and empties
// the builder for another filter of the same parameters.
func (b *GrafiteBuilder) Finish(dst []byte) []byte {
	if !slices.IsSorted(b.xs) { // a table's keys come sorted
		slices.Sort(b.xs)
	}
	xs := slices.Compact(b.xs)
	n := uint64(max(len(xs), 1))
	// r = n·2^l with l = B−2 low bits, lowered where n is so large that r
	// would pass 2^62 (at B = 40, beyond 2^24 values).
	l := uint(b.bits - 2)
	for l > 0 && n > grafiteMaxUniverse>>l {
		l--
	}
	g := Grafite{rangeLen: b.rangeLen, r: n << l, seed: b.seed, shift: log2Exact(b.rangeLen)}
	for i, x := range xs { // the codes take the points' place
		xs[i] = g.code(x)
	}
	out := scratch(len(xs))
	codes := sortCodes(xs, l, g.r, out)

	dst = append(dst, grafiteTag...)
	dst = append(dst, grafiteVersion, byte(l))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(codes)))
	dst = binary.LittleEndian.AppendUint64(dst, g.seed)
	dst = binary.LittleEndian.AppendUint64(dst, g.rangeLen)
	dst = binary.LittleEndian.AppendUint64(dst, g.r)
	dst = appendEliasFano(dst, codes, l, g.r)
	release(xs)
	release(out)
	b.xs = nil
	return dst
}

// grafiteScratch holds the builders' point and code slices between
// filters (a *[]uint64 each), and AppendKeyHashes' values. A table's filter is built once, and fresh
// memory for its points and sorted codes, faulted in and zeroed, cost
// the table writer 43 ns per key where the build alone costs 26; 30 with
// the pool (sstable's BenchmarkWriteRange and BenchmarkGrafiteBuild at 16
// bits per key).
var grafiteScratch sync.Pool

// scratch returns a slice of n uint64s, of any contents, from
// grafiteScratch or new.
func scratch(n int) []uint64 {
	if p, ok := grafiteScratch.Get().(*[]uint64); ok && cap(*p) >= n {
		return (*p)[:n]
	}
	return make([]uint64, n)
}

// release gives s to grafiteScratch; the caller keeps no alias of it.
func release(s []uint64) {
	s = s[:0]
	grafiteScratch.Put(&s)
}

// OpenGrafite decodes an encoded filter, aliasing data. It checks the
// tag, version and parameters, that every section has exactly the length
// the header implies, and the Elias–Fano sequence's structure
// (openEliasFano), so that no query reads outside data; errors wrap
// ErrCorrupt, and the zero Grafite comes with them. Nothing is
// allocated.
func OpenGrafite(data []byte) (Grafite, error) {
	if len(data) < grafiteHeaderLen {
		return Grafite{}, fmt.Errorf("%w: grafite filter of %d bytes is shorter than its %d-byte header", ErrCorrupt, len(data), grafiteHeaderLen)
	}
	if string(data[0:2]) != grafiteTag {
		return Grafite{}, fmt.Errorf("%w: not a grafite filter (tag %q, want %q)", ErrCorrupt, data[0:2], grafiteTag)
	}
	if data[2] != grafiteVersion {
		return Grafite{}, fmt.Errorf("%w: grafite filter version %d, this build reads %d", ErrCorrupt, data[2], grafiteVersion)
	}
	l := uint(data[3])
	m := binary.LittleEndian.Uint32(data[4:8])
	g := Grafite{
		seed:     binary.LittleEndian.Uint64(data[8:16]),
		rangeLen: binary.LittleEndian.Uint64(data[16:24]),
		r:        binary.LittleEndian.Uint64(data[24:32]),
	}
	if l > GrafiteMaxBitsPerKey-2 || g.rangeLen == 0 || g.r == 0 || g.r > grafiteMaxUniverse || uint64(m) > g.r {
		return Grafite{}, fmt.Errorf("%w: grafite filter with %d low bits, range length %d, universe %d, %d codes",
			ErrCorrupt, l, g.rangeLen, g.r, m)
	}
	ef, err := openEliasFano(data[grafiteHeaderLen:], int(m), l, g.r)
	if err != nil {
		return Grafite{}, fmt.Errorf("grafite filter: %w", err)
	}
	g.ef, g.shift, g.ok = ef, log2Exact(g.rangeLen), true
	return g, nil
}

// log2Exact returns log2 x for a power of two x, -1 for any other x.
func log2Exact(x uint64) int {
	if x&(x-1) != 0 {
		return -1
	}
	return bits.TrailingZeros64(x)
}

// code is h(x) = (q(⌊x/L⌋) + x mod L) mod r.
func (g *Grafite) code(x uint64) uint64 {
	var block, off uint64
	if g.shift >= 0 {
		block, off = x>>g.shift, x&(g.rangeLen-1)
	} else {
		block = x / g.rangeLen
		off = x - block*g.rangeLen
	}
	if off >= g.r { // only where L > r
		off %= g.r
	}
	c := g.q(block) + off // both below r ≤ 2^62
	if c >= g.r {
		c -= g.r
	}
	return c
}

// q maps a block number into [0, r): MurmurHash3's 64-bit finalizer of
// block xor seed, a bijection, so distinct blocks get distinct hashes
// before the reduction, which takes the high word of hash·r (Lemire's
// multiply-shift, no division). Grafite's bound assumes q pairwise
// independent; a finalizer is not, provably, but grafite_test.go measures
// the false-positive rate against the bound.
func (g *Grafite) q(block uint64) uint64 {
	h := block ^ g.seed
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	hi, _ := bits.Mul64(h, g.r)
	return hi
}

// MayContainRange reports whether the set may hold a value in [lo, hi]
// (both included); false is certain. lo > hi is an empty range: false.
func (g Grafite) MayContainRange(lo, hi uint64) bool {
	if !g.ok {
		return true
	}
	if lo > hi || g.ef.m == 0 {
		return false
	}
	first, last := lo/g.rangeLen, hi/g.rangeLen
	if last-first >= grafiteMaxPieces {
		return true
	}
	for blk := first; ; blk++ {
		// The piece of [lo, hi] in block blk: [s, e].
		s, e := max(lo, blk*g.rangeLen), hi
		if blk < last {
			e = blk*g.rangeLen + (g.rangeLen - 1)
		}
		if g.mayContainPiece(s, e) {
			return true
		}
		if blk == last {
			return false
		}
	}
}

// mayContainPiece asks about [s, e] inside one block, whose codes are
// [h(s), h(s) + (e − s)] mod r: one interval, or two where it wraps past
// r − 1.
func (g *Grafite) mayContainPiece(s, e uint64) bool {
	if e-s >= g.r-1 {
		return true // the piece covers every code, and the set is not empty
	}
	cs := g.code(s)
	ce := cs + (e - s) // < 2^63
	if ce < g.r {
		return g.ef.anyIn(cs, ce)
	}
	return g.ef.anyIn(cs, g.r-1) || g.ef.anyIn(0, ce-g.r)
}

// RangeLen returns L, the range length the filter was tuned for.
func (g Grafite) RangeLen() uint64 { return g.rangeLen }

// BitsPerCode returns the filter's size in bits per stored code, header
// included; 0 for an empty or zero filter.
func (g Grafite) BitsPerCode() float64 {
	if g.ef.m == 0 {
		return 0
	}
	return float64(8*(grafiteHeaderLen+g.ef.size())) / float64(g.ef.m)
}

// GrafiteBound is the false-positive bound of a range of ell values
// (ell ≤ L) at bitsPerKey bits per key: ell/2^(B−2), at most 1.
func GrafiteBound(ell uint64, bitsPerKey int) float64 {
	return min(1, float64(ell)/math.Ldexp(1, bitsPerKey-2))
}
