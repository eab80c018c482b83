package filter

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Encoding of a quotient filter (docs/format.md, "Quotient filter"):
//
//	offset  size  field
//	0       4     magic "MBQF"
//	4       1     version (1)
//	5       1     qbits (1..32)
//	6       1     rbits (1..64-qbits)
//	7       1     reserved, 0
//	8       8     count: fingerprint occurrences stored, uint64 LE
//	16      8·W   the table words, uint64 LE, W = ceil(2^qbits/64)·(3+rbits)
//	16+8W   4     CRC-32C (Castagnoli) of bytes [0, 16+8W), uint32 LE
//
// The words are the in-memory blocks verbatim: per block of 64 slots,
// is_occupied, is_continuation, is_shifted, then the 64 remainders packed
// little-endian (slot j at bits [j·rbits, j·rbits+rbits) of the area).
const (
	quotientMagic   = "MBQF"
	quotientVersion = 1
	quotientHeader  = 16
	quotientTrailer = 4
)

var quotientCRC = crc32.MakeTable(crc32.Castagnoli)

// MarshalBinary encodes f in the format above. It never fails.
func (f *Quotient) MarshalBinary() ([]byte, error) {
	out := make([]byte, quotientHeader, quotientHeader+8*len(f.words)+quotientTrailer)
	copy(out, quotientMagic)
	out[4], out[5], out[6] = quotientVersion, byte(f.qbits), byte(f.rbits)
	binary.LittleEndian.PutUint64(out[8:], uint64(f.n))
	for _, w := range f.words {
		out = binary.LittleEndian.AppendUint64(out, w)
	}
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, quotientCRC)), nil
}

// UnmarshalBinary replaces f with the filter encoded in data. Errors wrap
// ErrCorrupt and leave f unchanged. Beyond the checksum it checks every
// structural invariant of the table (see validate), so a decoded filter
// behaves like one built by Insert even if the bytes were forged.
func (f *Quotient) UnmarshalBinary(data []byte) error {
	if len(data) < quotientHeader+quotientTrailer {
		return fmt.Errorf("%w: quotient filter: %d bytes, shorter than header and checksum", ErrCorrupt, len(data))
	}
	if string(data[:4]) != quotientMagic {
		return fmt.Errorf("%w: quotient filter: bad magic %q", ErrCorrupt, data[:4])
	}
	if data[4] != quotientVersion {
		return fmt.Errorf("%w: quotient filter: version %d, this build reads %d", ErrCorrupt, data[4], quotientVersion)
	}
	qbits, rbits := uint(data[5]), uint(data[6])
	if qbits < 1 || qbits > maxQuotientQBits || rbits < 1 || qbits+rbits > maxQuotientFP || data[7] != 0 {
		return fmt.Errorf("%w: quotient filter: bad parameters qbits=%d rbits=%d reserved=%d", ErrCorrupt, qbits, rbits, data[7])
	}
	// Bound the allocation by the input: the length must match exactly
	// before anything is sized from qbits.
	slots := uint64(1) << qbits
	words := quotientWords(1<<qbits, rbits)
	if want := quotientHeader + 8*words + quotientTrailer; uint64(len(data)) != want {
		return fmt.Errorf("%w: quotient filter: %d bytes, want %d for qbits=%d rbits=%d", ErrCorrupt, len(data), want, qbits, rbits)
	}
	body := len(data) - quotientTrailer
	if got, want := crc32.Checksum(data[:body], quotientCRC), binary.LittleEndian.Uint32(data[body:]); got != want {
		return fmt.Errorf("%w: quotient filter: checksum %#08x, stored %#08x", ErrCorrupt, got, want)
	}
	count := binary.LittleEndian.Uint64(data[8:])
	if count > slots {
		return fmt.Errorf("%w: quotient filter: count %d > %d slots", ErrCorrupt, count, slots)
	}
	g := &Quotient{}
	g.init(qbits, rbits)
	for i := range g.words {
		g.words[i] = binary.LittleEndian.Uint64(data[quotientHeader+8*i:])
	}
	g.n = int(count)
	if err := g.validate(); err != nil {
		return fmt.Errorf("%w: quotient filter: %v", ErrCorrupt, err)
	}
	*f = *g
	return nil
}

