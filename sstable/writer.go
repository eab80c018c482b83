package sstable

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/golang/snappy"
	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/vfs"
)

// WriterOptions configure the layout of a table. Zero values take defaults.
type WriterOptions struct {
	// BlockSize is the uncompressed size at which a data block is cut
	// (default 4096, at most 8 MiB).
	BlockSize int
	// BlockRestartInterval is the number of entries between restart points
	// in a data block (default 16).
	BlockRestartInterval int
	// BloomBitsPerKey sizes the filter block: ⌈n·BloomBitsPerKey/512⌉
	// 64-byte lines for n keys, so a fraction of a bit counts; 0 or less
	// writes no filter block.
	BloomBitsPerKey float64
	// Split, if not nil and the table has a filter block, adds each
	// distinct prefix of the table's user keys to the filter
	// (filter.PrefixHash), sized for keys and prefixes together, and
	// records Split.Name in the properties (Properties.FilterSplit), so
	// that Reader.MayContainPrefix can rule the table out for a prefix.
	// Its Name must not be empty.
	Split *filter.Split
	// RangeFilter, if its BitsPerKey is not 0, writes a range-filter block
	// (rangefilter.go): a filter.Grafite of that many bits per distinct
	// key point, tuned for ranges of RangeFilter.RangeLen points and
	// seeded with TableID, so that Reader.MayContainRange can rule the
	// table out for a key range.
	RangeFilter filter.GrafiteOptions
	// KeyHashes writes a key-hash block (keyhashes.go): the key-hash set
	// (filter.AppendKeyHashes) of the user keys of the table's point
	// entries, sets and deletions, which Reader.AppendKeyHashes returns
	// for the engine's tree-wide filter. The Writer holds 8 bytes per
	// distinct user key until Finish.
	KeyHashes bool
	// Compression enables snappy per data block, kept only where it saves at
	// least 1/8 of the block.
	Compression bool
	// TableID is stored in the properties block (Properties.TableID): the
	// engine draws a random nonzero id per table and records it in the
	// manifest, and ReaderOptions.ExpectTableID checks it at Open. 0 stores
	// no id.
	TableID uint64
	// DBID is the identity of the DB writing the table, stored in the
	// properties block (Properties.DBID); 0 stores none.
	DBID uint64
}

func (o WriterOptions) withDefaults() WriterOptions {
	if o.BlockSize <= 0 {
		o.BlockSize = 4096
	}
	o.BlockSize = min(o.BlockSize, maxBlockSizeOption)
	if o.BlockRestartInterval <= 0 {
		o.BlockRestartInterval = 16
	}
	return o
}

// Writer builds one table from internal entries added in strictly increasing
// order. It is not safe for concurrent use. Any error is sticky: every later
// call returns it. Finish or Abort must be called exactly once; both close
// the file.
type Writer struct {
	f      vfs.File
	bw     *bufio.Writer
	opts   WriterOptions
	offset uint64 // bytes handed to bw so far
	err    error

	data  blockBuilder
	index blockBuilder // the index partition being filled
	// unindexed is the last data block written, not yet in the index: its
	// separator waits for the next block's first key (indexBlock).
	unindexed    handle
	hasUnindexed bool
	sepBuf       []byte
	lastSepWhole bool // whether the index's last key is whole
	// parts are the finished index partitions, written after the filter
	// (Finish), and partsSize their total size.
	parts     []indexPart
	partsSize int
	filter    *filter.CacheLineBuilder
	lastKey   []byte // encoded internal key of the last Add
	keyBuf    []byte
	compBuf   []byte
	props     Properties
	finished  bool
	rangeDels Spans // SetRangeDels; written by Finish
	// lastPrefix is the length of the last Add's prefix under
	// WriterOptions.Split: lastKey[:lastPrefix].
	lastPrefix int
	ranges     *filter.GrafiteBuilder // WriterOptions.RangeFilter; nil for none
	// keyHashes are the filter.Hash of each distinct user key, in key
	// order, under WriterOptions.KeyHashes; keyHashSet is the key-hash
	// set Finish wrote, for KeyHashes.
	keyHashes, keyHashSet []uint64
}

