package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Reader returns the records of a log in the order they were appended.
// It is not safe for concurrent use.
type Reader struct {
	r    io.Reader
	name string

	// kinds is the kinds of log this one may be: legacy alone (NewReader),
	// or both (NewRecyclableReader) until the first fragment accepted
	// fixes it. num is the log's number, for recyclable fragments.
	kinds kindSet
	num   uint64

	bs       int    // block size: blockSize outside tests
	block    []byte // bs bytes, reused for every block
	n        int    // bytes of block present (< bs only at the end of the log)
	pos      int    // next unread byte of block
	blockOff int64  // file offset of block[0]
	loaded   bool   // block holds data read from r (false before the first read)

	rec      []byte // assembles FIRST … LAST; reused across records
	inRecord bool   // a FIRST has been read and its LAST has not
	recStart int64  // offset of the FIRST of the record being assembled

	lastOff int64 // offset of the last record returned
	lastEnd int64 // offset just past the last record returned
	dataEnd int64 // offset just past the last non-zero byte read
	size    int64 // the log's length, once read to its end
	dropped int64
	synced  bool  // the synced-log rule (NewSyncedReader)
	sealed  bool  // the log ended at its SEAL
	err     error // sticky: io.EOF, *CorruptionError or an I/O error
}

// NewReader returns a Reader of the legacy log r (written by NewWriter or
// NewBufferedWriter), which must be positioned at the start of the log.
// name identifies the log in errors ("000012.log"). It knows fragment
// types 1-4 only: a recyclable log's fragments are damage to it, so such a
// log reads as a torn tail of all its bytes (NewRecyclableReader reads it).
func NewReader(r io.Reader, name string) *Reader { return newReaderSize(r, name, blockSize) }

// NewRecyclableReader returns a Reader of the log number logNum, which may
// be a recyclable log (NewRecyclableWriter with logNum) or a legacy one:
// the first fragment that verifies as one or the other decides, and a
// fragment of the other kind after it is damage. Recyclable fragments
// verify only as logNum's, so an older log's bytes after this one's end
// in a reused file are a torn tail, never records and never corruption;
// a SEAL ends the log (Sealed). Otherwise as NewReader.
func NewRecyclableReader(r io.Reader, name string, logNum uint64) *Reader {
	return newRecyclableReaderSize(r, name, logNum, blockSize)
}

// NewSyncedReader is NewReader for a log whose every Append is synced
// before the next one starts, such as the manifest: only the final record
// can be unfinished at a crash, so it judges the tail by the stricter rule
// of invariant 6 (a cut-short final fragment or zeros are a torn tail,
// anything else is corruption). Everything else is as with NewReader: a
// legacy log, types 5-9 being damage like any unknown type.
func NewSyncedReader(r io.Reader, name string) *Reader {
	rd := NewReader(r, name)
	rd.synced = true
	return rd
}

// newReaderSize reads a log framed with newWriterSize(f, bs).
func newReaderSize(r io.Reader, name string, bs int) *Reader {
	return &Reader{r: r, name: name, kinds: legacyKind, bs: bs, block: make([]byte, bs)}
}

// newRecyclableReaderSize is NewRecyclableReader on blocks of bs bytes.
func newRecyclableReaderSize(r io.Reader, name string, logNum uint64, bs int) *Reader {
	rd := newReaderSize(r, name, bs)
	rd.kinds, rd.num = legacyKind|recyclableKind, logNum
	return rd
}

// Next returns the next record. The slice is valid until the next call to
// Next. At the end of the log Next returns io.EOF, also when the log ends in
// a torn tail (see DroppedBytes) or at its SEAL (Sealed); damage that is
// not a torn tail gives an error wrapping ErrCorruption (a
// *CorruptionError). Both are final: every later call returns the same
// error.
func (r *Reader) Next() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	for {
		// Step 1: out of fragments in this block (its end, or a trailer
		// too short for a header, which the writer fills with zeros).
		if r.pos == r.n || r.bs-r.pos < headerSize {
			if !allZero(r.block[r.pos:r.n]) {
				return nil, r.damage(r.pos, "non-zero block trailer", false)
			}
			if r.loaded && r.n < r.bs {
				return nil, r.end()
			}
			if err := r.load(); err != nil {
				return nil, err
			}
			if r.n == 0 {
				return nil, r.end()
			}
			continue
		}

		// Step 2: decode and verify one fragment. Nothing is trusted
		// until the checksum passes; the length is bounded by the block.
		p := r.pos
		if r.n-p < headerSize {
			return nil, r.damage(p, "header cut short", true)
		}
		t := fragmentType(r.block[p+6])
		n := int(binary.LittleEndian.Uint16(r.block[p+4 : p+6]))
		if msg := framingError(t, p, n, r.bs, r.kinds); msg != "" {
			return nil, r.damage(p, msg, false)
		}
		end := p + headerSize + n
		if end > r.n {
			return nil, r.damage(p, "fragment cut short", true)
		}
		off := r.blockOff + int64(p)
		if binary.LittleEndian.Uint32(r.block[p:p+4]) != checksum(off, r.kindOf(t), r.block[p+4:end]) {
			return nil, r.damage(p, "checksum mismatch", false)
		}
		r.kinds = legacyKind
		if t.recyclable() {
			r.kinds = recyclableKind
		}

		// Step 3: fit the fragment into its record, or end the log at its
		// seal without a look at what follows.
		payload := r.block[p+headerSize : end]
		switch t.role() {
		case typeSeal:
			if r.inRecord {
				return nil, r.damage(p, "SEAL inside a record", false)
			}
			r.sealed, r.err = true, io.EOF
			return nil, r.err
		case typeFull:
			if r.inRecord {
				return nil, r.damage(p, "FULL inside a record", false)
			}
			r.pos = end
			r.lastOff, r.lastEnd = off, off+int64(headerSize+n)
			return payload, nil
		case typeFirst:
			if r.inRecord {
				return nil, r.damage(p, "FIRST inside a record", false)
			}
			r.inRecord, r.recStart = true, off
			r.rec = append(r.rec[:0], payload...)
		case typeMiddle, typeLast:
			if !r.inRecord {
				return nil, r.damage(p, t.String()+" without FIRST", false)
			}
			r.rec = append(r.rec, payload...)
			if t.role() == typeLast {
				r.pos = end
				r.inRecord = false
				r.lastOff, r.lastEnd = r.recStart, off+int64(headerSize+n)
				return r.rec, nil
			}
		}
		r.pos = end
	}
}

