package filter

import "math/bits"

// Slot storage of the quotient filter. Slot i lives in block i/64, bit i%64
// of the block's three metadata words, and at bits [(i%64)·rbits, +rbits) of
// the block's remainder area (rbits words). Invariant: bits of the last
// block beyond Slots() (only when there are fewer than 64) are always 0.

// Offsets of the metadata words inside a block.
const (
	qfOcc   = 0 // is_occupied: a run has this slot as canonical slot
	qfCont  = 1 // is_continuation: this slot continues the previous slot's run
	qfShift = 2 // is_shifted: the fingerprint here is not in its canonical slot
	qfRem   = 3 // first remainder word
)

// meta returns the metadata word kind of block b.
func (f *Quotient) meta(kind, b uint64) uint64 { return f.words[b*f.stride+kind] }

func (f *Quotient) bit(kind, i uint64) bool {
	return f.words[(i>>6)*f.stride+kind]>>(i&63)&1 != 0
}

func (f *Quotient) setBit(kind, i uint64, v bool) {
	w := &f.words[(i>>6)*f.stride+kind]
	if v {
		*w |= 1 << (i & 63)
	} else {
		*w &^= 1 << (i & 63)
	}
}

// valid returns the mask of real slots in block b.
func (f *Quotient) valid(b uint64) uint64 {
	if b == f.nblocks-1 {
		return f.lastValid
	}
	return ^uint64(0)
}

func (f *Quotient) isEmpty(i uint64) bool {
	b := (i >> 6) * f.stride
	return (f.words[b+qfOcc]|f.words[b+qfShift])>>(i&63)&1 == 0
}

func (f *Quotient) next(i uint64) uint64 {
	if i+1 == f.slots {
		return 0
	}
	return i + 1
}

func (f *Quotient) prev(i uint64) uint64 {
	if i == 0 {
		return f.slots - 1
	}
	return i - 1
}

// dist is the number of steps of next from slot i to slot j.
func (f *Quotient) dist(i, j uint64) uint64 {
	if j < i {
		return j + f.slots - i
	}
	return j - i
}

// rem returns the remainder stored in slot i.
func (f *Quotient) rem(i uint64) uint64 {
	off := (i & 63) * uint64(f.rbits)
	w := (i>>6)*f.stride + qfRem + off>>6
	sh := off & 63
	v := f.words[w] >> sh
	if sh+uint64(f.rbits) > 64 {
		v |= f.words[w+1] << (64 - sh)
	}
	return v & f.rmask
}

// setRem stores remainder v (< 2^rbits) in slot i.
func (f *Quotient) setRem(i, v uint64) {
	off := (i & 63) * uint64(f.rbits)
	w := (i>>6)*f.stride + qfRem + off>>6
	sh := off & 63
	f.words[w] = f.words[w]&^(f.rmask<<sh) | v<<sh
	if sh+uint64(f.rbits) > 64 {
		lo := 64 - sh
		f.words[w+1] = f.words[w+1]&^(f.rmask>>lo) | v>>lo
	}
}

// linesRead counts the lines a lookup read, given its quotient's cluster
// start cs and the last slot whose remainder it read: from the metadata of
// cs's block to the later of last's remainder and the continuation bit of
// the slot after last (a run starts at or after its quotient, so the
// quotient's metadata lies before both). Slots are counted from cs, so a
// cluster that wraps past the table's end counts as if the table went on
// (its length in words is a whole number of lines once it has 8 blocks).
func (f *Quotient) linesRead(cs, last uint64) int {
	word := func(i, off uint64) uint64 { // in block i's words, i counted from cs
		if i < cs {
			i += f.slots
		}
		return (i>>6)*f.stride + off
	}
	remEnd := word(last, qfRem+((last&63)*uint64(f.rbits)+uint64(f.rbits)-1)>>6)
	return int(max(remEnd, word(last+1, qfCont))>>3 - word(cs, qfOcc)>>3 + 1)
}

// runStart returns the slot where the run of quotient fq starts, or, when fq
// has no run, the slot where it would be inserted: the slot after the runs of
// all occupied quotients of fq's cluster that precede fq. Slot fq must be
// non-empty. It walks back to the cluster start (the nearest slot at or
// before fq that is not shifted), counts the occupied quotients k in
// [start, fq), and skips k runs forward: the answer is the k-th slot at or
// after start whose is_continuation is 0. Both walks go a word at a time.
func (f *Quotient) runStart(fq uint64) uint64 {
	start, k := f.clusterStart(fq)
	return f.selectFree(qfCont, start, k)
}

