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
// The writer makes every index entry a restart point, so entry i starts
// at restart i and decodes without its neighbours. newIndex checks every
// entry once; key and handle then trust the block, which nothing writes
// to while it is in use. The keys entry and key return alias the block:
// they are valid while whatever holds its memory (tableIndex.keep, or a
// block-cache handle) does.
type index struct {
	data        []byte // the block: entries, then the restart array
	restartsOff int
	n           int
}

// newIndex checks block as an index (docs/format.md, "Index block"): its
// entries tile the block up to the restart array, entry i at restart i
// with its shared length a single zero byte; every key holds a trailer
// and is above the one before; checkVal accepts every value. Those checks
// are what index's accessors rely on.
func newIndex(block []byte, checkVal func(i int, val []byte) error) (index, error) {
	var it blockIter
	if err := it.init(block); err != nil {
		return index{}, err
	}
	x := index{data: block, restartsOff: it.restartsOff, n: it.numRestarts}
	end := 0 // where the previous entry ended: the next must start there
	for i := range x.n {
		off := it.restart(i)
		if off != end || off >= x.restartsOff || block[off] != 0 || !it.decodeRestart(i) {
			return index{}, fmt.Errorf("index entry %d is not whole at its restart point: %w", i, base.ErrCorruption)
		}
		if len(it.key) < base.TrailerLen {
			return index{}, errBlock
		}
		if err := checkVal(i, it.val); err != nil {
			return index{}, err
		}
		if i > 0 && base.CompareEncoded(x.key(i-1), it.key) >= 0 {
			return index{}, fmt.Errorf("index keys out of order: %w", base.ErrCorruption)
		}
		end = it.nextOffset
	}
	if end != x.restartsOff {
		return index{}, fmt.Errorf("index block has bytes outside its %d entries: %w", x.n, base.ErrCorruption)
	}
	return x, nil
}

// dataHandles is newIndex's value check for an index of data blocks:
// every value a handle of a block in [0, dataEnd).
func dataHandles(dataEnd uint64) func(int, []byte) error {
	return func(_ int, val []byte) error {
		h, ok := decodeHandle(val)
		if !ok {
			return fmt.Errorf("bad block handle: %w", base.ErrCorruption)
		}
		return checkHandle(h, dataEnd)
	}
}

// indexOver is the index of a block newIndex accepted before (a partition
// found in the block cache, which holds only checked ones), rebuilt
// without checking it again.
func indexOver(block []byte) index {
	n := int(binary.LittleEndian.Uint32(block[len(block)-4:]))
	return index{data: block, restartsOff: len(block) - 4 - 4*n, n: n}
}

// len is the number of entries.
func (x *index) len() int { return x.n }

// entry returns entry i's encoded key and its value, aliasing the block.
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

func (x *index) key(i int) []byte {
	k, _ := x.entry(i)
	return k
}

func (x *index) handle(i int) handle {
	_, v := x.entry(i)
	h, _ := decodeHandle(v)
	return h
}

// search returns the first entry from from on whose key is >= (ukey,
// trailer), or x.len(): the entries before from must all be below it.
func (x *index) search(from int, ukey []byte, trailer uint64) int {
	lo, hi := from, x.n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if c, _ := cmpKey(x.key(m), ukey, trailer); c < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}
