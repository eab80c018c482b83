package filter

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
)

// An Elias–Fano sequence stores m sorted distinct codes below r in
// l low bits each plus a unary bitvector of their high parts, about
// 2 + l bits per code when r ≈ m·2^l (docs/format.md, "Grafite range
// filter"; the key-hash set, keyhashes.go, is the other user):
//
//	low    ⌈m·l/64⌉ u64 LE words: code i's low l bits at bit i·l,
//	       least significant first, straddling words where they must;
//	       bits from m·l on are 0
//	high   ⌈(m+nb)/64⌉ u64 LE words: nb = ⌊(r−1)/2^l⌋ + 1 buckets; code i,
//	       of high part c>>l, is a 1 at bit (c>>l) + i, and bucket j ends
//	       with a 0, the j-th zero; bits from m+nb on are 0
//	sample (⌊(nb−1)/efSampleRate⌋ + 1) u32 LE: the position of zero
//	       j·efSampleRate in high, for j = 0, 1, …
//
// A successor search needs only select0 (where bucket j starts), so only
// zeros are sampled: the codes of a bucket follow its start, and the
// next nonempty bucket is a scan for the next 1. One sample per 256
// zeros costs 32/256 bits per bucket, and a select0 reads about 256
// zeros and as many ones, eight words.
const efSampleRate = 256

type eliasFano struct {
	low, high, sample []byte
	m                 int
	l                 uint
	nbits             uint64 // m + nb
}

// sortCodesInsertion is the most codes of one bucket sortCodes sorts by
// insertion, where a comparison sort's setup costs more than it saves.
const sortCodesInsertion = 32

// sortCodes returns codes below r sorted and without duplicates, in out
// (of len(codes) at least), in linear time: a counting sort by high part
// (c >> l, about one code per bucket), then an insertion sort inside each
// bucket. A comparison sort of n random codes cost most of a table's
// filter build. A bucket of more than sortCodesInsertion codes, which
// keys chosen for their hashes can fill with all of them, gets a
// comparison sort: insertion sorting 100,000 codes in one bucket took
// 36 µs per code, slices.Sort 80 ns, and random codes take 15
// (BenchmarkSortCodes; BenchmarkGrafiteBuild did not move).
func sortCodes(codes []uint64, l uint, r uint64, out []uint64) []uint64 {
	nb := (r-1)>>l + 1
	start := make([]uint32, nb+1) // start[j]: the first slot of bucket j
	for _, c := range codes {
		start[c>>l+1]++
	}
	for j := range nb {
		start[j+1] += start[j]
	}
	out = out[:len(codes)]
	for _, c := range codes {
		out[start[c>>l]] = c
		start[c>>l]++ // ends as bucket j's end: the next one's start
	}
	lo := uint32(0)
	for _, hi := range start[:nb] {
		if b := out[lo:hi]; len(b) > sortCodesInsertion {
			slices.Sort(b)
		} else {
			for i := 1; i < len(b); i++ {
				for j := i; j > 0 && b[j] < b[j-1]; j-- {
					b[j], b[j-1] = b[j-1], b[j]
				}
			}
		}
		lo = hi
	}
	return slices.Compact(out)
}

// efLayout returns the byte lengths of the three parts of a sequence of
// m codes below r with l low bits, and nb, its number of buckets.
// REQUIRES: r ≥ 1, and m·l and m + nb far from overflowing (both callers
// bound m and nb by 2^31).
func efLayout(m uint64, l uint, r uint64) (lowLen, highLen, sampleLen, nb uint64) {
	nb = (r-1)>>l + 1
	return 8 * ((m*uint64(l) + 63) / 64), 8 * ((m + nb + 63) / 64), 4 * ((nb-1)/efSampleRate + 1), nb
}

// appendEliasFano appends the sequence of codes, sorted, distinct and
// below r, to dst.
func appendEliasFano(dst []byte, codes []uint64, l uint, r uint64) []byte {
	m := uint64(len(codes))
	lowLen, highLen, sampleLen, nb := efLayout(m, l, r)
	// One allocation of the final size, bits set in place: a table's
	// filter is built once, and copies and regrowth were most of its cost.
	start := len(dst)
	dst = slices.Grow(dst, int(lowLen+highLen+sampleLen))
	dst = dst[:start+int(lowLen+highLen)]
	low, high := dst[start:start+int(lowLen)], dst[start+int(lowLen):]
	clear(low)
	clear(high)
	or := func(b []byte, w, v uint64) {
		binary.LittleEndian.PutUint64(b[8*w:], binary.LittleEndian.Uint64(b[8*w:])|v)
	}
	for i, c := range codes {
		if l > 0 {
			v, at := c&(1<<l-1), uint64(i)*uint64(l)
			or(low, at/64, v<<(at%64))
			if at%64+uint64(l) > 64 {
				or(low, at/64+1, v>>(64-at%64))
			}
		}
		p := c>>l + uint64(i)
		or(high, p/64, 1<<(p%64))
	}
	ef := eliasFano{high: high, nbits: m + nb}
	ef.scan(func(_, pos uint64) bool {
		dst = binary.LittleEndian.AppendUint32(dst, uint32(pos))
		return true
	})
	return dst
}

