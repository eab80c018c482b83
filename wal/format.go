package wal

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
)

// The framing constants. docs/format.md ("Write-ahead log") is the
// reference; the reader and the writer share nothing else.
const (
	// blockSize is the unit of framing: no fragment crosses a multiple of
	// blockSize, so every block of a well-formed log starts with a
	// fragment header. That is what lets the reader look past damage
	// (damage.go) without trusting any length it read. Writers and Readers
	// carry it in a field so tests can run the same code on small blocks
	// (newWriterSize, newReaderSize); on disk it is always 32 KiB.
	blockSize = 32 << 10

	// headerSize is checksum (4) + length (2) + type (1).
	headerSize = 7
)

// fragmentType says where a fragment's payload sits in its record, and
// which kind of log wrote it. The values are stored on disk: never
// renumber them.
type fragmentType uint8

const (
	// typeZero is never written. It is what a zero-filled (preallocated
	// or never-written) region decodes as, so it can't be mistaken for data.
	typeZero fragmentType = 0

	// Types 1-4 are a legacy log's, whose checksums are seeded with the
	// fragment's offset alone: the manifest, and WALs written before
	// recyclable logs existed. typeFull holds a whole record; typeFirst,
	// typeMiddle and typeLast hold the first, inner and last pieces of a
	// record that did not fit in what was left of a block.
	typeFull   fragmentType = 1
	typeFirst  fragmentType = 2
	typeMiddle fragmentType = 3
	typeLast   fragmentType = 4

	// Types 5-9 are a recyclable log's, whose checksums are also seeded
	// with the log's number, so that a file holding an older log can be
	// overwritten by a newer one. 5-8 are FULL, FIRST, MIDDLE and LAST
	// again (recyclableShift higher); typeSeal, with no payload, ends the
	// log (Writer.Seal).
	typeRecyclableFull fragmentType = typeFull + recyclableShift
	typeRecyclableLast fragmentType = typeLast + recyclableShift
	typeSeal           fragmentType = 9

	recyclableShift = 4
)

// recyclable reports whether t is one of a recyclable log's types.
func (t fragmentType) recyclable() bool {
	return t >= typeRecyclableFull && t <= typeSeal
}

// role returns the part t plays, whatever the kind of its log: typeFull,
// typeFirst, typeMiddle, typeLast or typeSeal, or t itself if it is no
// fragment type.
func (t fragmentType) role() fragmentType {
	if t >= typeRecyclableFull && t <= typeRecyclableLast {
		return t - recyclableShift
	}
	return t
}

func (t fragmentType) String() string {
	switch t.role() {
	case typeFull:
		return "FULL"
	case typeFirst:
		return "FIRST"
	case typeMiddle:
		return "MIDDLE"
	case typeLast:
		return "LAST"
	case typeSeal:
		return "SEAL"
	}
	return "unknown"
}

// A logKind is how a log types and checksums its fragments: legacy
// (types 1-4, checksums seeded with the offset) or recyclable (types 5-9,
// seeded with the offset and num, the log's number).
type logKind struct {
	recyclable bool
	num        uint64
}

// typeOf returns the type a log of kind k writes for a fragment of role
// typeFull, typeFirst, typeMiddle or typeLast, or typeSeal (recyclable
// logs only).
func (k logKind) typeOf(role fragmentType) fragmentType {
	if k.recyclable && role != typeSeal {
		return role + recyclableShift
	}
	return role
}

// kindSet is the kinds of log a Reader takes a log for: those it was made
// to read, until the first fragment accepted narrows it to that
// fragment's kind.
type kindSet uint8

const (
	legacyKind kindSet = 1 << iota
	recyclableKind
)

// has reports whether s admits fragments of type t: a legacy type if s
// holds the legacy kind, a recyclable one if it holds the recyclable kind.
func (s kindSet) has(t fragmentType) bool {
	switch {
	case t >= typeFull && t <= typeLast:
		return s&legacyKind != 0
	case t.recyclable():
		return s&recyclableKind != 0
	}
	return false
}