// kindOf returns the kind of log, this one's, whose fragments have type t.
func (r *Reader) kindOf(t fragmentType) logKind {
	return logKind{recyclable: t.recyclable(), num: r.num}
}

// load reads the next block (the first one on the first call). At the end
// of the log it leaves fewer than blockSize bytes, possibly none.
func (r *Reader) load() error {
	if r.loaded {
		r.blockOff += int64(r.bs)
	}
	r.loaded = true
	r.pos = 0
	n, err := io.ReadFull(r.r, r.block)
	r.n = n
	// From the end, a data block's last non-zero byte is a few bytes away
	// (a trailer, a payload's zeros): only a zero tail costs a whole scan.
	if k := len(bytes.TrimRight(r.block[:n], "\x00")); k > 0 {
		r.dataEnd = r.blockOff + int64(k)
	}
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		r.err = fmt.Errorf("wal %s: read at offset %d: %w", r.name, r.blockOff+int64(n), err)
		return r.err
	}
	return nil
}

// end finishes the log at its last byte: whatever follows the last record
// returned (a FIRST whose LAST never came, padding) was torn off by a crash.
// Every caller has read the log to its end, so dataEnd is the file's.
func (r *Reader) end() error {
	r.dropped = max(r.dataEnd, r.lastEnd) - r.lastEnd
	r.size = r.blockOff + int64(r.n)
	r.err = io.EOF
	return r.err
}

// Offset returns the file offset where the last record returned by Next
// starts (the offset Writer.Append returned for it).
func (r *Reader) Offset() int64 { return r.lastOff }

// RecordsEnd returns the file offset just past the last record returned by
// Next, 0 before the first.
func (r *Reader) RecordsEnd() int64 { return r.lastEnd }

// EndsCleanly reports, once Next has returned io.EOF, whether the log
// ended at its SEAL, or its bytes end at its last record, or go on past it
// only in what a mapped Writer reserves: zeros, to a multiple of the
// window size (a crash, or a machine crash after Close's unsynced cut,
// leaves them). A legacy log that a newer one follows must end so: it was
// synced before the newer one was created, so any other tail is damage —
// zeros included, since a file system can lose a synced file's last pages
// as zeros. A recyclable log that a newer one follows must end at its
// SEAL (the engine seals every log it leaves): ending cleanly is not
// enough, since a cut at a record boundary ends cleanly too.
func (r *Reader) EndsCleanly() bool {
	return r.err == io.EOF && (r.sealed || r.size == r.lastEnd ||
		r.dataEnd <= r.lastEnd && r.size%windowSize == 0)
}

// Sealed reports, once Next has returned io.EOF, whether the log ended at
// its SEAL (Writer.Seal): the Reader looked at nothing after it.
func (r *Reader) Sealed() bool { return r.sealed }

// Legacy reports whether the fragments read so far are a legacy log's
// (NewWriter's), which no SEAL ends: false for a recyclable log, and for
// one in which no fragment verified.
func (r *Reader) Legacy() bool { return r.kinds == legacyKind }

// DroppedBytes returns, once Next has returned io.EOF, how many bytes
// followed the last record returned up to the log's last non-zero byte:
// the torn tail a crash left (0 for a log that ended cleanly or at its
// SEAL). Zeros that end the file are not counted: they held no record,
// whether a mapped Writer reserved them (a log may end in up to a window
// of zeros after a crash) or a file system extended the file without its
// data. Bytes of an older log that the file held before it was reused are
// counted: an unsealed recyclable log's torn tail may thus run to the end
// of a long file. It is 0 while reading and after a corruption.
func (r *Reader) DroppedBytes() int64 { return r.dropped }

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