// openEliasFano checks that data is exactly a sequence of m codes below r
// with l low bits and returns it, aliasing data. It verifies the high
// bitvector's structure (m ones, nothing past its end, a final zero),
// every sample, which together keep every search inside data, and that
// the bits past the last low part are 0, so that a set has one encoding.
// It does not check that the codes are sorted: an unsorted sequence,
// which only corrupt bytes that passed the block checksum can make,
// answers wrongly but never reads out of bounds.
func openEliasFano(data []byte, m int, l uint, r uint64) (eliasFano, error) {
	if nb := (r-1)>>l + 1; nb > 1<<31 || uint64(m) > 1<<31 {
		return eliasFano{}, fmt.Errorf("%w: Elias–Fano sequence of %d codes in %d buckets", ErrCorrupt, m, nb)
	}
	lowLen, highLen, sampleLen, nb := efLayout(uint64(m), l, r)
	ef := eliasFano{m: m, l: l, nbits: uint64(m) + nb}
	if uint64(len(data)) != lowLen+highLen+sampleLen {
		return eliasFano{}, fmt.Errorf("%w: Elias–Fano sequence of %d codes and %d buckets needs %d bytes, has %d",
			ErrCorrupt, m, nb, lowLen+highLen+sampleLen, len(data))
	}
	ef.low = data[:lowLen:lowLen]
	ef.high = data[lowLen : lowLen+highLen : lowLen+highLen]
	ef.sample = data[lowLen+highLen:]
	if used := uint64(m) * uint64(l) % 64; used != 0 && binary.LittleEndian.Uint64(ef.low[lowLen-8:])>>used != 0 {
		return eliasFano{}, fmt.Errorf("%w: Elias–Fano sequence has bits set past its %d-bit low part", ErrCorrupt, uint64(m)*uint64(l))
	}
	if last := ef.word(highLen/8 - 1); ef.nbits%64 != 0 && last>>(ef.nbits%64) != 0 {
		return eliasFano{}, fmt.Errorf("%w: Elias–Fano sequence has bits set past its %d-bit high part", ErrCorrupt, ef.nbits)
	}
	var bad error
	ones, zeros := ef.scan(func(j, pos uint64) bool {
		// A count m too large by a few leaves the lengths unchanged and
		// nb + 1 zeros in the first m + nb bits: zero nb has no sample
		// when nb is a multiple of efSampleRate.
		if j >= uint64(len(ef.sample)/4) {
			bad = fmt.Errorf("%w: Elias–Fano high part has more than its %d zeros", ErrCorrupt, nb)
		} else if got := ef.sampleAt(j); uint64(got) != pos {
			bad = fmt.Errorf("%w: Elias–Fano sample %d is %d, zero %d is at %d", ErrCorrupt, j, got, j*efSampleRate, pos)
		}
		return bad == nil
	})
	if bad != nil {
		return eliasFano{}, bad
	}
	if ones != uint64(m) || zeros != nb || !ef.isZero(ef.nbits-1) {
		return eliasFano{}, fmt.Errorf("%w: Elias–Fano high part of %d ones and %d zeros (want %d and %d, ending in a zero)",
			ErrCorrupt, ones, zeros, m, nb)
	}
	return ef, nil
}

// appendCodes appends the m codes to dst in their stored order, one pass
// over the high part: the i-th one, at position p, is code i of high
// part p − i.
func (ef *eliasFano) appendCodes(dst []uint64) []uint64 {
	dst = slices.Grow(dst, ef.m)
	i := uint64(0)
	for w := range uint64(len(ef.high) / 8) {
		for x := ef.word(w); x != 0; x &= x - 1 {
			p := 64*w + uint64(bits.TrailingZeros64(x))
			dst = append(dst, (p-i)<<ef.l|ef.lowAt(i))
			i++
		}
	}
	return dst
}

