package sstable

import (
	"encoding/binary"
	"fmt"

	"github.com/monbandb/monban/internal/base"
)

// index is an index block, searched where it lies rather than decoded
// into an array. An array of (key slice, handle) pairs cost 40 bytes per
// data block on top of the block itself: 4.5 MB of a 4M-key DB's live
// heap, which Go's collector lets grow to twice that in RSS.
//
// Two layouts (docs/format.md, "Index partition"). Flat (format versions
// 1 and 2, and every top-level block): every entry is a restart point,
// so entry i starts at restart i and decodes without its neighbours.
// Compact (version 3 partitions, index_compact.go): a restart point every
// indexRestartInterval entries, keys prefix-compressed between them, and
// only restart entries store their block's offset.
//
// newIndex and newCompactIndex check every entry once; the accessors then
// trust the block, which nothing writes to while it is in use. Keys they
// return alias the block (or the buffer the caller passed): they are
// valid while whatever holds its memory (tableIndex.keep, or a
// block-cache handle) does.
type index struct {
	data        []byte // the block: entries, then the restart array
	restartsOff int
	n           int
	// sep: version 3, whose keys are separators (appendSeparator): a
	// value starts with length<<1 | whole.
	sep bool
	// compact: a version 3 partition.
	compact bool
}

// newIndex checks block as a flat index: its entries tile the block up
// to the restart array, entry i at restart i with its shared length a
// single zero byte; keys ascend (and, but for version 3's bare keys,
// hold a trailer); checkVal accepts every value. Those checks are what
// index's accessors rely on.
func newIndex(block []byte, sep bool, checkVal func(i int, val []byte) error) (index, error) {
	var it blockIter
	if err := it.init(block); err != nil {
		return index{}, err
	}
	x := index{data: block, restartsOff: it.restartsOff, n: it.numRestarts, sep: sep}
	end := 0 // where the previous entry ended: the next must start there
	var prev indexKey
	for i := range x.n {
		off := it.restart(i)
		if off != end || off >= x.restartsOff || block[off] != 0 || !it.decodeRestart(i) {
			return index{}, fmt.Errorf("index entry %d is not whole at its restart point: %w", i, base.ErrCorruption)
		}
		k, ok := x.keyOf(it.key, it.val)
		if !ok {
			return index{}, errBlock
		}
		if err := checkVal(i, it.val); err != nil {
			return index{}, err
		}
		if i > 0 && !prev.below(k) {
			return index{}, fmt.Errorf("index keys out of order: %w", base.ErrCorruption)
		}
		prev = k
		end = it.nextOffset
	}
	if end != x.restartsOff {
		return index{}, fmt.Errorf("index block has bytes outside its %d entries: %w", x.n, base.ErrCorruption)
	}
	return x, nil
}

// keyOf is the key of an entry whose stored key and value are stored and
// val: in version 3 the value's first byte holds the whole flag (the low
// bit of its first uvarint).
func (x *index) keyOf(stored, val []byte) (indexKey, bool) {
	if !x.sep {
		return storedKey(stored, true)
	}
	if len(val) == 0 {
		return indexKey{}, false
	}
	return storedKey(stored, val[0]&1 == 1)
}

// dataHandles is newIndex's value check for a version 1 or 2 index of
// data blocks: every value a handle of a block in [0, dataEnd).
func dataHandles(dataEnd uint64) func(int, []byte) error {
	return func(_ int, val []byte) error {
		h, ok := decodeHandle(val)
		if !ok {
			return fmt.Errorf("bad block handle: %w", base.ErrCorruption)
		}
		return checkHandle(h, dataEnd)
	}
}

// len is the number of entries.
func (x *index) len() int { return x.n }

// entry returns flat entry i's stored key and its value, aliasing the
// block.
func (x *index) entry(i int) (key, val []byte) {
	off := int(binary.LittleEndian.Uint32(x.data[x.restartsOff+4*i:]))
	p := x.data[off+1:] // past the shared length: one zero byte (newIndex)
	if p[0] < 0x80 && p[1] < 0x80 {
		// Both lengths fit in one byte, as they do for keys under 128
		// bytes: a Get decodes a dozen keys, and this path is what keeps
		// that as fast as reading a decoded array.
		k, v := 2+int(p[0]), 2+int(p[0])+int(p[1])
		return p[2:k:k], p[k:v]
	}
	klen, n := binary.Uvarint(p)
	vlen, m := binary.Uvarint(p[n:])
	p = p[n+m:]
	return p[:klen:klen], p[klen : klen+vlen]
}

// key is entry i's key. A compact index rebuilds it in *buf (reused from
// its start, grown if need be) unless it lies at a restart point; buf may
// be nil for a flat one.
func (x *index) key(i int, buf *[]byte) indexKey {
	if x.compact {
		return x.compactKey(i, buf)
	}
	k, _ := x.keyOf(x.entry(i))
	return k
}

// handle locates entry i's data block. REQUIRES: an index of data blocks.
func (x *index) handle(i int) handle {
	if x.compact {
		return x.compactHandle(i)
	}
	_, v := x.entry(i)
	h, _ := decodeHandle(v)
	return h
}

// search returns the first entry from from on whose key is >= (ukey,
// trailer), or x.len(): the entries before from must all be below it.
// REQUIRES: a flat index (compactSearch searches a compact one).
func (x *index) search(from int, ukey []byte, trailer uint64) int {
	lo, hi := from, x.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if k, v := x.entry(m); cmpStored(k, !x.sep || v[0]&1 == 1, ukey, trailer) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
