package sstable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/cespare/xxhash/v2"

	"github.com/monbandb/monban/internal/base"
)

// Constants of the table format (docs/format.md, "SSTable"; doc.go, # Format).
const (
	// tableMagic is the ASCII bytes "MONBANST" read as a little-endian
	// uint64: a hexdump of a table ends with them.
	tableMagic = 0x54534e41424e4f4d
	// formatVersion is written in every footer: version 4 seals every
	// block but the properties to its table and its place (blockSeal).
	// Open reads versions 3 (formatVersionSeparators: the same blocks,
	// unsealed; from it on, the index holds separators in compact
	// partitions, separator.go and index_compact.go), 2
	// (formatVersionPartitioned: partitions of whole last keys, every
	// entry a restart point) and 1 (formatVersionOneIndex: one such index
	// block, always pinned) too, and rejects others.
	formatVersion            = 4
	formatVersionSealed      = 4
	formatVersionSeparators  = 3
	formatVersionPartitioned = 2
	formatVersionOneIndex    = 1
	// footerLen is the fixed size of the footer at the end of the file.
	footerLen = 64
	// blockTrailerLen is the compression type byte and the CRC-32C that
	// follow every block.
	blockTrailerLen = 5

	// maxBlockLen bounds every block length read from disk before anything
	// is allocated from it. The writer keeps blocks far below it: a block is
	// cut at BlockSize (at most maxBlockSizeOption) plus one entry, and keys
	// and values are bounded by MaxKeySize and MaxValueSize.
	maxBlockLen = 64 << 20
	// MaxKeySize and MaxValueSize are the largest user key and value a
	// table accepts (Writer.Add fails with ErrTooLarge above them).
	MaxKeySize   = 8 << 20
	MaxValueSize = 32 << 20
	// maxBlockSizeOption clamps WriterOptions.BlockSize.
	maxBlockSizeOption = 8 << 20
)

// Block compression types, stored in each block trailer.
const (
	compressionNone   byte = 0
	compressionSnappy byte = 1
)

// FilterLayoutCacheLine names the filter encoding in Properties.FilterLayout:
// filter.CacheLineBuilder's encoding, whose own trailer carries its version.
const FilterLayoutCacheLine = "cache-line-bloom"

var (
	// ErrOutOfOrder is returned by Writer.Add when a key is not strictly
	// greater than the previous one.
	ErrOutOfOrder = errors.New("sstable: keys out of order")
	// ErrTooLarge is returned by Writer.Add for a key or value above
	// MaxKeySize or MaxValueSize, or a kind this version does not write.
	ErrTooLarge = errors.New("sstable: key or value too large")
	// ErrClosed is returned by a Writer after Finish or Abort, and by a
	// Reader after Close.
	ErrClosed = errors.New("sstable: closed")
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// checksum is the CRC-32C of a block's stored bytes followed by its
// compression type byte: a flipped type byte is caught as well.
func checksum(stored []byte, typ byte) uint32 {
	c := crc32.Update(0, crcTable, stored)
	return crc32.Update(c, crcTable, allBytes[typ:int(typ)+1])
}

// A checksum proves that a block's bytes are the ones written, not that
// they are this table's, at this place: a filter block copied over
// another table's of the same length passes its CRC and answers for the
// wrong keys, and so would a data block moved within or between tables.
// So from version 4 the CRC in a block's trailer is XORed with the block's
// seal, a hash of the table's id and the block's offset (RocksDB's
// format_version 6 binds block checksums to their context the same way),
// and a block read anywhere but where it was written fails its check. The
// properties block alone is unsealed, since it holds the id: it is bound
// to its table by that id, which Open compares with the manifest's
// (identity.go), and every block it vouches for is sealed with it.
//
// blockSeal is the seal of the block at offset in a table of the given
// format version and id: 0 (nothing XORed) before version 4, else the low
// 32 bits of xxHash64 of the id and the offset, both u64 little-endian.
func blockSeal(version uint32, tableID, offset uint64) uint32 {
	if version < formatVersionSealed {
		return 0
	}
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:], tableID)
	binary.LittleEndian.PutUint64(b[8:], offset)
	return uint32(xxhash.Sum64(b[:]))
}

// allBytes[i] == i: a one-byte slice of any value without allocating (a
// slice literal would escape into crc32's indirect call).
var allBytes = func() (b [256]byte) {
	for i := range b {
		b[i] = byte(i)
	}
	return b
}()

