package sstable

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
)

// Properties describe a table. They are stored in the properties block,
// except FileSize, which is the file's length.
type Properties struct {
	NumEntries, NumDeletions uint64
	// OlderVersions counts entries that are not the newest of their user
	// key in the table: versions a snapshot needed when the table was
	// written (or, in L0, a flush could not drop). A last-level table with
	// none and no deletion holds nothing a compaction could remove.
	OlderVersions uint64
	// Smallest and Largest are the first and last internal keys (zero for
	// an empty table). They do not alias any buffer.
	Smallest, Largest       InternalKey
	SmallestSeq, LargestSeq SeqNum
	// FilterLayout is FilterLayoutCacheLine, or "" when the table has no
	// filter block.
	FilterLayout string
	// FilterBitsPerKey is the density the filter was built for, to the
	// thousandth of a bit (property filter.millibits_per_key; tables
	// written before it have filter.bits_per_key, a whole number).
	FilterBitsPerKey float64
	// FilterLines, FilterProbes and FilterPageCRCs (a CRC-32C of every
	// 4 KiB of the filter block, 4 bytes each) let a table whose filter is
	// not pinned read and verify one page of it per probe (filter_pages.go);
	// tables of format version 1 have none of them.
	FilterLines, FilterProbes uint64
	FilterPageCRCs            []byte
	// FilterSplit is the Name of the filter.Split whose prefixes the
	// filter also holds (WriterOptions.Split), "" when it holds whole keys
	// only (written without a split, or before the property existed): such
	// a table is never ruled out for a prefix (Reader.MayContainPrefix).
	FilterSplit string
	// RawKeyBytes and RawValueBytes sum the encoded internal keys and the
	// values as added; DataBytes, IndexBytes and FilterBytes are the stored
	// sizes of those blocks including trailers.
	RawKeyBytes, RawValueBytes         uint64
	DataBytes, IndexBytes, FilterBytes uint64
	FileSize                           uint64
	NumDataBlocks                      uint64
	// TableID is the identity the engine drew for the table and recorded
	// in the manifest (WriterOptions.TableID), so that Open can tell this
	// table's file from another's; 0 when the table has none (written
	// without one, or before the property existed).
	TableID uint64
	// DBID is the identity of the DB that wrote the table
	// (WriterOptions.DBID), so that a DB can tell another DB's table put in
	// its directory from a stray of its own; 0 when it has none.
	DBID uint64
	// RangeDelSpans counts the spans of the table's range-deletion block
	// (rangedel.go), which rangeDelBlock locates; 0 and the zero handle
	// when it has none, as every table written before the block existed.
	RangeDelSpans uint64
	rangeDelBlock handle
	// RangeFilterBits and RangeFilterLen are the bits per key and the
	// range length of the table's range-filter block (rangefilter.go),
	// which rangeFilterBlock locates; 0 and the zero handle when it has
	// none, as every table written before the block existed.
	RangeFilterBits, RangeFilterLen uint64
	rangeFilterBlock                handle
	// RangeFilterBytes is the range-filter block's size including its
	// trailer, what a Reader holds of it in memory; 0 without one. It is
	// the block's handle's, not a property of its own.
	RangeFilterBytes uint64
	// KeyHashes counts the distinct values of the table's key-hash block
	// (keyhashes.go), the top 40 bits of its user keys' hashes, which
	// keyHashBlock locates; KeyHashBytes is the block's size including
	// its trailer (the handle's, not a property of its own). 0 and the
	// zero handle when it has none, as every table written before the
	// block existed; a table with one may count 0 (no point entries).
	KeyHashes, KeyHashBytes uint64
	keyHashBlock            handle
	// formatVersion is the footer's, which with TableID seals the
	// table's blocks (format.go, blockSeal); like FileSize, the reader
	// sets it, not the properties block.
	formatVersion uint32
}

// seal is blockSeal of the block at offset in the table p describes; 0
// before the properties are read, which is right for the one block read
// before them, the properties block itself.
func (p *Properties) seal(offset uint64) uint32 {
	return blockSeal(p.formatVersion, p.TableID, offset)
}