// validate checks invariants 1-3 of Quotient in one pass over the slots, so
// that no operation on a decoded filter can loop, index out of range, or
// give a false negative for a fingerprint it reports stored.
func (f *Quotient) validate() error {
	// Slots beyond 2^qbits (qbits < 6) must be blank.
	last := f.nblocks - 1
	for k := uint64(qfOcc); k <= qfShift; k++ {
		if f.meta(k, last)&^f.lastValid != 0 {
			return fmt.Errorf("metadata bits set beyond slot %d", f.slots)
		}
	}
	for i := f.slots; i < f.nblocks*64; i++ {
		if f.rem(i) != 0 {
			return fmt.Errorf("remainder set beyond slot %d", f.slots)
		}
	}
	// Start at a cluster start: a non-empty slot that is not shifted.
	start, nonEmpty := f.slots, 0
	for i := uint64(0); i < f.slots; i++ {
		if !f.isEmpty(i) {
			nonEmpty++
			if start == f.slots && !f.bit(qfShift, i) {
				start = i
			}
		}
	}
	if nonEmpty != f.n {
		return fmt.Errorf("count %d, but %d slots are in use", f.n, nonEmpty)
	}
	if f.n == 0 {
		return f.validateEmptySlots()
	}
	if start == f.slots {
		return fmt.Errorf("no cluster start (every used slot is shifted)")
	}
	// Walk every slot once. pending counts occupied quotients seen in the
	// current cluster whose run has not started; each run head takes the
	// oldest of them, which is the next occupied quotient after the
	// previous run's quotient q.
	var (
		inCluster bool
		pending   int
		q, prevR  uint64
	)
	for n, p := uint64(0), start; n < f.slots; n, p = n+1, f.next(p) {
		if f.isEmpty(p) {
			if pending > 0 {
				return fmt.Errorf("slot %d: cluster ends with %d runs missing", p, pending)
			}
			if f.bit(qfCont, p) || f.rem(p) != 0 {
				return fmt.Errorf("slot %d: empty slot not blank", p)
			}
			inCluster = false
			continue
		}
		shifted, cont := f.bit(qfShift, p), f.bit(qfCont, p)
		if !shifted {
			if pending > 0 {
				return fmt.Errorf("slot %d: new cluster while %d runs are missing", p, pending)
			}
			if cont || !f.bit(qfOcc, p) {
				return fmt.Errorf("slot %d: cluster start must be a run head in its canonical slot", p)
			}
			inCluster, q = true, f.prev(p) // the first run head below takes quotient p
		} else if !inCluster {
			return fmt.Errorf("slot %d: shifted fingerprint after an empty slot", p)
		}
		if f.bit(qfOcc, p) {
			pending++
		}
		r := f.rem(p)
		if cont {
			if !shifted || r < prevR {
				return fmt.Errorf("slot %d: continuation unshifted or out of order", p)
			}
		} else {
			if pending == 0 {
				return fmt.Errorf("slot %d: run head with no occupied quotient", p)
			}
			pending--
			q = f.nextOccupied(q)
			if shifted != (p != q) {
				return fmt.Errorf("slot %d: is_shifted wrong for quotient %d", p, q)
			}
		}
		prevR = r
	}
	if pending > 0 {
		return fmt.Errorf("%d runs missing at the end", pending)
	}
	return nil
}

// validateEmptySlots checks that an empty filter is all zeros.
func (f *Quotient) validateEmptySlots() error {
	for _, w := range f.words {
		if w != 0 {
			return fmt.Errorf("empty filter with bits set")
		}
	}
	return nil
}
