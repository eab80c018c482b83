package wal

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math/bits"
)

// OlderLog reports whether f, the file of recyclable log num in which no
// record of log num's own verifies, begins with an intact fragment of an
// older recyclable log: one numbered below num, whose file was reused for
// log num and which log num never wrote over, since a crash stopped it
// before its first record. It returns that log's number. Such a file holds
// nothing of log num's, and is no other program's: the older log's
// checksum, seeded with its number, could not verify otherwise. Every
// number below num is tried (olderChecksums: a few XORs each, whatever the
// fragment's length).
func OlderLog(f io.ReaderAt, num uint64) (older uint64, ok bool, err error) {
	return OlderLogAt(f, 0, num)
}

// OlderLogAt is OlderLog of the fragment at off. Where log num's records
// end before a block does, the next block starts with a fragment of the
// older log the file held, if it held one that far (the Reader's
// RecordsEnd says where the records end); and where the older log began
// with records of the lengths log num's have, one of its fragments starts
// where they end, as when both logs hold only a record of the same length
// their writer appends first.
func OlderLogAt(f io.ReaderAt, off int64, num uint64) (older uint64, ok bool, err error) {
	want, frag, ok, err := readFragment(f, off)
	if !ok || err != nil {
		return 0, false, err
	}
	c := newOlderChecksums(off, frag)
	for older = num - 1; older >= 1 && older < num; older-- {
		if c.of(older) == want {
			return older, true, nil
		}
	}
	return 0, false, nil
}

// FirstFragmentOf returns the first of nums whose recyclable log f's
// first fragment verifies as, reading that fragment once. A log file
// whose first fragment is another number's holds that log's records: an
// older log's in a reused file that its new log never wrote over, or,
// where a file of that number is present too, the two files were swapped.
func FirstFragmentOf(f io.ReaderAt, nums []uint64) (num uint64, ok bool, err error) {
	want, frag, ok, err := readFragment(f, 0)
	if !ok || err != nil {
		return 0, false, err
	}
	for _, num := range nums {
		if checksum(0, logKind{recyclable: true, num: num}, frag) == want {
			return num, true, nil
		}
	}
	return 0, false, nil
}

// FirstRecordFrame returns the bytes a recyclable log numbered num begins
// with when record is its first: what its writer hands the file first. A
// log whose first record is known can so be told from one a crash stopped
// while it wrote that record (a prefix of these bytes) and from a file
// that never was that log.
func FirstRecordFrame(num uint64, record []byte) []byte {
	_, frame := appendFrame(nil, 0, blockSize, logKind{recyclable: true, num: num}, record, typeFull)
	return frame
}

// readFragment reads the recyclable fragment whose header starts at off:
// its stored checksum and the bytes the checksum covers (the length, the
// type and the payload). ok is false where no intact recyclable fragment
// could start there.
func readFragment(f io.ReaderAt, off int64) (want uint32, frag []byte, ok bool, err error) {
	p := int(off % blockSize)
	if off < 0 || blockSize-p < headerSize {
		return 0, nil, false, nil
	}
	var h [headerSize]byte
	if intact, err := readFull(f, h[:], off); !intact || err != nil {
		return 0, nil, false, err
	}
	t, n := fragmentType(h[6]), int(binary.LittleEndian.Uint16(h[4:6]))
	if framingError(t, p, n, blockSize, recyclableKind) != "" {
		return 0, nil, false, nil
	}
	frag = make([]byte, 3+n)
	copy(frag, h[4:headerSize])
	if intact, err := readFull(f, frag[3:], off+headerSize); !intact || err != nil {
		return 0, nil, false, err
	}
	return binary.LittleEndian.Uint32(h[0:4]), frag, true, nil
}

// NextBlock returns the first multiple of the block size at or after off:
// where the next fragment of any log in the file must start.
func NextBlock(off int64) int64 { return (off + blockSize - 1) / blockSize * blockSize }

// olderChecksums gives the checksum of one fragment, at one offset, as
// every recyclable log number would seed it, without a pass over the
// fragment per number. For messages of one length the CRC is affine:
// CRC(a⊕b) = CRC(a)⊕CRC(b)⊕CRC(0…0). The message for number n is the one
// for 0 with n's 8 bytes XORed in, so its CRC is the CRC for 0 XOR g(n),
// g linear in n's bits: g(n) = ⊕ g(2^b) over the bits b of n, 64 CRCs
// made once.
type olderChecksums struct {
	zero uint32     // the checksum seeded with number 0
	bit  [64]uint32 // g(2^b)
}

func newOlderChecksums(off int64, frag []byte) *olderChecksums {
	msg := make([]byte, 16+len(frag))
	binary.LittleEndian.PutUint64(msg, uint64(off))
	copy(msg[16:], frag)
	c := &olderChecksums{zero: checksum(off, logKind{recyclable: true, num: 0}, frag)}
	zeros := crc32.Checksum(make([]byte, len(msg)), crcTable)
	unit := make([]byte, len(msg))
	for b := range 64 {
		binary.LittleEndian.PutUint64(unit[8:16], 1<<b)
		c.bit[b] = crc32.Checksum(unit, crcTable) ^ zeros
	}
	return c
}

// of returns the checksum seeded with number n.
func (c *olderChecksums) of(n uint64) uint32 {
	crc := c.zero
	for ; n != 0; n &= n - 1 {
		crc ^= c.bit[bits.TrailingZeros64(n)]
	}
	return crc
}

// readFull reads len(p) bytes at off, reporting false, and no error, for
// a file that ends first.
func readFull(f io.ReaderAt, p []byte, off int64) (bool, error) {
	n, err := f.ReadAt(p, off)
	if n == len(p) {
		return true, nil
	}
	if errors.Is(err, io.EOF) {
		return false, nil
	}
	return false, err
}