// scan counts the ones and zeros of the high part's first nbits bits,
// calling sampled with j and the position of zero j·efSampleRate for
// each j in order until it returns false: what the samples must hold.
func (ef *eliasFano) scan(sampled func(j, pos uint64) bool) (ones, zeros uint64) {
	next := uint64(0) // the zero the next sample names
	for w := range uint64(len(ef.high) / 8) {
		valid := ^uint64(0)
		if rest := ef.nbits - 64*w; rest < 64 {
			valid = 1<<rest - 1
		}
		word := ef.word(w) & valid
		z := ^word & valid
		c := uint64(bits.OnesCount64(z))
		for ; next < zeros+c; next += efSampleRate {
			if !sampled(next/efSampleRate, 64*w+selectInWord(z, int(next-zeros))) {
				return ones, zeros
			}
		}
		ones += uint64(bits.OnesCount64(word))
		zeros += c
	}
	return ones, zeros
}

func (ef *eliasFano) word(w uint64) uint64 { return binary.LittleEndian.Uint64(ef.high[8*w:]) }

func (ef *eliasFano) sampleAt(j uint64) uint32 { return binary.LittleEndian.Uint32(ef.sample[4*j:]) }

func (ef *eliasFano) isZero(p uint64) bool { return ef.word(p/64)>>(p%64)&1 == 0 }

func (ef *eliasFano) size() int { return len(ef.low) + len(ef.high) + len(ef.sample) }

// lowAt returns the low l bits of code i.
func (ef *eliasFano) lowAt(i uint64) uint64 {
	if ef.l == 0 {
		return 0
	}
	at := i * uint64(ef.l)
	w, s := at/64, at%64
	v := binary.LittleEndian.Uint64(ef.low[8*w:]) >> s
	if s+uint64(ef.l) > 64 {
		v |= binary.LittleEndian.Uint64(ef.low[8*(w+1):]) << (64 - s)
	}
	return v & (1<<ef.l - 1)
}

// anyIn reports whether a code lies in [lo, hi], lo ≤ hi < r: whether
// the least code ≥ lo exists and is ≤ hi.
func (ef *eliasFano) anyIn(lo, hi uint64) bool {
	b := lo >> ef.l
	p := uint64(0) // where bucket b starts
	if b > 0 {
		p = ef.select0(b-1) + 1
	}
	i := p - b // codes before bucket b: the ones before p
	for ; p < ef.nbits && !ef.isZero(p); p, i = p+1, i+1 {
		if c := b<<ef.l | ef.lowAt(i); c >= lo {
			return c <= hi
		}
	}
	// Every code of bucket b is below lo; the next code, if any, lies in
	// a later bucket: its high part is its position less its index.
	p = ef.nextOne(p + 1)
	if p >= ef.nbits {
		return false
	}
	return (p-i)<<ef.l|ef.lowAt(i) <= hi
}

// select0 returns the position of zero k of the high part, k < nb.
func (ef *eliasFano) select0(k uint64) uint64 {
	pos := uint64(ef.sampleAt(k / efSampleRate))
	rem := int(k % efSampleRate)
	w := pos / 64
	z := ^ef.word(w) &^ (1<<(pos%64) - 1)
	for {
		c := bits.OnesCount64(z)
		if rem < c {
			return w*64 + selectInWord(z, rem)
		}
		rem -= c
		w++
		z = ^ef.word(w)
	}
}

// nextOne returns the position of the first 1 at p or after, nbits if
// there is none.
func (ef *eliasFano) nextOne(p uint64) uint64 {
	words := uint64(len(ef.high) / 8)
	w := p / 64
	if w >= words {
		return ef.nbits
	}
	x := ef.word(w) &^ (1<<(p%64) - 1)
	for x == 0 {
		if w++; w >= words {
			return ef.nbits
		}
		x = ef.word(w)
	}
	return w*64 + uint64(bits.TrailingZeros64(x))
}

// selectInWord returns the position of set bit k (from 0) of x, which has
// more than k set bits: the byte that holds it by popcounts, then the bit.
func selectInWord(x uint64, k int) uint64 {
	pos := uint64(0)
	for c := bits.OnesCount8(uint8(x)); k >= c; c = bits.OnesCount8(uint8(x)) {
		k -= c
		x >>= 8
		pos += 8
	}
	for range k {
		x &= x - 1
	}
	return pos + uint64(bits.TrailingZeros8(uint8(x)))
}
