package base

import "encoding/binary"

// KeyPrefix is k's first 8 bytes, zero-padded, as a big-endian number:
// where two keys' prefixes differ, they order the keys as bytes.Compare
// does (the first differing byte of the padded prefixes is either a real
// byte of both keys, or a padding zero against a byte of a longer key that
// the shorter one is a prefix of). The memtable keeps it in each entry and
// MultiGet in each batch key, so that most comparisons are one of uint64s.
func KeyPrefix(k []byte) uint64 {
	switch n := len(k); {
	case n >= 8:
		return binary.BigEndian.Uint64(k)
	case n >= 4: // two loads that overlap where n < 8: OR keeps the bytes
		return uint64(binary.BigEndian.Uint32(k))<<32 | uint64(binary.BigEndian.Uint32(k[n-4:]))<<(8*(8-n))
	}
	var p uint64
	for i, c := range k {
		p |= uint64(c) << (56 - 8*i)
	}
	return p
}
