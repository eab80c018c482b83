package filter

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/monbandb/monban/internal/offheap"
)

// CacheLineBuilder collects the hashes of one SSTable's keys and finishes
// them into an encoded cache-line Bloom filter (docs/format.md, "Cache-line
// Bloom filter"). It holds 8 bytes per hash it counts (AddHash) until
// Finish: the line count depends on the final key count, so bits cannot be
// set earlier.
// Those bytes live outside the Go heap (internal/offheap), in chunks that
// grow to ChunkSize: a compaction's output table of 500k keys holds 4 MiB
// of them, which on the heap would cost twice that through the
// collector's doubling, for every table a compaction writes. Finish and
// Reset give them back at once.
//
// A CacheLineBuilder is not safe for concurrent use.
type CacheLineBuilder struct {
	bitsPerKey float64
	bufs       []*offheap.Buffer
	chunks     [][]uint64 // bufs' memory as hashes; only the last is partly filled
	n          int        // hashes in chunks
	last       uint64     // the last hash added, when n > 0
}

// firstChunk is the hashes of a builder's first chunk, small enough to
// stay on the heap (offheap.MinSize) for the many small tables; each next
// chunk doubles, up to a whole ChunkSize, the size offheap keeps spare.
const (
	firstChunk = 512
	maxChunk   = offheap.ChunkSize / 8
)

// NewCacheLineBuilder returns a builder for a filter of bitsPerKey bits per
// key. bitsPerKey is clamped to 1..MaxCacheLineBitsPerKey; 10 gives ~0.96%
// false positives. It may be fractional (AllocateBitsPerKey gives each table
// its own setting): the trailer records the filter's lines and probes, so
// any setting is the same encoding, and the probe count follows the same
// rule as at integer settings.
func NewCacheLineBuilder(bitsPerKey float64) *CacheLineBuilder {
	return &CacheLineBuilder{bitsPerKey: clampBitsPerKey(bitsPerKey)}
}

// AddKey adds a key; it is AddHash(Hash(key)).
func (b *CacheLineBuilder) AddKey(key []byte) { b.AddHash(Hash(key)) }

// AddHash adds a key by its Hash. A hash equal to the previous one is
// ignored: an SSTable adds its user keys in order, and several versions of
// one user key are one key to the filter (they would set the same bits, but
// would inflate the line count).
func (b *CacheLineBuilder) AddHash(h uint64) {
	if b.n > 0 && b.last == h {
		return
	}
	b.last = h
	b.n++
	i := len(b.chunks) - 1
	if i < 0 || len(b.chunks[i]) == cap(b.chunks[i]) {
		size := firstChunk
		if i >= 0 {
			size = min(2*cap(b.chunks[i]), maxChunk)
		}
		buf := offheap.New(size * 8)
		b.bufs = append(b.bufs, buf)
		b.chunks = append(b.chunks, unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(buf.Bytes()))), size)[:0])
		i++
	}
	b.chunks[i] = append(b.chunks[i], h) // within its capacity: never moves off the chunk
}

// Len is the number of hashes added since the last Finish or Reset, less
// those equal to the one added just before them (AddHash): the distinct
// hashes where equal ones come together, as a table's do. Finish sizes the
// filter by it.
func (b *CacheLineBuilder) Len() int { return b.n }

// Reset discards the added hashes and gives their memory back.
func (b *CacheLineBuilder) Reset() {
	for _, buf := range b.bufs {
		buf.Release()
	}
	clear(b.bufs)
	clear(b.chunks)
	b.bufs, b.chunks, b.n = b.bufs[:0], b.chunks[:0], 0
}

// Finish appends the encoded filter to dst and returns the extended slice,
// then resets the builder for the next table. With no keys added the filter
// has no lines and answers "no" to every query.
func (b *CacheLineBuilder) Finish(dst []byte) []byte {
	// ceil(n·b/512) lines; at most 2^32-1 (256 GiB of filter), which would
	// take ~2^37 keys at 64 bits per key to reach: a builder holding that
	// many hashes would need a terabyte first. The product is exact in
	// float64 for integer b (n·b < 2^53), so integer settings size filters
	// exactly as integer arithmetic would.
	lines := uint64(min(math.Ceil(float64(b.n)*b.bitsPerKey/lineBits), math.MaxUint32))
	dst = appendCacheLine(dst, lines, cacheLineProbesFor(b.bitsPerKey), b.chunks...)
	b.Reset()
	return dst
}

// appendCacheLine encodes the hashes of every chunk into lines lines with
// k probes each and appends the result to dst. It is the whole encoder;
// Finish only chooses lines and k (the overfill measurement chooses them
// differently).
func appendCacheLine(dst []byte, lines uint64, k int, chunks ...[]uint64) []byte {
	start := len(dst)
	size := int(lines)*lineBytes + cacheLineTrailerLen
	dst = slices.Grow(dst, size)[:start+size]
	body := dst[start : start+int(lines)*lineBytes]
	clear(body) // Grow may hand back capacity holding old bytes
	for _, hashes := range chunks {
		if lines == 0 {
			break
		}
		for _, h := range hashes {
			line := body[lineOffset(h, lines):][:lineBytes]
			x := h
			for range k {
				x *= remix
				bit := x >> (64 - 9)
				line[bit>>3] |= 1 << (bit & 7)
			}
		}
	}
	t := dst[start+len(body):]
	binary.LittleEndian.PutUint32(t[0:4], uint32(lines))
	t[4] = byte(k)
	t[5] = cacheLineVersion
	t[6], t[7] = cacheLineTag[0], cacheLineTag[1]
	return dst
}

// remix is 2^64/φ (odd). Multiplying by it is a bijection on uint64 that
// carries every bit of the hash into the top bits, where each probe takes its
// 9-bit index; one multiply per probe gives k indices from one hash without
// hashing the key again. The line comes from the hash's top bits by
// multiply-shift, the probes from all 64: keys sharing a line still differ
// in the bits that place them inside it.
const remix = 0x9e3779b97f4a7c15

// lineOffset is the byte offset of h's line: ⌊h·lines / 2^64⌋·64, a
// multiply-shift that maps the hash uniformly onto [0, lines) without a
// division.
func lineOffset(h, lines uint64) uint64 {
	hi, _ := bits.Mul64(h, lines)
	return hi * lineBytes
}
