package wal

import (
	"encoding/binary"
	"hash/crc32"
)

// damage decides what the first bad bytes of a log at block[p] mean, and
// ends the log accordingly (doc.go, invariant 4):
//
//   - If an intact fragment (valid type, whole, checksum verified at its own
//     offset as this log's) starts anywhere at or after p, the damage has
//     good data after it: a crash cannot have left that, so it is
//     corruption, reported with the log's name and p's offset. An older
//     log's fragments in a reused file are not this log's: they verify
//     with another number (recyclable), or are of the other kind once the
//     first fragment has fixed this log's.
//   - Otherwise it is the torn tail of the last write(s) before a crash:
//     the log ends with io.EOF and DroppedBytes counts everything after the
//     last record returned up to the last non-zero byte.
//
// The search looks at every byte offset in the rest of p's block (the
// damaged length field can't be trusted to say where the next fragment
// is) and at the first byte of every later block, where the writer always
// starts a fragment. It reads the rest of the log through one block buffer:
// no allocation, however long the log. It returns the error Next returns.
//
// A synced log (NewSyncedReader) is judged by invariant 6 first: cut says
// the damage is a fragment or header cut short by the end of the file,
// the one damage an unfinished final Append leaves besides zeros. Other
// damage is a torn tail only if nothing but zeros follows it, and a cut
// fragment whose bytes verify at the length actually present had its
// length field damaged: it was complete.
func (r *Reader) damage(p int, reason string, cut bool) error {
	at := r.blockOff + int64(p)
	rec := at
	if r.inRecord {
		rec = r.recStart
	}
	corrupt := func(reason string) error {
		r.err = &CorruptionError{Name: r.name, Offset: at, Record: rec, Reason: reason}
		return r.err
	}
	if r.synced && !cut {
		zero, err := r.zeroFrom(p)
		if err != nil {
			return err
		}
		if !zero {
			return corrupt(reason + ", not followed by zeros only")
		}
		return r.end()
	}
	if r.synced && r.verifiesAsPresent(p) {
		return corrupt("length field damaged: the fragment verifies at the length present")
	}
	intact, err := r.intactFrom(p)
	if err != nil {
		return err
	}
	if intact {
		return corrupt(reason)
	}
	return r.end()
}

// verifiesAsPresent reports whether the whole header at block[p:] and the
// bytes after it to the end of the file form an intact fragment once its
// length field is replaced by their count: a complete final fragment
// whose length was raised past the end of the file, which would otherwise
// pass for one cut short.
func (r *Reader) verifiesAsPresent(p int) bool {
	if r.n-p < headerSize {
		return false
	}
	m := r.n - p - headerSize
	t := fragmentType(r.block[p+6])
	if framingError(t, p, m, r.bs, r.kinds) != "" {
		return false
	}
	hdr := [3]byte{byte(m), byte(m >> 8), byte(t)}
	crc := crc32.Update(checksum(r.blockOff+int64(p), r.kindOf(t), hdr[:]), crcTable, r.block[p+headerSize:r.n])
	return binary.LittleEndian.Uint32(r.block[p:p+4]) == crc
}

// zeroFrom reports whether every byte from block[p] to the end of the log
// is zero. Like intactFrom, it consumes the rest of the log.
func (r *Reader) zeroFrom(p int) (bool, error) {
	if !allZero(r.block[p:r.n]) {
		return false, nil
	}
	for r.n == r.bs {
		if err := r.load(); err != nil {
			return false, err
		}
		if !allZero(r.block[:r.n]) {
			return false, nil
		}
	}
	return true, nil
}

// intactFrom reports whether an intact fragment starts at block[q] for some
// q >= p, or at the start of a later block. It consumes the rest of the log.
func (r *Reader) intactFrom(p int) (bool, error) {
	// Walk the type byte of each candidate header: only 9 of 256 values
	// are fragment types, so most offsets cost one compare.
	b := r.block[:r.n]
	for i := p + 6; i < len(b); i++ {
		if b[i]-byte(typeFull) <= byte(typeSeal-typeFull) && r.intactAt(i-6) {
			return true, nil
		}
	}
	for r.n == r.bs {
		if err := r.load(); err != nil {
			return false, err
		}
		if r.intactAt(0) {
			return true, nil
		}
	}
	return false, nil
}

// intactAt reports whether the block holds at p a whole, well-placed
// fragment of a kind this log may be (r.kinds) whose checksum verifies as
// this log's. It never reads past the bytes present.
func (r *Reader) intactAt(p int) bool {
	b := r.block[:r.n]
	if len(b)-p < headerSize {
		return false
	}
	t := fragmentType(b[p+6])
	n := int(binary.LittleEndian.Uint16(b[p+4 : p+6]))
	end := p + headerSize + n
	if end > len(b) || framingError(t, p, n, r.bs, r.kinds) != "" {
		return false
	}
	return binary.LittleEndian.Uint32(b[p:p+4]) == checksum(r.blockOff+int64(p), r.kindOf(t), b[p+4:end])
}
