package filter

import (
	"encoding/binary"
	"fmt"
	"math"
)

// A key-hash set is the sorted set of the top KeyHashBits bits of the
// Hash of each of a table's keys: what Open rebuilds a tree-wide Maplet
// from (BuildMaplet) without reading the tables' data blocks (issue 29).
// A maplet reads only these bits of a hash (the rest as zeros), and its
// quotient and fingerprint, log2(slots)+P bits, draw on them: 40 serve up
// to 2^32 slots at 8 payload bits.
//
// The values, below 2^40, are stored in an Elias–Fano sequence
// (grafite_ef.go) whose l low bits are chosen for the least size, about
// log2(2^40/m) for m values: about 2 + l bits per value, 32.3 at 1,000,
// 26.5 at 50,000 and 22.2 at 1,000,000 (BenchmarkKeyHashes), where a
// random m-subset of 2^40 holds about log2(2^40/m) + 1.44 bits of
// entropy per value (25.8 at 50,000).
const KeyHashBits = 40

// keyHashMask keeps a hash's top KeyHashBits bits.
const keyHashMask uint64 = (1<<KeyHashBits - 1) << (64 - KeyHashBits)

// Version 1 of the key-hash set encoding (docs/format.md, "Key-hash
// set"): an 8-byte header
//
//	tag "KH" | version u8 = 1 | low bits l u8 | values m u32 LE
//
// then the Elias–Fano sequence of the m distinct values, ascending, below
// 2^40, with l = keyHashLowBits(m). l is a function of m, and the
// sequence's padding bits are zero, so a set has one encoding. A change
// to the layout, the hash or KeyHashBits needs a new version.
const (
	keyHashTag       = "KH"
	keyHashVersion   = 1
	keyHashHeaderLen = 8
	keyHashUniverse  = 1 << KeyHashBits
	// keyHashMinLowBits keeps the buckets, 2^(40−l), within the 2^31
	// openEliasFano takes; l is about log2(2^40/m), 9 or more, for the at
	// most maxKeyHashes values of a set.
	keyHashMinLowBits        = KeyHashBits - 31
	maxKeyHashes      uint64 = 1 << 31 // typed: above a 32-bit int
)

// keyHashLowBits is the l that encodes m values below 2^40 in the fewest
// bytes, the smallest of several that tie (a few values fit in one word
// of high bits at many l).
func keyHashLowBits(m uint64) uint {
	best, bestLen := uint(0), uint64(math.MaxUint64)
	for l := uint(keyHashMinLowBits); l <= KeyHashBits; l++ {
		low, high, sample, _ := efLayout(m, l, keyHashUniverse)
		if n := low + high + sample; n < bestLen {
			best, bestLen = l, n
		}
	}
	return best
}

// AppendKeyHashes appends the key-hash set of hashes (each a Hash of a
// key, in any order, duplicates allowed) to dst: the top KeyHashBits bits
// of each, sorted and deduplicated. It does not modify hashes. It panics
// given more than 2^31 distinct values, which no table holds.
func AppendKeyHashes(dst []byte, hashes []uint64) []byte {
	n := len(hashes)
	tops := scratch(n)
	for i, h := range hashes {
		tops[i] = h >> (64 - KeyHashBits)
	}
	out := scratch(n)
	set := sortCodes(tops, keyHashLowBits(uint64(n)), keyHashUniverse, out)
	if uint64(len(set)) > maxKeyHashes {
		panic(fmt.Sprintf("filter: key-hash set of %d values, at most %d", len(set), maxKeyHashes))
	}
	l := keyHashLowBits(uint64(len(set)))
	dst = append(dst, keyHashTag...)
	dst = append(dst, keyHashVersion, byte(l))
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(set)))
	dst = appendEliasFano(dst, set, l, keyHashUniverse)
	release(tops)
	release(out)
	return dst
}

// DecodeKeyHashes appends the values of the key-hash set encoded in data
// to dst, ascending, each in the top KeyHashBits bits of a uint64 (its
// low 64 − KeyHashBits bits zero), and returns dst. It checks the tag,
// version and count, that l is the one the count implies, the Elias–Fano
// sequence's exact length and structure (openEliasFano) and that the
// values strictly ascend, so that it accepts exactly what
// AppendKeyHashes writes; errors wrap ErrCorrupt and come with dst as it
// was given. It allocates at most the values' room in dst, 8 bytes for
// each of the m values, after the length check has shown that data
// holds at least a bit for each.
func DecodeKeyHashes(data []byte, dst []uint64) ([]uint64, error) {
	if len(data) < keyHashHeaderLen {
		return dst, fmt.Errorf("%w: key-hash set of %d bytes is shorter than its %d-byte header", ErrCorrupt, len(data), keyHashHeaderLen)
	}
	if string(data[0:2]) != keyHashTag {
		return dst, fmt.Errorf("%w: not a key-hash set (tag %q, want %q)", ErrCorrupt, data[0:2], keyHashTag)
	}
	if data[2] != keyHashVersion {
		return dst, fmt.Errorf("%w: key-hash set version %d, this build reads %d", ErrCorrupt, data[2], keyHashVersion)
	}
	l, m := uint(data[3]), binary.LittleEndian.Uint32(data[4:8])
	if uint64(m) > maxKeyHashes {
		return dst, fmt.Errorf("%w: key-hash set of %d values, at most %d", ErrCorrupt, m, maxKeyHashes)
	}
	if want := keyHashLowBits(uint64(m)); l != want {
		return dst, fmt.Errorf("%w: key-hash set of %d values with %d low bits, want %d", ErrCorrupt, m, l, want)
	}
	ef, err := openEliasFano(data[keyHashHeaderLen:], int(m), l, keyHashUniverse)
	if err != nil {
		return dst, fmt.Errorf("key-hash set: %w", err)
	}
	// Every value is below 2^40: its high part is below nb = 2^(40−l),
	// the buckets openEliasFano found, so the shift loses no bit.
	start := len(dst)
	dst = ef.appendCodes(dst)
	for i, prev := start, uint64(0); i < len(dst); i++ {
		c := dst[i]
		if i > start && c <= prev {
			return dst[:start], fmt.Errorf("%w: key-hash set value %d, %#x, not above the one before, %#x", ErrCorrupt, i-start, c, prev)
		}
		dst[i], prev = c<<(64-KeyHashBits), c
	}
	return dst, nil
}
