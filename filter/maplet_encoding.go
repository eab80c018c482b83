package filter

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// Encoding of a maplet (docs/format.md, "Maplet"): the snapshot Open could
// load instead of rebuilding from the tables.
//
//	offset  size  field
//	0       4     magic "MBMP"
//	4       1     version (2)
//	5       1     reserved, 0 (version 1: qbits, the table 2^qbits slots)
//	6       1     payload bits P (maxLen+1..KeyHashBits)
//	7       1     reserved, 0
//	8       64    code length of run id 0..63, one byte each (0: no code)
//	72      8     count: entries stored, uint64 LE
//	80      8     slots, uint64 LE (version 2 only)
//	88      8·W   the table words, uint64 LE, W = ceil(slots/64)·(3+P)
//	88+8W   4     CRC-32C (Castagnoli) of bytes [0, 88+8W), uint32 LE
//
// The table is a quotient filter's (docs/format.md, "Quotient filter") with
// P-bit remainders, each a run's canonical code then the fingerprint.
// Version 1, written before tables of any size, has no slots field: its
// table starts at 80.
const (
	mapletMagic    = "MBMP"
	mapletVersion  = 2
	mapletHeaderV1 = 80
	mapletHeader   = 88
)

// MarshalBinary encodes m in the format above. It never fails.
func (m *Maplet) MarshalBinary() ([]byte, error) {
	out := make([]byte, mapletHeader, mapletHeader+8*len(m.qf.words)+quotientTrailer)
	copy(out, mapletMagic)
	out[4], out[6] = mapletVersion, byte(m.p)
	copy(out[8:8+MaxRuns], m.code.lens[:])
	binary.LittleEndian.PutUint64(out[72:], uint64(m.qf.n))
	binary.LittleEndian.PutUint64(out[80:], m.qf.slots)
	for _, w := range m.qf.words {
		out = binary.LittleEndian.AppendUint64(out, w)
	}
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, quotientCRC)), nil
}

// UnmarshalBinary replaces m with the maplet encoded in data (either
// version), releasing m's table if it had one. Errors wrap ErrCorrupt and
// leave m unchanged. It checks the length before allocating anything,
// then the checksum, the code, and invariants 1 and 2 of Maplet, so a
// decoded maplet behaves like one built by Insert even if the bytes were
// forged.
func (m *Maplet) UnmarshalBinary(data []byte) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: maplet: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if len(data) < mapletHeaderV1+quotientTrailer {
		return bad("%d bytes, shorter than header and checksum", len(data))
	}
	if string(data[:4]) != mapletMagic {
		return bad("bad magic %q", data[:4])
	}
	var slots uint64
	header := mapletHeader
	p := uint(data[6])
	switch data[4] {
	case 1:
		// A version 1 maplet's fingerprints came from the hash's top
		// qbits+P bits; NewMaplet, below, takes only those within
		// KeyHashBits, the bits this build reads.
		qbits := uint(data[5])
		if qbits < 1 || qbits > maxQuotientQBits {
			return bad("bad parameters qbits=%d payloadBits=%d", qbits, p)
		}
		slots, header = 1<<qbits, mapletHeaderV1
	case mapletVersion:
		if len(data) < mapletHeader+quotientTrailer || data[5] != 0 {
			return bad("%d bytes, reserved byte %d: not a version 2 header", len(data), data[5])
		}
		slots = binary.LittleEndian.Uint64(data[80:])
	default:
		return bad("version %d, this build reads 1 and %d", data[4], mapletVersion)
	}
	if !validMapletSlots(slots) || p < 2 || p > KeyHashBits || data[7] != 0 {
		return bad("bad parameters slots=%d payloadBits=%d reserved=%d", slots, p, data[7])
	}
	if want := uint64(header) + 8*quotientWords(slots, p) + quotientTrailer; uint64(len(data)) != want {
		return bad("%d bytes, want %d for slots=%d payloadBits=%d", len(data), want, slots, p)
	}
	body := len(data) - quotientTrailer
	if got, want := crc32.Checksum(data[:body], quotientCRC), binary.LittleEndian.Uint32(data[body:]); got != want {
		return bad("checksum %#08x, stored %#08x", got, want)
	}
	count := binary.LittleEndian.Uint64(data[72:])
	if count > slots {
		return bad("count %d > %d slots", count, slots)
	}
	g, err := NewMaplet(slots, p, data[8:8+MaxRuns])
	if err != nil {
		return bad("%v", err)
	}
	words := data[header:body]
	for i := range g.qf.words {
		g.qf.words[i] = binary.LittleEndian.Uint64(words[8*i:])
	}
	g.qf.n = int(count)
	if err := g.validate(); err != nil {
		g.Release()
		return bad("%v", err)
	}
	if m.buf != nil {
		m.Release()
	}
	*m = *g
	return nil
}

// validate checks invariants 1 and 2: the quotient filter's structure, and
// a codeword at the head of every used slot's payload.
func (m *Maplet) validate() error {
	if err := m.qf.validate(); err != nil {
		return err
	}
	f := &m.qf
	for i := uint64(0); i < f.slots; i++ {
		if f.isEmpty(i) {
			continue
		}
		if v := f.rem(i); m.code.dec[v>>(m.p-m.code.maxLen)].run == 0xff {
			return fmt.Errorf("slot %d: payload %#x starts with no run's code", i, v)
		}
	}
	return nil
}