// handle locates a block: its stored bytes (without trailer) are
// [offset, offset+length), followed by a blockTrailerLen-byte trailer.
type handle struct {
	offset, length uint64
}

func (h handle) end() uint64 { return h.offset + h.length + blockTrailerLen }

func appendHandle(dst []byte, h handle) []byte {
	dst = binary.AppendUvarint(dst, h.offset)
	return binary.AppendUvarint(dst, h.length)
}

func decodeHandle(b []byte) (handle, bool) {
	off, n := binary.Uvarint(b)
	if n <= 0 {
		return handle{}, false
	}
	length, m := binary.Uvarint(b[n:])
	if m <= 0 || n+m != len(b) {
		return handle{}, false
	}
	return handle{off, length}, true
}

// footer is the last footerLen bytes of a table:
//
//	index handle    offset u64, length u64
//	filter handle   offset u64, length u64 (length 0: no filter)
//	props handle    offset u64, length u64
//	version u32 | crc32c of bytes [0, 52) u32 | magic u64
type footer struct {
	index, filter, props handle
	version              uint32
}

func (f footer) encode() []byte {
	b := make([]byte, 0, footerLen)
	for _, h := range []handle{f.index, f.filter, f.props} {
		b = binary.LittleEndian.AppendUint64(b, h.offset)
		b = binary.LittleEndian.AppendUint64(b, h.length)
	}
	b = binary.LittleEndian.AppendUint32(b, f.version)
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, crcTable))
	return binary.LittleEndian.AppendUint64(b, tableMagic)
}

// decodeFooter checks magic, checksum and version, then that every handle
// lies inside [0, footerStart) with lengths below maxBlockLen.
func decodeFooter(b []byte, footerStart uint64) (footer, error) {
	if len(b) != footerLen {
		return footer{}, fmt.Errorf("footer of %d bytes: %w", len(b), base.ErrCorruption)
	}
	if m := binary.LittleEndian.Uint64(b[56:]); m != tableMagic {
		return footer{}, fmt.Errorf("bad magic %#016x (not a monban table): %w", m, base.ErrCorruption)
	}
	if got, want := crc32.Checksum(b[:52], crcTable), binary.LittleEndian.Uint32(b[52:]); got != want {
		return footer{}, fmt.Errorf("footer checksum %#08x, stored %#08x: %w", got, want, base.ErrCorruption)
	}
	var f footer
	hs := []*handle{&f.index, &f.filter, &f.props}
	for i, h := range hs {
		h.offset = binary.LittleEndian.Uint64(b[16*i:])
		h.length = binary.LittleEndian.Uint64(b[16*i+8:])
	}
	f.version = binary.LittleEndian.Uint32(b[48:])
	if f.version < formatVersionOneIndex || f.version > formatVersion {
		return footer{}, fmt.Errorf("format version %d, this build reads %d to %d: %w", f.version, formatVersionOneIndex, formatVersion, base.ErrCorruption)
	}
	for i, h := range hs {
		if i == 1 && h.length == 0 && h.offset == 0 {
			continue // no filter block
		}
		if err := checkHandle(*h, footerStart); err != nil {
			return footer{}, fmt.Errorf("%s handle: %w", [...]string{"index", "filter", "properties"}[i], err)
		}
	}
	return f, nil
}

// checkHandle bounds a handle read from disk before it is used to size a
// read: the block and its trailer must end at or before limit.
func checkHandle(h handle, limit uint64) error {
	if h.length > maxBlockLen || h.offset > limit || h.end() > limit {
		return fmt.Errorf("block [%d, +%d) outside [0, %d) or longer than %d: %w",
			h.offset, h.length, limit, maxBlockLen, base.ErrCorruption)
	}
	return nil
}

// checkPropsHandle bounds the handle of a block the properties locate
// (invariant 3): not empty, and ending before the footer of a file of
// fileSize bytes (at least a footer long: Open has checked).
func checkPropsHandle(h handle, fileSize uint64, what string) error {
	if h.length == 0 || checkHandle(h, fileSize-footerLen) != nil {
		return fmt.Errorf("%s block (%d, %d) outside the %d-byte file: %w", what, h.offset, h.length, fileSize, base.ErrCorruption)
	}
	return nil
}