// clusterStart returns the start of fq's cluster (the nearest slot at or
// before fq, cyclically, that is not shifted) and the number k of occupied
// quotients in [start, fq). Slot fq must be non-empty.
func (f *Quotient) clusterStart(fq uint64) (start uint64, k int) {
	b, o := fq>>6, fq&63
	below := uint64(1)<<o - 1
	occ, uns := f.meta(qfOcc, b), ^f.meta(qfShift, b)&(below|1<<o)
	if uns != 0 { // the common case: the cluster starts in fq's block
		p := uint64(63 - bits.LeadingZeros64(uns))
		return b<<6 | p, bits.OnesCount64(occ & below &^ (1<<p - 1))
	}
	k = bits.OnesCount64(occ & below)
	for n := uint64(0); n <= f.nblocks; n++ {
		if b == 0 {
			b = f.nblocks
		}
		b--
		occ, uns = f.meta(qfOcc, b), ^f.meta(qfShift, b)&f.valid(b)
		if uns != 0 {
			p := uint64(63 - bits.LeadingZeros64(uns))
			return b<<6 | p, k + bits.OnesCount64(occ&^(1<<p-1))
		}
		k += bits.OnesCount64(occ)
	}
	return fq, 0 // impossible in a valid filter (invariant 2)
}

// selectFree returns the k-th (from 0) slot at or after i, cyclically, whose
// metadata bit kind is 0.
func (f *Quotient) selectFree(kind, i uint64, k int) uint64 {
	b := i >> 6
	w := ^f.meta(kind, b) & f.valid(b) &^ (1<<(i&63) - 1)
	for n := uint64(0); n <= f.nblocks; n++ {
		c := bits.OnesCount64(w)
		if k < c {
			return b<<6 | uint64(qfSelect64(w, k))
		}
		k -= c
		b++
		if b == f.nblocks {
			b = 0
		}
		w = ^f.meta(kind, b) & f.valid(b)
	}
	return i // impossible in a valid filter
}

// nextEmpty returns the first empty slot at or after i, cyclically. The
// filter must not be full.
func (f *Quotient) nextEmpty(i uint64) uint64 {
	b := i >> 6
	w := ^(f.meta(qfOcc, b) | f.meta(qfShift, b)) & f.valid(b) &^ (1<<(i&63) - 1)
	for n := uint64(0); n <= f.nblocks; n++ {
		if w != 0 {
			return b<<6 | uint64(bits.TrailingZeros64(w))
		}
		b++
		if b == f.nblocks {
			b = 0
		}
		w = ^(f.meta(qfOcc, b) | f.meta(qfShift, b)) & f.valid(b)
	}
	return i // impossible when the filter is not full
}

// nextOccupied returns the first occupied quotient strictly after q,
// cyclically (q itself if it is the only one).
func (f *Quotient) nextOccupied(q uint64) uint64 {
	i := f.next(q)
	b := i >> 6
	w := f.meta(qfOcc, b) &^ (1<<(i&63) - 1)
	for n := uint64(0); n <= f.nblocks; n++ {
		if w != 0 {
			return b<<6 | uint64(bits.TrailingZeros64(w))
		}
		b++
		if b == f.nblocks {
			b = 0
		}
		w = f.meta(qfOcc, b)
	}
	return q
}

// qfScan walks the slots whose metadata bit kind is set (or, if inv, clear),
// cyclically, a word at a time.
type qfScan struct {
	f       *Quotient
	kind, b uint64
	w       uint64 // bits of block b not yet returned
	inv     bool
}

func (f *Quotient) scan(kind, from uint64, inv bool) qfScan {
	s := qfScan{f: f, kind: kind, b: from >> 6, inv: inv}
	s.w = s.word() &^ (1<<(from&63) - 1)
	return s
}

func (s *qfScan) word() uint64 {
	w := s.f.meta(s.kind, s.b)
	if s.inv {
		w = ^w & s.f.valid(s.b)
	}
	return w
}

// next returns the next matching slot (the last one again if there is none,
// which callers' bounds rule out).
func (s *qfScan) next() uint64 {
	for n := uint64(0); s.w == 0 && n <= s.f.nblocks; n++ {
		s.b++
		if s.b == s.f.nblocks {
			s.b = 0
		}
		s.w = s.word()
	}
	t := uint64(bits.TrailingZeros64(s.w)) & 63
	s.w &= s.w - 1
	return s.b<<6 | t
}

// qfSelect64 returns the position of the k-th (from 0) set bit of x, which
// has more than k set bits. Broadword (Vigna, "Broadword implementation of
// rank/select queries"): prefix popcounts of the bytes, in parallel, find the
// byte; a table finds the bit inside it.
func qfSelect64(x uint64, k int) int {
	const l8, h8 = 0x0101010101010101, 0x8080808080808080
	s := x - x>>1&0x5555555555555555
	s = s&0x3333333333333333 + s>>2&0x3333333333333333
	s = (s + s>>4) & 0x0f0f0f0f0f0f0f0f
	s *= l8 // byte i: set bits in bytes 0..i
	// Byte i's top bit survives iff k >= s_i; counting them gives the byte.
	b := uint(bits.OnesCount64(((uint64(k)*l8|h8)-s)&h8)) * 8
	before := s << 8 >> b & 0xff // set bits below byte b/8
	return int(b) + int(qfSelectInByte[(x>>b&0xff)<<3|(uint64(k)-before)])
}

// qfSelectInByte[v<<3|k] is the position of the k-th set bit of byte v.
var qfSelectInByte = func() (t [256 * 8]uint8) {
	for v := range 256 {
		k := 0
		for i := range 8 {
			if v>>i&1 != 0 {
				t[v<<3|k] = uint8(i)
				k++
			}
		}
	}
	return t
}()
