package filter

import "encoding/binary"

// GrafitePoint projects a key to the integer a Grafite holds for it: its
// first 8 bytes as a big-endian uint64, zero-padded when shorter. The
// projection is monotone in bytes.Compare order (k1 ≤ k2 gives
// GrafitePoint(k1) ≤ GrafitePoint(k2)), which is all a range query needs
// to be conservative; keys that agree on their first 8 bytes share one
// point.
func GrafitePoint(key []byte) uint64 {
	if len(key) >= 8 {
		return binary.BigEndian.Uint64(key)
	}
	var b [8]byte
	copy(b[:], key)
	return binary.BigEndian.Uint64(b[:])
}

// GrafiteBounds returns the integer range [lo, hi] that holds the point
// of every key in [lower, upper) (bytes.Compare order; a nil bound is
// open), and false when no key lies in [lower, upper).
//
// hi is upper's point, less one where no key below upper can share it:
// when upper has at most 8 bytes and its last byte is not zero, a key
// with upper's point pads to upper's bytes, so it starts with upper and
// is not below it. Otherwise (a zero last byte: "ab" < "ab\x00" share a
// point; or more than 8 bytes) hi is the point itself. So a range of 32
// big-endian 8-byte integers asks 32 points, not 33, unless its end is a
// multiple of 256.
func GrafiteBounds(lower, upper []byte) (lo, hi uint64, ok bool) {
	hi = ^uint64(0)
	if upper != nil {
		if len(upper) == 0 {
			return 0, 0, false // no key is below ""
		}
		hi = GrafitePoint(upper)
		if len(upper) <= 8 && upper[len(upper)-1] != 0 {
			hi-- // >= 0: upper's point has upper's nonzero last byte
		}
	}
	if lower != nil {
		lo = GrafitePoint(lower)
	}
	return lo, hi, lo <= hi
}

// MayContainKeys reports whether the filter may hold the point of a key
// in [lower, upper) (a nil bound is open); false is certain for every
// key the filter was built from with AddKey.
func (g Grafite) MayContainKeys(lower, upper []byte) bool {
	lo, hi, ok := GrafiteBounds(lower, upper)
	if !ok {
		return !g.ok // the zero Grafite answers "maybe" to everything
	}
	return g.MayContainRange(lo, hi)
}
