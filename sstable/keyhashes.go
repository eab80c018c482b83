package sstable

import (
	"fmt"
	"sync"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
)

// The key-hash block holds the key-hash set (filter.AppendKeyHashes) of
// the user keys of the table's point entries: the top 40 bits of each
// one's filter.Hash, sorted, each once. It is what the engine rebuilds
// its tree-wide filter (filter.Maplet, issue 29) from at open without
// reading data blocks. Every kind of entry is in it: a lookup must find
// the table of a deletion, which hides older values in deeper tables.
// The table's range tombstones are not (the range-deletion block has
// them), nor the prefixes a filter.Split adds to the Bloom filter: the
// tree-wide filter answers whole keys.
//
// It is an ordinary block (trailer and CRC, never compressed) written
// after the range-filter block and before the properties, which locate it
// (filter.key_hashes_block, a handle) and count its values
// (filter.key_hashes), so the footer is unchanged and a table without the
// properties — every table written before the block existed — has none
// (docs/format.md, "Key-hash block").
//
// Unlike the other meta blocks it is not read at Open, nor kept: its
// reader reads it once, when the engine opens or adds the table to its
// tree-wide filter, and a Reader holds nothing of it but the handle.

// keyHashBufs keeps the hashes' memory of finished Writers for the next,
// as writeBuffers does their write buffers (a *[]uint64 each): a
// compaction writes one table after another, and the block's allocation
// per table of 100,000 keys fell from 5.1 MB to 1.8 with it
// (BenchmarkWriteKeyHashes, medians of 10). Its CPU, 36 to 42 ns per key
// with or without, is mostly the set's sort (about 15) and the encoding
// and decoding that follow.
var keyHashBufs sync.Pool

// keyHashBuf returns an empty slice for a Writer's key hashes, with the
// capacity a finished Writer left, if any.
func keyHashBuf() []uint64 {
	if p, ok := keyHashBufs.Get().(*[]uint64); ok {
		return (*p)[:0]
	}
	return nil
}

// addKeyHash collects h, the Hash of an added entry's user key, unless it
// is the last one's: the versions of a key are consecutive.
func (w *Writer) addKeyHash(h uint64) {
	if n := len(w.keyHashes); n == 0 || w.keyHashes[n-1] != h {
		w.keyHashes = append(w.keyHashes, h)
	}
}

// writeKeyHashes writes the key-hash block, if the writer collects key
// hashes, and records it in the properties.
func (w *Writer) writeKeyHashes() {
	if !w.opts.KeyHashes {
		return
	}
	enc := filter.AppendKeyHashes(nil, w.keyHashes)
	// The count of distinct 40-bit values is the encoding's; decoding it
	// also proves the block reads back, and gives KeyHashes the set.
	set, err := filter.DecodeKeyHashes(enc, make([]uint64, 0, len(w.keyHashes)))
	if err != nil {
		w.err = fmt.Errorf("sstable: key-hash block: %w", err)
		return
	}
	w.keyHashSet = set
	p := &w.props
	p.KeyHashes = uint64(len(set))
	p.keyHashBlock = w.writeBlock(enc, false)
	p.KeyHashBytes = p.keyHashBlock.length + blockTrailerLen
}

// checkKeyHashes bounds the key-hash block's handle at Open, so that a
// table whose properties misplace it fails there rather than when the
// block is asked for.
func (r *Reader) checkKeyHashes() error {
	if !r.HasKeyHashes() {
		return nil
	}
	return checkPropsHandle(r.props.keyHashBlock, r.props.FileSize, "key-hash")
}

// KeyHashes returns, after a Finish that succeeded, the key-hash set the
// table's key-hash block holds (as Reader.AppendKeyHashes would read it
// back), nil without the block. The caller owns it: a tree-wide filter
// files a table it just wrote without reading the block back.
func (w *Writer) KeyHashes() []uint64 { return w.keyHashSet }

// HasKeyHashes reports whether the table has a key-hash block: whether
// it was written with WriterOptions.KeyHashes.
func (r *Reader) HasKeyHashes() bool { return r.props.keyHashBlock != (handle{}) }

// AppendKeyHashes reads the table's key-hash block and appends its
// values to dst, ascending, each the top 40 bits (filter.KeyHashBits) of
// a user key's filter.Hash with the low bits zero, one per distinct
// value; a table without the block (HasKeyHashes) appends none. It reads
// the file each time, keeps nothing, and counts the read in
// ReadStats.OpenBlocksRead and OpenBytesRead. A damaged block — its
// checksum, its encoding, or a count other than Properties.KeyHashes —
// is an error wrapping base.ErrCorruption that names the file, and dst
// comes back as given.
func (r *Reader) AppendKeyHashes(dst []uint64) ([]uint64, error) {
	h := r.props.keyHashBlock
	if h == (handle{}) {
		return dst, nil
	}
	// Read into a pooled buffer, as a data block is, not into pinned meta
	// memory: the block lives only until it is decoded, and a mapping made
	// and unmapped per table cost a flush or compaction of a TreeWide DB
	// two system calls and the page faults between them.
	buf, err := r.readBlock(h)
	if err != nil {
		return dst, fmt.Errorf("sstable %s: key-hash block at %d: %w", r.name, h.offset, err)
	}
	r.stats.openBlocksRead.Add(1)
	r.stats.openBytesRead.Add(h.length + blockTrailerLen)
	start := len(dst)
	dst, err = filter.DecodeKeyHashes(buf.Block(), dst)
	buf.Release() // DecodeKeyHashes copied the values out
	if err != nil {
		return dst, fmt.Errorf("sstable %s: key-hash block at %d: %w: %w", r.name, h.offset, base.ErrCorruption, err)
	}
	if n := uint64(len(dst) - start); n != r.props.KeyHashes {
		return dst[:start], fmt.Errorf("sstable %s: key-hash block at %d holds %d values, properties say %d: %w",
			r.name, h.offset, n, r.props.KeyHashes, base.ErrCorruption)
	}
	return dst, nil
}
