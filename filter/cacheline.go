package filter

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"runtime"

	"github.com/monbandb/monban/internal/offheap"
)

// Version 1 of the cache-line encoding (docs/format.md, "Cache-line Bloom
// filter"): lines × 64 bytes, then an 8-byte trailer
// lines u32 LE | probes u8 | version u8 | tag "CL".
// A change to the layout, the hash, or the probe sequence needs a new version.
const (
	cacheLineTrailerLen = 8
	cacheLineVersion    = 1
	cacheLineTag        = "CL"
)

// CacheLine is an encoded cache-line Bloom filter, queried in place: it
// aliases the bytes given to OpenCacheLine, which must not change while it is
// in use. It is a small value, safe for concurrent queries.
//
// The zero CacheLine answers true ("maybe") to every query, so a table whose
// filter could not be decoded stays correct, only slower.
type CacheLine struct {
	data   []byte // lines × 64 bytes, without the trailer
	lines  uint64
	probes int // 0 only in the zero value
	// keep is the holder's reference on the memory data lies in
	// (OpenCacheLineIn, Ref), nil for heap memory; every method that reads
	// data keeps it reachable to the end, so that the offheap safety net
	// cannot free it mid-query (offheap, invariant 1).
	keep *offheap.Buffer
}

// OpenCacheLine decodes the trailer of an encoded filter and returns a
// CacheLine over data. It checks the tag, version, probe count, and that the
// line count matches the length exactly, so a query can never index outside
// data; errors wrap ErrCorrupt. Nothing is allocated or copied.
func OpenCacheLine(data []byte) (CacheLine, error) { return OpenCacheLineIn(nil, data) }

// OpenCacheLineIn is OpenCacheLine over data that lies in buf's memory:
// the CacheLine takes over the caller's reference on buf, which Release
// drops; a copy kept by another holder takes its own (Ref). It is the
// engine's: buf's type is internal to this module, so code outside it
// can pass only nil, which is OpenCacheLine.
func OpenCacheLineIn(buf *offheap.Buffer, data []byte) (CacheLine, error) {
	if len(data) < cacheLineTrailerLen {
		return CacheLine{}, fmt.Errorf("%w: cache-line filter of %d bytes is shorter than its %d-byte trailer",
			ErrCorrupt, len(data), cacheLineTrailerLen)
	}
	t := data[len(data)-cacheLineTrailerLen:]
	if string(t[6:8]) != cacheLineTag {
		return CacheLine{}, fmt.Errorf("%w: not a cache-line filter (tag %q, want %q)", ErrCorrupt, t[6:8], cacheLineTag)
	}
	if t[5] != cacheLineVersion {
		return CacheLine{}, fmt.Errorf("%w: cache-line filter version %d, this build reads %d", ErrCorrupt, t[5], cacheLineVersion)
	}
	k := int(t[4])
	if k < 1 || k > MaxCacheLineProbes {
		return CacheLine{}, fmt.Errorf("%w: cache-line filter with %d probes (want 1..%d)", ErrCorrupt, k, MaxCacheLineProbes)
	}
	lines := uint64(binary.LittleEndian.Uint32(t[0:4]))
	body := uint64(len(data) - cacheLineTrailerLen)
	if lines*lineBytes != body {
		return CacheLine{}, fmt.Errorf("%w: cache-line filter trailer says %d lines (%d bytes), body has %d bytes",
			ErrCorrupt, lines, lines*lineBytes, body)
	}
	return CacheLine{data: data[:body:body], lines: lines, probes: k, keep: buf}, nil
}

// Ref takes another reference on the memory f lies in, for a holder that
// keeps f beyond the life of the one it was copied from, and returns f;
// that holder calls Release when done. The zero CacheLine and one over
// heap memory (OpenCacheLine) hold nothing, and need no Release.
func (f CacheLine) Ref() CacheLine {
	if f.keep != nil {
		f.keep.Ref()
	}
	return f
}

// Release drops this holder's reference (OpenCacheLineIn's or Ref's); the
// filter must not be queried through this holder afterwards.
func (f CacheLine) Release() { f.keep.Release() }

// MayContain reports whether key may have been added: false is certain.
func (f CacheLine) MayContain(key []byte) bool { return f.MayContainHash(Hash(key)) }

// MayContainHash is MayContain for a key's Hash. It reads one 64-byte line
// and allocates nothing.
func (f CacheLine) MayContainHash(h uint64) bool {
	if f.lines == 0 {
		// The zero value knows nothing and must say "maybe"; a decoded
		// filter with no lines was built from no keys and says "no".
		return f.probes == 0
	}
	off := lineOffset(h, f.lines)
	maybe := probeLine(f.data[off:off+lineBytes:off+lineBytes], h, f.probes)
	runtime.KeepAlive(f.keep)
	return maybe
}

// Probes is the number of bits each key sets in its line (0 for the zero
// value).
func (f CacheLine) Probes() int { return f.probes }

// Lines is the number of 64-byte lines.
func (f CacheLine) Lines() int { return int(f.lines) }

// Size is the encoded size in bytes, trailer included (0 for the zero
// value).
func (f CacheLine) Size() int {
	if f.probes == 0 {
		return 0
	}
	return len(f.data) + cacheLineTrailerLen
}

// FillRatio is the fraction of bits set over all lines.
func (f CacheLine) FillRatio() float64 {
	if f.lines == 0 {
		return 0
	}
	ratio := float64(onesCount(f.data)) / float64(len(f.data)*8)
	runtime.KeepAlive(f.keep)
	return ratio
}

// EstimatedFPR is the false-positive rate the filter's bits imply: a random
// absent key reaches each line with equal chance and then needs its k probes
// to hit set bits, so the rate is the mean over lines of (line fill)^k. It
// needs no key count and tracks an overfilled filter; the global
// FillRatio()^k underestimates it, because crowded lines matter most.
func (f CacheLine) EstimatedFPR() float64 {
	if f.lines == 0 {
		return float64(1 - min(f.probes, 1)) // zero value: 1; empty filter: 0
	}
	var sum float64
	for off := 0; off < len(f.data); off += lineBytes {
		fill := float64(onesCount(f.data[off:off+lineBytes])) / lineBits
		sum += math.Pow(fill, float64(f.probes))
	}
	runtime.KeepAlive(f.keep)
	return sum / float64(f.lines)
}

func onesCount(b []byte) int {
	n := 0
	for len(b) >= 8 {
		n += bits.OnesCount64(binary.LittleEndian.Uint64(b))
		b = b[8:]
	}
	for _, c := range b {
		n += bits.OnesCount8(c)
	}
	return n
}
