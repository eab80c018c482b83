package wal

// damage decides what the first bad bytes of a log at block[p] mean, and
// ends the log accordingly (doc.go, invariant 4):
//
//   - If an intact fragment (valid type, whole, checksum verified at its own
//     offset) starts anywhere at or after p, the damage has good data after
//     it: a crash cannot have left that, so it is corruption, reported with
//     the log's name and p's offset.
//   - Otherwise it is the torn tail of the last write(s) before a crash:
//     the log ends with io.EOF and DroppedBytes counts everything after the
//     last record returned.
//
// The search looks at every byte offset in the rest of p's block (the
// damaged length field can't be trusted to say where the next fragment
// is) and at the first byte of every later block, where the writer always
// starts a fragment. It reads the rest of the log through one block buffer:
// no allocation, however long the log. It returns the error Next returns.
func (r *Reader) damage(p int, reason string) error {
	at := r.blockOff + int64(p)
	rec := at
	if r.inRecord {
		rec = r.recStart
	}
	intact, err := r.intactFrom(p)
	if err != nil {
		return err
	}
	if intact {
		r.err = &CorruptionError{Name: r.name, Offset: at, Record: rec, Reason: reason}
		return r.err
	}
	return r.end()
}

// intactFrom reports whether an intact fragment starts at block[q] for some
// q >= p, or at the start of a later block. It consumes the rest of the log.
func (r *Reader) intactFrom(p int) (bool, error) {
	// Walk the type byte of each candidate header: only 4 of 256 values
	// are fragment types, so most offsets cost one compare.
	b := r.block[:r.n]
	for i := p + 6; i < len(b); i++ {
		if b[i]-byte(typeFull) <= byte(typeLast-typeFull) && intactAt(b, r.blockOff, i-6, r.bs) {
			return true, nil
		}
	}
	for r.n == r.bs {
		if err := r.load(); err != nil {
			return false, err
		}
		if intactAt(r.block[:r.n], r.blockOff, 0, r.bs) {
			return true, nil
		}
	}
	return false, nil
}