// Property names, in the sorted order they are written.
const (
	propDataBlocks    = "data.blocks"
	propDataBytes     = "data.bytes"
	propDBID          = "db.id"
	propDeletions     = "entries.deletions"
	propOlderVersions = "entries.older_versions"
	propEntries       = "entries.total"
	propFilterBytes   = "filter.bytes"
	propKeyHashes     = "filter.key_hashes"
	propKeyHashBlock  = "filter.key_hashes_block"
	propFilterLayout  = "filter.layout"
	propFilterLines   = "filter.lines"
	propFilterMillis  = "filter.millibits_per_key"
	propFilterCRCs    = "filter.page_crcs"
	propFilterSplit   = "filter.prefix_split"
	propFilterProbes  = "filter.probes"
	propRangeBits     = "filter.range_bits"
	propRangeBlock    = "filter.range_block"
	propRangeLen      = "filter.range_len"
	propIndexBytes    = "index.bytes"
	propKeyLargest    = "key.largest"
	propKeySmallest   = "key.smallest"
	propRangeDelBlock = "rangedel.block"
	propRangeDelSpans = "rangedel.spans"
	propRawKeyBytes   = "raw.key_bytes"
	propRawValueBytes = "raw.value_bytes"
	propSeqLargest    = "seq.largest"
	propSeqSmallest   = "seq.smallest"
	propTableID       = "table.id"
)

// propFilterBits is the whole bits per key that tables written before
// filter.millibits_per_key carry; it is read, never written.
const propFilterBits = "filter.bits_per_key"

// maxFilterBitsPerKey bounds the density property a reader accepts: far
// above any filter the builder makes (it clamps to 64), low enough that no
// corrupt value overflows.
const maxFilterBitsPerKey = 1 << 16

// encode writes the properties as a block of name → value entries (the
// block format, restart interval 1). Numbers are uvarints, keys are encoded
// internal keys, the layout is its string. A zero TableID, DBID or
// OlderVersions is not written, so it reads back the same from old and new tables; nor
// are the filter's density and split without a filter, nor an empty split,
// nor the range filter's and key-hash block's properties without them.
func (p *Properties) encode() []byte {
	b := blockBuilder{restartInterval: 1}
	u := func(name string, v uint64) { b.add([]byte(name), binary.AppendUvarint(nil, v)) }
	u(propDataBlocks, p.NumDataBlocks)
	u(propDataBytes, p.DataBytes)
	if p.DBID != 0 {
		u(propDBID, p.DBID)
	}
	u(propDeletions, p.NumDeletions)
	if p.OlderVersions != 0 {
		u(propOlderVersions, p.OlderVersions)
	}
	u(propEntries, p.NumEntries)
	u(propFilterBytes, p.FilterBytes)
	if p.keyHashBlock != (handle{}) {
		u(propKeyHashes, p.KeyHashes)
		b.add([]byte(propKeyHashBlock), appendHandle(nil, p.keyHashBlock))
	}
	b.add([]byte(propFilterLayout), []byte(p.FilterLayout))
	if p.FilterLayout != "" {
		u(propFilterLines, p.FilterLines)
		u(propFilterMillis, uint64(math.Round(max(p.FilterBitsPerKey, 0)*1000)))
		b.add([]byte(propFilterCRCs), p.FilterPageCRCs)
		if p.FilterSplit != "" {
			b.add([]byte(propFilterSplit), []byte(p.FilterSplit))
		}
		u(propFilterProbes, p.FilterProbes)
	}
	if p.rangeFilterBlock != (handle{}) {
		u(propRangeBits, p.RangeFilterBits)
		b.add([]byte(propRangeBlock), appendHandle(nil, p.rangeFilterBlock))
		u(propRangeLen, p.RangeFilterLen)
	}
	u(propIndexBytes, p.IndexBytes)
	if p.NumEntries > 0 {
		b.add([]byte(propKeyLargest), p.Largest.Append(nil))
		b.add([]byte(propKeySmallest), p.Smallest.Append(nil))
	}
	if p.RangeDelSpans != 0 {
		b.add([]byte(propRangeDelBlock), appendHandle(nil, p.rangeDelBlock))
		u(propRangeDelSpans, p.RangeDelSpans)
	}
	u(propRawKeyBytes, p.RawKeyBytes)
	u(propRawValueBytes, p.RawValueBytes)
	u(propSeqLargest, uint64(p.LargestSeq))
	u(propSeqSmallest, uint64(p.SmallestSeq))
	if p.TableID != 0 {
		u(propTableID, p.TableID)
	}
	return b.finish()
}

