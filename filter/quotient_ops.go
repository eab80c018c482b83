package filter

// Point operations of the quotient filter: Insert, MayContain, Delete and
// their hash-taking twins. None allocates.

// Insert adds one occurrence of key. It returns ErrFull, leaving the filter
// unchanged, when all Slots() are taken.
func (f *Quotient) Insert(key []byte) error { return f.InsertHash(Hash(key)) }

// MayContain reports whether key may have been inserted (and not deleted as
// often as inserted). False is certain; true is wrong with probability
// about LoadFactor()·2^-RBits() for an absent key.
func (f *Quotient) MayContain(key []byte) bool { return f.MayContainHash(Hash(key)) }

// Delete removes one occurrence of key's fingerprint and reports whether
// there was one. Deleting a key that was never inserted may remove another
// key's colliding fingerprint (and so later cause a false negative for it):
// callers delete only keys they inserted.
func (f *Quotient) Delete(key []byte) bool { return f.DeleteHash(Hash(key)) }

// InsertHash is Insert for a caller that already has Hash(key).
func (f *Quotient) InsertHash(h uint64) error {
	if uint64(f.n) >= f.slots {
		return ErrFull
	}
	fq, fr := f.split(h)
	f.insert(fq, fr)
	return nil
}

// insert places fingerprint (fq, fr); the filter has a free slot.
func (f *Quotient) insert(fq, fr uint64) {
	f.n++
	if f.isEmpty(fq) { // 1. canonical slot free: the common case at low load
		f.setBit(qfOcc, fq, true)
		f.setRem(fq, fr)
		return
	}
	// 2. Find where fq's run starts (or would start) and the slot inside
	// it that keeps the run sorted.
	wasOcc := f.bit(qfOcc, fq)
	s := f.runStart(fq)
	f.setBit(qfOcc, fq, true)
	pos, cont, headDemoted := s, false, false
	if wasOcc {
		for f.rem(pos) < fr {
			pos = f.next(pos)
			if !f.bit(qfCont, pos) {
				break
			}
		}
		cont = pos != s        // inside or after the run: a continuation
		headDemoted = pos == s // new smallest remainder: the old head continues it
	}
	// 3. Shift slots [pos, first empty) right by one; everything moved is
	// now past its canonical slot. is_occupied bits stay: they belong to
	// canonical slots, not to fingerprints.
	f.shiftUp(pos, f.nextEmpty(pos))
	if headDemoted {
		f.setBit(qfCont, f.next(pos), true)
	}
	// 4. Write the new fingerprint.
	f.setRem(pos, fr)
	f.setBit(qfCont, pos, cont)
	f.setBit(qfShift, pos, pos != fq)
}

// MayContainHash is MayContain for a caller that already has Hash(key).
func (f *Quotient) MayContainHash(h uint64) bool {
	if f.n == 0 {
		return false
	}
	fq, fr := f.split(h)
	if !f.bit(qfOcc, fq) {
		return false
	}
	for i := f.runStart(fq); ; {
		r := f.rem(i)
		if r >= fr {
			return r == fr
		}
		i = f.next(i)
		if !f.bit(qfCont, i) {
			return false
		}
	}
}

// DeleteHash is Delete for a caller that already has Hash(key).
func (f *Quotient) DeleteHash(h uint64) bool {
	if f.n == 0 {
		return false
	}
	fq, fr := f.split(h)
	return f.deleteFP(fq, fr)
}

// deleteFP removes one occurrence of fingerprint (fq, fr) and reports
// whether there was one.
func (f *Quotient) deleteFP(fq, fr uint64) bool {
	if !f.bit(qfOcc, fq) {
		return false
	}
	// 1. Find the occurrence.
	s := f.runStart(fq)
	i := s
	for {
		r := f.rem(i)
		if r == fr {
			break
		}
		if r > fr {
			return false
		}
		i = f.next(i)
		if !f.bit(qfCont, i) {
			return false
		}
	}
	f.remove(fq, s, i)
	return true
}

// remove deletes the fingerprint in slot i, which belongs to the run of
// quotient fq starting at slot s.
func (f *Quotient) remove(fq, s, i uint64) {
	f.n--
	headRemoved := i == s
	if headRemoved && !f.bit(qfCont, f.next(i)) {
		f.setBit(qfOcc, fq, false) // the run is now empty
	}
	// Close the gap: the rest of the cluster, up to a slot that is empty or
	// at its canonical place (not shifted), moves left by one.
	end := f.selectFree(qfShift, f.next(i), 0)
	moved := f.dist(f.next(i), end)
	f.shiftDown(i, end)
	if moved == 0 {
		return
	}
	newHead := headRemoved && f.bit(qfCont, i)
	if newHead {
		f.setBit(qfCont, i, false) // the run's second fingerprint is its head now
	}
	// A moved run head stays shifted unless it landed on its canonical
	// slot. Run heads take the occupied quotients after fq in order, so
	// two cursors walk the run heads and the occupied bits together.
	heads, occupied := f.scan(qfCont, i, true), f.scan(qfOcc, f.next(fq), false)
	for q := fq; ; {
		h := heads.next()
		d := f.dist(i, h)
		if d >= moved {
			return
		}
		if !(d == 0 && newHead) {
			q = occupied.next()
		}
		if h == q {
			f.setBit(qfShift, h, false)
		}
	}
}
