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
//	4       1     version (1)
//	5       1     qbits (1..32)
//	6       1     payload bits P (maxLen+1..64-qbits)
//	7       1     reserved, 0
//	8       64    code length of run id 0..63, one byte each (0: no code)
//	72      8     count: entries stored, uint64 LE
//	80      8·W   the table words, uint64 LE, W = ceil(2^qbits/64)·(3+P)
//	80+8W   4     CRC-32C (Castagnoli) of bytes [0, 80+8W), uint32 LE
//
// The table is a quotient filter's (docs/format.md, "Quotient filter") with
// P-bit remainders, each a run's canonical code then the fingerprint.
const (
	mapletMagic   = "MBMP"
	mapletVersion = 1
	mapletHeader  = 80
)

// MarshalBinary encodes m in the format above. It never fails.
func (m *Maplet) MarshalBinary() ([]byte, error) {
	out := make([]byte, mapletHeader, mapletHeader+8*len(m.qf.words)+quotientTrailer)
	copy(out, mapletMagic)
	out[4], out[5], out[6] = mapletVersion, byte(m.qf.qbits), byte(m.p)
	copy(out[8:8+MaxRuns], m.code.lens[:])
	binary.LittleEndian.PutUint64(out[72:], uint64(m.qf.n))
	for _, w := range m.qf.words {
		out = binary.LittleEndian.AppendUint64(out, w)
	}
	return binary.LittleEndian.AppendUint32(out, crc32.Checksum(out, quotientCRC)), nil
}

// UnmarshalBinary replaces m with the maplet encoded in data, releasing
// m's table if it had one. Errors wrap ErrCorrupt and leave m unchanged.
// It checks the length before allocating anything, then the checksum, the
// code, and invariants 1 and 2 of Maplet, so a decoded maplet behaves like
// one built by Insert even if the bytes were forged.
func (m *Maplet) UnmarshalBinary(data []byte) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: maplet: %s", ErrCorrupt, fmt.Sprintf(format, args...))
	}
	if len(data) < mapletHeader+quotientTrailer {
		return bad("%d bytes, shorter than header and checksum", len(data))
	}
	if string(data[:4]) != mapletMagic {
		return bad("bad magic %q", data[:4])
	}
	if data[4] != mapletVersion {
		return bad("version %d, this build reads %d", data[4], mapletVersion)
	}
	qbits, p := uint(data[5]), uint(data[6])
	if qbits < 1 || qbits > maxQuotientQBits || p < 2 || qbits+p > maxQuotientFP || data[7] != 0 {
		return bad("bad parameters qbits=%d payloadBits=%d reserved=%d", qbits, p, data[7])
	}
	if want := mapletHeader + 8*quotientWords(qbits, p) + quotientTrailer; uint64(len(data)) != want {
		return bad("%d bytes, want %d for qbits=%d payloadBits=%d", len(data), want, qbits, p)
	}
	body := len(data) - quotientTrailer
	if got, want := crc32.Checksum(data[:body], quotientCRC), binary.LittleEndian.Uint32(data[body:]); got != want {
		return bad("checksum %#08x, stored %#08x", got, want)
	}
	count := binary.LittleEndian.Uint64(data[72:])
	if count > 1<<qbits {
		return bad("count %d > %d slots", count, uint64(1)<<qbits)
	}
	g, err := NewMaplet(qbits, p, data[8:8+MaxRuns])
	if err != nil {
		return bad("%v", err)
	}
	words := data[mapletHeader:body]
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
