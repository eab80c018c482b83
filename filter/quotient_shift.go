package filter

// Moving a stretch of slots by one, which Insert (to open a slot) and
// Delete (to close one) do to the tail of a cluster. Slots are moved a block
// at a time: each block's is_continuation word is shifted in one step and
// its packed remainders with a multi-word bit shift, so moving a cluster
// tail of 100 slots costs a few dozen word operations, not 100 slot copies.
// is_occupied bits never move: they belong to canonical slots.

// shiftUp moves slots [pos, e) to [pos+1, e] (cyclically), marking every
// moved slot shifted. Slot e must be empty; slot pos is left as it was, for
// the caller to overwrite.
func (f *Quotient) shiftUp(pos, e uint64) {
	if e >= pos {
		f.shiftUpRange(pos, e)
		return
	}
	f.shiftUpRange(0, e) // wraps: the low part first, it moves into free space
	f.copySlot(0, f.slots-1)
	f.shiftUpRange(pos, f.slots-1)
}

// shiftUpRange is shiftUp for a range that does not wrap: a <= b < slots.
// Blocks are processed from the top, so every source slot is read before it
// is overwritten.
func (f *Quotient) shiftUpRange(a, b uint64) {
	if a >= b {
		return
	}
	r := uint64(f.rbits)
	for blk := b >> 6; ; blk-- {
		lo := blk << 6
		if top := lo + 63; a <= top && top < b { // slot 63 crosses into the next block
			f.copySlot(top+1, top)
		}
		s0, s1 := max(a, lo)-lo, min(b, lo+63)-lo // in-block sources [s0, s1)
		if s0 < s1 {
			m := (uint64(1)<<(s1-s0) - 1) << s0
			base := blk * f.stride
			c := f.words[base+qfCont]
			f.words[base+qfCont] = c&^(m<<1) | (c&m)<<1
			f.words[base+qfShift] |= m << 1
			qfBitsUp(f.words[base+qfRem:base+f.stride], s0*r, s1*r, r)
		}
		if blk == a>>6 {
			return
		}
	}
}

// shiftDown moves slots (i, end) to [i, end-1) (cyclically) and blanks the
// slot end-1 (or i, if the range is empty). Shift bits move unchanged.
func (f *Quotient) shiftDown(i, end uint64) {
	last := f.prev(end)
	switch {
	case last == i:
	case end > i:
		f.shiftDownRange(i, end)
	case end == 0:
		f.shiftDownRange(i, f.slots)
	default: // wraps
		f.shiftDownRange(i, f.slots)
		f.copySlot(f.slots-1, 0)
		f.shiftDownRange(0, end)
	}
	f.setRem(last, 0)
	f.setBit(qfCont, last, false)
	f.setBit(qfShift, last, false)
}

// shiftDownRange moves slots [a+1, b) to [a, b-1), a < b <= slots, without
// wrapping. Blocks are processed from the bottom.
func (f *Quotient) shiftDownRange(a, b uint64) {
	if a+1 >= b {
		return
	}
	r := uint64(f.rbits)
	for blk := a >> 6; blk<<6 < b; blk++ {
		lo := blk << 6
		if a < lo && lo < b { // slot 0 crosses into the previous block
			f.copySlotKeepShift(lo-1, lo)
		}
		s0, s1 := max(a+1, lo+1)-lo, min(b, lo+64)-lo // in-block sources [s0, s1)
		if s0 < s1 {
			m := (uint64(1)<<(s1-s0) - 1) << s0 // s0 >= 1: no overflow
			base := blk * f.stride
			c := f.words[base+qfCont]
			f.words[base+qfCont] = c&^(m>>1) | (c&m)>>1
			sh := f.words[base+qfShift]
			f.words[base+qfShift] = sh&^(m>>1) | (sh&m)>>1
			qfBitsDown(f.words[base+qfRem:base+f.stride], s0*r, s1*r, r)
		}
	}
}

// copySlot copies slot src's remainder and is_continuation to dst and marks
// dst shifted.
func (f *Quotient) copySlot(dst, src uint64) {
	f.setRem(dst, f.rem(src))
	f.setBit(qfCont, dst, f.bit(qfCont, src))
	f.setBit(qfShift, dst, true)
}

// copySlotKeepShift copies remainder, is_continuation and is_shifted.
func (f *Quotient) copySlotKeepShift(dst, src uint64) {
	f.setRem(dst, f.rem(src))
	f.setBit(qfCont, dst, f.bit(qfCont, src))
	f.setBit(qfShift, dst, f.bit(qfShift, src))
}

// qfBitsUp moves bits [from, to) of the bit array a up by `by` bits, to
// [from+by, to+by) (which must fit in a). Destination words are written from
// the top down, so each is built from source bits not yet overwritten.
func qfBitsUp(a []uint64, from, to, by uint64) {
	dFrom, dTo := from+by, to+by
	for wi := (dTo - 1) >> 6; ; wi-- {
		wlo := wi << 6
		lo, hi := max(wlo, dFrom)-wlo, min(wlo+64, dTo)-wlo
		m := qfMask(lo, hi)
		a[wi] = a[wi]&^m | qfBits64(a, int64(wlo)-int64(by))&m
		if wlo <= dFrom {
			return
		}
	}
}

// qfBitsDown moves bits [from, to) of a down by `by` bits (by <= from).
// Destination words are written from the bottom up.
func qfBitsDown(a []uint64, from, to, by uint64) {
	dFrom, dTo := from-by, to-by
	for wi := dFrom >> 6; wi<<6 < dTo; wi++ {
		wlo := wi << 6
		lo, hi := max(wlo, dFrom)-wlo, min(wlo+64, dTo)-wlo
		m := qfMask(lo, hi)
		a[wi] = a[wi]&^m | qfBits64(a, int64(wlo+by))&m
	}
}

// qfMask returns a mask of bits [lo, hi), 0 <= lo < hi <= 64.
func qfMask(lo, hi uint64) uint64 {
	return (^uint64(0) >> (64 - (hi - lo))) << lo
}

// qfBits64 returns the 64 bits of a starting at bit start (bits outside a
// read as 0; start may be negative).
func qfBits64(a []uint64, start int64) uint64 {
	if start < 0 {
		return a[0] << uint64(-start)
	}
	w, s := uint64(start)>>6, uint64(start)&63
	var v uint64
	if w < uint64(len(a)) {
		v = a[w] >> s
	}
	if s != 0 && w+1 < uint64(len(a)) {
		v |= a[w+1] << (64 - s)
	}
	return v
}