// decodeProperties parses a properties block. Unknown names are skipped, so
// a later version may add properties without a format change.
func decodeProperties(block []byte) (Properties, error) {
	var p Properties
	var it blockIter
	if err := it.init(block); err != nil {
		return p, err
	}
	seen := map[string]bool{}
	for ok := it.first(); ok; ok = it.next() {
		name, v := string(it.key), it.val
		seen[name] = true
		var num uint64
		switch name {
		case propFilterLayout:
			p.FilterLayout = string(v)
			continue
		case propFilterCRCs:
			p.FilterPageCRCs = append([]byte(nil), v...)
			continue
		case propFilterSplit:
			p.FilterSplit = string(v)
			continue
		case propRangeDelBlock, propRangeBlock, propKeyHashBlock:
			h, ok := decodeHandle(v)
			if !ok {
				return p, fmt.Errorf("property %s: bad handle: %w", name, base.ErrCorruption)
			}
			switch name {
			case propRangeBlock:
				p.rangeFilterBlock = h
			case propKeyHashBlock:
				p.keyHashBlock = h
			default:
				p.rangeDelBlock = h
			}
			continue
		case propKeyLargest, propKeySmallest:
			k, err := decodeInternalKeyCopy(v)
			if err != nil {
				return p, fmt.Errorf("property %s: %w", name, err)
			}
			if name == propKeyLargest {
				p.Largest = k
			} else {
				p.Smallest = k
			}
			continue
		}
		n, m := binary.Uvarint(v)
		if m <= 0 || m != len(v) {
			return p, fmt.Errorf("property %s: bad uvarint: %w", name, base.ErrCorruption)
		}
		num = n
		switch name {
		case propDataBlocks:
			p.NumDataBlocks = num
		case propDataBytes:
			p.DataBytes = num
		case propDeletions:
			p.NumDeletions = num
		case propOlderVersions:
			p.OlderVersions = num
		case propEntries:
			p.NumEntries = num
		case propFilterBits, propFilterMillis:
			scale := map[string]uint64{propFilterBits: 1, propFilterMillis: 1000}[name]
			if num > maxFilterBitsPerKey*scale {
				return p, fmt.Errorf("property %s = %d: %w", name, num, base.ErrCorruption)
			}
			p.FilterBitsPerKey = float64(num) / float64(scale)
		case propFilterBytes:
			p.FilterBytes = num
		case propFilterLines:
			p.FilterLines = num
		case propFilterProbes:
			p.FilterProbes = num
		case propIndexBytes:
			p.IndexBytes = num
		case propRawKeyBytes:
			p.RawKeyBytes = num
		case propRawValueBytes:
			p.RawValueBytes = num
		case propSeqLargest:
			p.LargestSeq = SeqNum(num)
		case propSeqSmallest:
			p.SmallestSeq = SeqNum(num)
		case propTableID:
			p.TableID = num
		case propDBID:
			p.DBID = num
		case propRangeDelSpans:
			p.RangeDelSpans = num
		case propRangeBits:
			p.RangeFilterBits = num
		case propRangeLen:
			p.RangeFilterLen = num
		case propKeyHashes:
			p.KeyHashes = num
		}
	}
	if it.err != nil {
		return p, it.err
	}
	for _, name := range []string{propEntries, propDataBlocks, propIndexBytes} {
		if !seen[name] {
			return p, fmt.Errorf("property %s missing: %w", name, base.ErrCorruption)
		}
	}
	if hasBlock := p.rangeFilterBlock != (handle{}); hasBlock != (p.RangeFilterBits != 0) || hasBlock != (p.RangeFilterLen != 0) ||
		p.RangeFilterBits > filter.GrafiteMaxBitsPerKey {
		return p, fmt.Errorf("range filter block %v, %d bits per key, range length %d: %w",
			p.rangeFilterBlock, p.RangeFilterBits, p.RangeFilterLen, base.ErrCorruption)
	}
	if p.rangeFilterBlock != (handle{}) {
		p.RangeFilterBytes = p.rangeFilterBlock.length + blockTrailerLen
	}
	// The key-hash count comes with the block's handle, and is at most a
	// value per entry.
	if hasBlock := p.keyHashBlock != (handle{}); hasBlock != seen[propKeyHashes] || p.KeyHashes > p.NumEntries {
		return p, fmt.Errorf("key-hash block %v, %d key hashes (property present %t), %d entries: %w",
			p.keyHashBlock, p.KeyHashes, seen[propKeyHashes], p.NumEntries, base.ErrCorruption)
	}
	if p.keyHashBlock != (handle{}) {
		p.KeyHashBytes = p.keyHashBlock.length + blockTrailerLen
	}
	if p.NumEntries > 0 && (!seen[propKeySmallest] || !seen[propKeyLargest]) {
		return p, fmt.Errorf("non-empty table without key range: %w", base.ErrCorruption)
	}
	return p, nil
}

// decodeInternalKeyCopy decodes an internal key into memory of its own.
func decodeInternalKeyCopy(enc []byte) (InternalKey, error) {
	k, err := base.DecodeInternalKey(enc)
	if err != nil {
		return k, err
	}
	k.UserKey = append(make([]byte, 0, len(k.UserKey)), k.UserKey...)
	return k, nil
}