// NewWriter starts a table on f, which the Writer owns from now on.
func NewWriter(f vfs.File, opts WriterOptions) *Writer {
	opts = opts.withDefaults()
	w := &Writer{
		f:     f,
		bw:    newWriteBuffer(f),
		opts:  opts,
		data:  blockBuilder{restartInterval: opts.BlockRestartInterval},
		index: blockBuilder{restartInterval: indexRestartInterval},
		props: Properties{TableID: opts.TableID, DBID: opts.DBID, formatVersion: formatVersion},
	}
	w.ranges = opts.RangeFilter.Builder(opts.TableID)
	if opts.KeyHashes {
		w.keyHashes = keyHashBuf()
	}
	if opts.BloomBitsPerKey > 0 {
		w.filter = filter.NewCacheLineBuilder(opts.BloomBitsPerKey)
		if opts.Split != nil && opts.Split.Name == "" {
			w.err = fmt.Errorf("sstable: a split needs a name")
		}
	}
	return w
}

// writeBuffers keeps the write buffers of finished Writers for the next:
// a compaction writes one table after another, and 256 KiB allocated for
// each was a good part of what a fill allocated.
var writeBuffers sync.Pool // of *bufio.Writer

func newWriteBuffer(f vfs.File) *bufio.Writer {
	if bw, ok := writeBuffers.Get().(*bufio.Writer); ok {
		bw.Reset(f)
		return bw
	}
	return bufio.NewWriterSize(f, 256<<10)
}

// release gives the Writer's buffers to the next Writer, once it has
// finished or been abandoned.
func (w *Writer) release() {
	w.bw.Reset(nil)
	writeBuffers.Put(w.bw)
	w.bw = nil
	if w.filter != nil {
		w.filter.Reset() // gives its hashes' memory back
		w.filter = nil
	}
	if hs := w.keyHashes; hs != nil {
		keyHashBufs.Put(&hs)
		w.keyHashes = nil
	}
}

// Add appends an entry. key must be strictly greater than the previous key
// (base.Compare), else the error wraps ErrOutOfOrder.
func (w *Writer) Add(key InternalKey, value []byte) error {
	if w.err != nil {
		return w.err
	}
	if w.finished {
		return ErrClosed
	}
	if len(key.UserKey) > MaxKeySize || len(value) > MaxValueSize || !key.Kind().Valid() {
		return fmt.Errorf("sstable: add %d-byte key %s, %d-byte value: %w", len(key.UserKey), key.Kind(), len(value), ErrTooLarge)
	}
	w.keyBuf = key.Append(w.keyBuf[:0])
	if w.props.NumEntries > 0 && base.CompareEncoded(w.keyBuf, w.lastKey) <= 0 {
		// Not sticky: the table so far is still valid.
		return fmt.Errorf("sstable: add %v after %v: %w", key, decodedOrRaw(w.lastKey), ErrOutOfOrder)
	}
	if w.filter != nil || w.opts.KeyHashes {
		h := filter.Hash(key.UserKey) // once, for both
		if w.filter != nil {
			w.addToFilter(key.UserKey, h)
		}
		if w.opts.KeyHashes {
			w.addKeyHash(h)
		}
	}
	if w.ranges != nil {
		w.ranges.AddKey(key.UserKey)
	}
	p := &w.props
	if p.NumEntries == 0 {
		p.Smallest = InternalKey{UserKey: append([]byte(nil), key.UserKey...), Trailer: key.Trailer}
		p.SmallestSeq, p.LargestSeq = key.Seq(), key.Seq()
	}
	p.SmallestSeq, p.LargestSeq = min(p.SmallestSeq, key.Seq()), max(p.LargestSeq, key.Seq())
	if p.NumEntries > 0 && bytes.Equal(key.UserKey, w.lastKey[:len(w.lastKey)-base.TrailerLen]) {
		p.OlderVersions++
	}
	p.NumEntries++
	if key.Kind() == KindDelete {
		p.NumDeletions++
	}
	p.RawKeyBytes += uint64(len(w.keyBuf))
	p.RawValueBytes += uint64(len(value))

	if w.hasUnindexed {
		w.indexBlock(w.keyBuf)
	}
	w.data.add(w.keyBuf, value)
	w.lastKey, w.keyBuf = w.keyBuf, w.lastKey
	if w.data.estimatedSize() >= w.opts.BlockSize {
		w.flushDataBlock()
	}
	return w.err
}

