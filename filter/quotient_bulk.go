package filter

import "fmt"

// Whole-filter operations: Merge, Subtract and Grow. Each streams the
// fingerprints of its inputs in ascending order (qfCursor), combines the
// streams like the merge step of merge sort, and rebuilds a new table by
// appending in order, so each costs time linear in the slots and
// fingerprints involved. The receiver is replaced only when the whole
// operation succeeded.

// qfCursor yields the fingerprints (quotient<<rbits | remainder) of a filter
// in ascending order, duplicates included.
//
// The smallest fingerprint is the head of the run of the smallest occupied
// quotient qmin. Reading the slots cyclically from that run's start yields
// every fingerprint in ascending order: slots before it hold only the tail
// of a cluster that wrapped around the end of the table, whose quotients are
// the largest. The quotient of each slot is tracked by advancing to the next
// occupied quotient at every run head.
type qfCursor struct {
	f       *Quotient
	pos, q  uint64
	left    int // fingerprints not yet returned
	started bool
}

func (f *Quotient) cursor() qfCursor {
	c := qfCursor{f: f, left: f.n}
	if f.n == 0 {
		return c
	}
	c.q = f.nextOccupied(f.slots - 1) // first occupied quotient from slot 0
	c.pos = f.runStart(c.q)
	return c
}

// next returns the next fingerprint; ok is false at the end.
func (c *qfCursor) next() (fp uint64, ok bool) {
	f := c.f
	if c.left == 0 {
		return 0, false
	}
	for f.isEmpty(c.pos) {
		c.pos = f.next(c.pos)
	}
	if c.started && !f.bit(qfCont, c.pos) {
		c.q = f.nextOccupied(c.q)
	}
	c.started = true
	fp = c.q<<f.rbits | f.rem(c.pos)
	c.pos = f.next(c.pos)
	c.left--
	return fp, true
}

// qfBuilder fills an empty filter with fingerprints given in ascending
// order. Each goes to the slot after the previous one or to its canonical
// slot, whichever is later, in O(1): nothing ever shifts. Only fingerprints
// whose run would pass the last slot, and so wrap around to the clusters at
// the start of the table, go through insert, which shifts those clusters.
type qfBuilder struct {
	f        *Quotient
	next     uint64 // first slot after the last appended fingerprint
	lastQ    uint64
	appended bool
}

func (b *qfBuilder) add(fp uint64) {
	f := b.f
	q, r := fp>>f.rbits, fp&f.rmask
	pos := max(q, b.next)
	if pos >= f.slots { // wraps around: from here on, the general path
		f.insert(q, r)
		b.next = f.slots
		return
	}
	f.setBit(qfOcc, q, true)
	f.setRem(pos, r)
	f.setBit(qfCont, pos, b.appended && q == b.lastQ)
	f.setBit(qfShift, pos, pos != q)
	f.n++
	b.next, b.lastQ, b.appended = pos+1, q, true
}

// compatible checks that other's fingerprints can be compared with f's.
func (f *Quotient) compatible(op string, other *Quotient) error {
	if f.qbits+f.rbits != other.qbits+other.rbits {
		return fmt.Errorf("%w: %s: fingerprint widths differ (%d+%d bits vs %d+%d bits)",
			ErrIncompatible, op, f.qbits, f.rbits, other.qbits, other.rbits)
	}
	return nil
}

// Merge adds every fingerprint occurrence of other to f, keeping f's qbits
// and rbits (other's fingerprints are re-split when its qbits differ). The
// fingerprint widths qbits+rbits must be equal (ErrIncompatible otherwise).
// If the sum of both Len()s exceeds f.Slots(), Merge returns ErrFull and f
// is unchanged: Grow f first. Time is linear in both filters' slots; it
// allocates the new table.
func (f *Quotient) Merge(other *Quotient) error {
	if err := f.compatible("Merge", other); err != nil {
		return err
	}
	if uint64(f.n)+uint64(other.n) > f.slots {
		return fmt.Errorf("%w: Merge: %d + %d fingerprints > %d slots", ErrFull, f.n, other.n, f.slots)
	}
	out := &Quotient{}
	out.init(f.qbits, f.rbits)
	b := &qfBuilder{f: out}
	x, y := f.cursor(), other.cursor()
	a, aok := x.next()
	c, cok := y.next()
	for aok || cok {
		if aok && (!cok || a <= c) {
			b.add(a)
			a, aok = x.next()
		} else {
			b.add(c)
			c, cok = y.next()
		}
	}
	*f = *out
	return nil
}

// Subtract removes from f one occurrence per fingerprint occurrence in
// other: the inverse of Merge. The fingerprint widths must be equal
// (ErrIncompatible otherwise). If other holds an occurrence f does not, it
// returns an error wrapping ErrMissing and f is unchanged. Time is linear in
// both filters' slots; it allocates the new table.
func (f *Quotient) Subtract(other *Quotient) error {
	if err := f.compatible("Subtract", other); err != nil {
		return err
	}
	if other.n > f.n {
		return fmt.Errorf("%w: Subtract: %d fingerprints from %d", ErrMissing, other.n, f.n)
	}
	out := &Quotient{}
	out.init(f.qbits, f.rbits)
	b := &qfBuilder{f: out}
	x, y := f.cursor(), other.cursor()
	a, aok := x.next()
	c, cok := y.next()
	for aok {
		switch {
		case cok && c < a:
			return fmt.Errorf("%w: Subtract: fingerprint %#x", ErrMissing, c)
		case cok && c == a:
			c, cok = y.next() // cancel one occurrence
		default:
			b.add(a)
		}
		a, aok = x.next()
	}
	if cok {
		return fmt.Errorf("%w: Subtract: fingerprint %#x", ErrMissing, c)
	}
	*f = *out
	return nil
}

// Grow doubles the slots (qbits+1, rbits-1), keeping every fingerprint: the
// fingerprint width qbits+rbits, and so each fingerprint, is unchanged, only
// split one bit later. Hence the FPR at a fixed number of keys n,
// 1-exp(-n·2^-(qbits+rbits)), is unchanged too, while the load factor
// halves. Measured (TestQuotientGrowFPR, 2^12 slots at 90% load, rbits 10):
// the same 200,000 absent keys give exactly the same false positives before
// and after each of nine Grows, down to rbits 1. (Growing is not a way to
// lower the FPR: a filter sized for the final n from the start has the
// same fingerprint width and FPR for fewer slots' worth of time spent
// shifting.) It returns an error wrapping
// ErrFull, and f is unchanged, when rbits would reach 0 or qbits would
// exceed 32. Time is linear; it allocates the new table.
func (f *Quotient) Grow() error {
	if f.rbits <= 1 || f.qbits >= maxQuotientQBits {
		return fmt.Errorf("%w: Grow: cannot split qbits=%d rbits=%d further", ErrFull, f.qbits, f.rbits)
	}
	out := &Quotient{}
	out.init(f.qbits+1, f.rbits-1)
	b := &qfBuilder{f: out}
	x := f.cursor()
	for fp, ok := x.next(); ok; fp, ok = x.next() {
		b.add(fp)
	}
	*f = *out
	return nil
}
