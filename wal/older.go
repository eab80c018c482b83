package wal

import (
	"encoding/binary"
	"errors"
	"io"
)

// OlderLog reports whether f, the file of recyclable log num in which no
// record of log num's own verifies, begins with an intact fragment of an
// older recyclable log: one numbered below num, whose file was reused for
// log num and which log num never wrote over, since a crash stopped it
// before its first record. It returns that log's number. Such a file holds
// nothing of log num's, and is no other program's: the older log's
// checksum, seeded with its number, could not verify otherwise. Every
// number below num is tried, a checksum of the first fragment each, so the
// time grows with num; Repair asks it only of a WAL it found empty.
func OlderLog(f io.ReaderAt, num uint64) (older uint64, ok bool, err error) {
	var h [headerSize]byte
	if intact, err := readFull(f, h[:], 0); !intact || err != nil {
		return 0, false, err
	}
	t, n := fragmentType(h[6]), int(binary.LittleEndian.Uint16(h[4:6]))
	if framingError(t, 0, n, blockSize, recyclableKind) != "" {
		return 0, false, nil
	}
	frag := make([]byte, 3+n) // the length, the type and the payload
	copy(frag, h[4:headerSize])
	if intact, err := readFull(f, frag[3:], headerSize); !intact || err != nil {
		return 0, false, err
	}
	want := binary.LittleEndian.Uint32(h[0:4])
	for older = num - 1; older >= 1 && older < num; older-- {
		if checksum(0, logKind{recyclable: true, num: older}, frag) == want {
			return older, true, nil
		}
	}
	return 0, false, nil
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