// addToFilter adds ukey, of Hash h, to the filter, and with a split its
// prefix first when it differs from the last key's. Consecutive keys
// share prefixes, so this adds each distinct prefix of the table once
// (contract 2 of filter.Split makes them contiguous; a Len that breaks it
// only adds a prefix more than once). The prefix goes first so that the
// versions of one key are consecutive hashes, which the builder counts
// once.
func (w *Writer) addToFilter(ukey []byte, h uint64) {
	if s := w.opts.Split; s != nil {
		n := s.Len(ukey)
		if w.props.NumEntries == 0 || !bytes.Equal(ukey[:n], w.lastKey[:w.lastPrefix]) {
			w.filter.AddHash(filter.PrefixHash(ukey[:n]))
		}
		w.lastPrefix = n
	}
	w.filter.AddHash(h)
}

func decodedOrRaw(enc []byte) any {
	if k, err := base.DecodeInternalKey(enc); err == nil {
		return k
	}
	return enc
}

// EstimatedSize is about the file size if Finish were called now, less the
// filter, properties and footer: what compaction compares against its target
// file size. The pending data block counts uncompressed.
func (w *Writer) EstimatedSize() uint64 {
	est := w.offset + uint64(w.partsSize+w.index.estimatedSize())
	if w.data.entries > 0 {
		est += uint64(w.data.estimatedSize()) + blockTrailerLen
	}
	return est
}

// flushDataBlock writes the pending data block. It is indexed once the
// next block's first key is known (indexBlock), or at Finish.
func (w *Writer) flushDataBlock() {
	if w.data.entries == 0 {
		return
	}
	w.unindexed, w.hasUnindexed = w.writeBlock(w.data.finish(), w.opts.Compression), true
	w.data.reset()
	w.props.NumDataBlocks++
	w.props.DataBytes += w.unindexed.length + blockTrailerLen
}

// indexBlock adds the unindexed block to the index under its separator
// from next, the first key of the block after it (nil: none, the table's
// last block), while w.lastKey is still the block's last key. The value
// is the block's length<<1 | whole, and at a restart point its offset
// (docs/format.md, "Index partition").
func (w *Writer) indexBlock(next []byte) {
	w.hasUnindexed = false
	h := w.unindexed
	w.sepBuf, w.lastSepWhole = appendSeparator(w.sepBuf[:0], w.lastKey, next)
	var vb [2 * binary.MaxVarintLen64]byte
	w.index.add(w.sepBuf, appendCompactValue(vb[:0], h, w.lastSepWhole, w.index.restartNext()))
	if w.index.estimatedSize() >= indexPartitionSize {
		w.cutIndexPartition()
	}
}

// indexPart is a finished index partition: its block, its last key and
// whether that is whole, and the number of its first data block.
type indexPart struct {
	block, lastKey []byte
	whole          bool
	first          int
}

// cutIndexPartition finishes the index partition being filled, if it has
// an entry. REQUIRES: no block is unindexed.
func (w *Writer) cutIndexPartition() {
	if w.index.entries == 0 {
		return
	}
	first := int(w.props.NumDataBlocks) - w.index.entries
	block := append([]byte(nil), w.index.finish()...)
	w.parts = append(w.parts, indexPart{block: block, lastKey: append([]byte(nil), w.index.lastKey...), whole: w.lastSepWhole, first: first})
	w.partsSize += len(block) + blockTrailerLen
	w.index.reset()
}

// writeBlock writes a block and its trailer, compressing it when asked and
// when snappy saves at least 1/8, sealed to the table and its offset.
func (w *Writer) writeBlock(raw []byte, compress bool) handle {
	return w.writeBlockSealed(raw, compress, w.props.seal(w.offset))
}

// writeBlockSealed is writeBlock with the seal given: 0 for the
// properties block, which is never sealed.
func (w *Writer) writeBlockSealed(raw []byte, compress bool, seal uint32) handle {
	stored, typ := raw, compressionNone
	if compress {
		w.compBuf = snappy.Encode(w.compBuf[:cap(w.compBuf)], raw)
		if len(w.compBuf) <= len(raw)-len(raw)/8 {
			stored, typ = w.compBuf, compressionSnappy
		}
	}
	h := handle{offset: w.offset, length: uint64(len(stored))}
	var trailer [blockTrailerLen]byte
	trailer[0] = typ
	binary.LittleEndian.PutUint32(trailer[1:], checksum(stored, typ)^seal)
	w.write(stored)
	w.write(trailer[:])
	return h
}

func (w *Writer) write(b []byte) {
	if w.err != nil {
		return
	}
	n, err := w.bw.Write(b)
	w.offset += uint64(n)
	if err != nil {
		w.err = fmt.Errorf("sstable: write at %d: %w", w.offset, err)
	}
}
