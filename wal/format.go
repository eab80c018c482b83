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

// fragmentType says where a fragment's payload sits in its record.
// The values are stored on disk: never renumber them.
type fragmentType uint8

const (
	// typeZero is never written. It is what a zero-filled (preallocated
	// or never-written) region decodes as, so it can't be mistaken for data.
	typeZero fragmentType = 0
	// typeFull holds a whole record.
	typeFull fragmentType = 1
	// typeFirst, typeMiddle and typeLast hold the first, inner and last
	// pieces of a record that did not fit in what was left of a block.
	typeFirst  fragmentType = 2
	typeMiddle fragmentType = 3
	typeLast   fragmentType = 4
)

func (t fragmentType) String() string {
	switch t {
	case typeFull:
		return "FULL"
	case typeFirst:
		return "FIRST"
	case typeMiddle:
		return "MIDDLE"
	case typeLast:
		return "LAST"
	}
	return "unknown"
}

// crcTable selects CRC-32C (Castagnoli), which amd64 and arm64 compute in
// hardware.
var crcTable = crc32.MakeTable(crc32.Castagnoli)

// checksum returns the stored checksum of the fragment whose header starts
// at file offset off; frag is the fragment from its length field to the end
// of its payload (header bytes 4..7 and the payload, contiguous on disk).
//
// The CRC is seeded with the fragment's own offset (8 bytes, little-endian),
// which is not stored. A fragment therefore verifies only where it was
// written: a copy of log bytes inside some record's payload (a value that
// happens to be a WAL image) never passes for a fragment when the reader
// looks for intact data past damage. That is the job LevelDB's CRC mask
// does for embedded CRCs, so the stored value is not masked.
func checksum(off int64, frag []byte) uint32 {
	// The 8 offset bytes go through the table by hand: passing a local
	// array to crc32.Update would make it escape, one allocation per
	// fragment on the hot path. This is the bytewise form of the same
	// reflected CRC, so the result equals crc32.Update over those bytes.
	crc := ^uint32(0)
	for i := 0; i < 8; i++ {
		crc = crcTable[byte(crc)^byte(off>>(8*i))] ^ crc>>8
	}
	return crc32.Update(^crc, crcTable, frag)
}

// putHeader fills the headerSize bytes of b[0:7] for the fragment whose
// payload is b[7:7+n] and that starts at file offset off.
func putHeader(b []byte, off int64, n int, t fragmentType) {
	binary.LittleEndian.PutUint16(b[4:6], uint16(n))
	b[6] = byte(t)
	binary.LittleEndian.PutUint32(b[0:4], checksum(off, b[4:headerSize+n]))
}

// framingError says what is wrong with a fragment of type t and payload
// length n at block offset p in a block of size bs, judged by where the
// writer puts fragments: only FULL and FIRST start after a block's first
// byte (MIDDLE and LAST continue a record from the previous block), and
// FIRST and MIDDLE fill their block to its end. "" means plausible.
func framingError(t fragmentType, p, n, bs int) string {
	end := p + headerSize + n
	switch {
	case t < typeFull || t > typeLast:
		if t == typeZero {
			return "zeroed bytes"
		}
		return fmt.Sprintf("unknown fragment type %d", t)
	case end > bs:
		return fmt.Sprintf("fragment length %d crosses its block", n)
	case (t == typeMiddle || t == typeLast) && p != 0:
		return t.String() + " fragment not at a block start"
	case (t == typeFirst || t == typeMiddle) && end != bs:
		return t.String() + " fragment ends before its block"
	}
	return ""
}

// intactAt reports whether block[p:] begins with a whole, well-placed
// fragment whose checksum verifies, where block starts at file offset
// blockOff and holds the bytes present of one block of size bs (fewer at
// the end of the file). It never reads past len(block).
func intactAt(block []byte, blockOff int64, p, bs int) bool {
	if len(block)-p < headerSize {
		return false
	}
	t := fragmentType(block[p+6])
	n := int(binary.LittleEndian.Uint16(block[p+4 : p+6]))
	end := p + headerSize + n
	if end > len(block) || framingError(t, p, n, bs) != "" {
		return false
	}
	return binary.LittleEndian.Uint32(block[p:p+4]) == checksum(blockOff+int64(p), block[p+4:end])
}