// crcTable selects CRC-32C (Castagnoli), which amd64 and arm64 compute in
// hardware.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// checksum returns the stored checksum of the fragment whose header starts
// at file offset off in a log of kind k; frag is the fragment from its
// length field to the end of its payload (header bytes 4..7 and the
// payload, contiguous on disk).
//
// The CRC is seeded with the fragment's own offset (8 bytes, little-endian),
// which is not stored. A fragment therefore verifies only where it was
// written: a copy of log bytes inside some record's payload (a value that
// happens to be a WAL image) never passes for a fragment when the reader
// looks for intact data past damage. That is the job LevelDB's CRC mask
// does for embedded CRCs, so the stored value is not masked. A recyclable
// log's fragments are seeded with its number too (8 bytes, little-endian,
// after the offset), so that the fragments an older log left in a reused
// file, at the same offsets, verify only as that log's.
func checksum(off int64, k logKind, frag []byte) uint32 {
	crc := crcUint64(^uint32(0), uint64(off))
	if k.recyclable {
		crc = crcUint64(crc, k.num)
	}
	return crc32.Update(^crc, crcTable, frag)
}

// crcUint64 runs the 8 little-endian bytes of v through the CRC by hand:
// passing a local array to crc32.Update would make it escape, one
// allocation per fragment on the hot path. It takes the 8 bytes at once,
// slicing-by-8: eight independent lookups, where a byte at a time makes
// eight dependent ones, which a recyclable log's 16 seed bytes would pay
// on every short record (BenchmarkRecyclableRead). crc is the register,
// not inverted; the result equals crc32.Update over those
// bytes (TestCRCUint64).
func crcUint64(crc uint32, v uint64) uint32 {
	x := v ^ uint64(crc)
	t := &crcSlices
	return t[7][byte(x)] ^ t[6][byte(x>>8)] ^ t[5][byte(x>>16)] ^ t[4][byte(x>>24)] ^
		t[3][byte(x>>32)] ^ t[2][byte(x>>40)] ^ t[1][byte(x>>48)] ^ t[0][byte(x>>56)]
}

// crcSlices[k][b] is the register after byte b followed by k zero bytes,
// from a zero register: the tables of slicing-by-8.
var crcSlices = func() (t [8][256]uint32) {
	t[0] = *crcTable
	for k := 1; k < 8; k++ {
		for b := range 256 {
			prev := t[k-1][b]
			t[k][b] = t[0][byte(prev)] ^ prev>>8
		}
	}
	return t
}()

// putHeader fills the headerSize bytes of b[0:7] for the fragment of type
// t whose payload is b[7:7+n] and that starts at file offset off in a log
// of kind k.
func putHeader(b []byte, off int64, k logKind, n int, t fragmentType) {
	binary.LittleEndian.PutUint16(b[4:6], uint16(n))
	b[6] = byte(t)
	binary.LittleEndian.PutUint32(b[0:4], checksum(off, k, b[4:headerSize+n]))
}

// framingError says what is wrong with a fragment of type t and payload
// length n at block offset p in a block of size bs, for a reader of the
// kinds of log ks, judged by where the writer puts fragments: only FULL,
// FIRST and SEAL start after a block's first byte (MIDDLE and LAST
// continue a record from the previous block), FIRST and MIDDLE fill their
// block to its end, and a SEAL is empty. A type of a kind outside ks is
// not this log's. "" means plausible.
func framingError(t fragmentType, p, n, bs int, ks kindSet) string {
	end := p + headerSize + n
	role := t.role()
	switch {
	case t == typeZero:
		return "zeroed bytes"
	case t > typeSeal:
		return fmt.Sprintf("unknown fragment type %d", t)
	case !ks.has(t) && t.recyclable():
		return t.String() + " fragment of a recyclable log in a legacy one"
	case !ks.has(t):
		return t.String() + " fragment of a legacy log in a recyclable one"
	case end > bs:
		return fmt.Sprintf("fragment length %d crosses its block", n)
	case (role == typeMiddle || role == typeLast) && p != 0:
		return t.String() + " fragment not at a block start"
	case (role == typeFirst || role == typeMiddle) && end != bs:
		return t.String() + " fragment ends before its block"
	case role == typeSeal && n != 0:
		return fmt.Sprintf("SEAL fragment of length %d", n)
	}
	return ""
}
