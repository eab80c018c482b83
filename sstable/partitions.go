package sstable

import (
	"encoding/binary"
	"fmt"
	"sort"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
	"github.com/monbandb/monban/internal/offheap"
)

// indexPartitionSize is the size at which the writer cuts an index
// partition (format version 2): a page, so that a table whose index is
// not pinned reads one page of it per lookup.
const indexPartitionSize = 4096

// tableIndex is a table's index of data blocks, in partitions: index
// blocks of consecutive data blocks, and a top-level block with one entry
// per partition, its last key (the last key of its last data block) →
// its handle and the number of its first data block. A version 1 table
// has one partition and no top-level block.
//
// Data blocks are numbered across partitions: block i lies in partition
// p with starts[p] <= i < starts[p+1]. When the table is pinned, parts
// holds every partition in memory keep owns; when it is paged
// (Reader.indexPaged), partitions are read through the block cache one at a
// time, and only the top-level block stays in memory.
type tableIndex struct {
	top    index
	starts []int // len = partitions + 1; the last is the number of data blocks
	parts  []index
	keep   []*offheap.Buffer
}

// oneIndex is the tableIndex of a version 1 table, whose index block x
// lies in buf.
func oneIndex(x index, buf *offheap.Buffer) tableIndex {
	if x.n == 0 {
		return tableIndex{starts: []int{0}, keep: []*offheap.Buffer{buf}}
	}
	return tableIndex{starts: []int{0, x.n}, parts: []index{x}, keep: []*offheap.Buffer{buf}}
}

func (x *tableIndex) numParts() int { return max(len(x.starts)-1, 0) }

func (x *tableIndex) numBlocks() int {
	if len(x.starts) == 0 {
		return 0 // a closed Reader's
	}
	return x.starts[len(x.starts)-1]
}

// partOf is the partition holding block i, the last one for i past the
// end. REQUIRES: the table has a partition.
func (x *tableIndex) partOf(i int) int {
	if i <= 0 {
		return 0
	}
	p := sort.Search(len(x.starts), func(p int) bool { return x.starts[p] > i }) - 1
	return min(p, x.numParts()-1)
}

// lastKey is partition p's last key.
func (x *tableIndex) lastKey(p int) indexKey {
	if x.top.n == 0 { // version 1: the one partition, flat
		return x.parts[0].key(x.parts[0].n-1, nil)
	}
	return x.top.key(p, nil)
}

// partHandle locates partition p. REQUIRES: version 2 or 3.
func (x *tableIndex) partHandle(p int) handle {
	_, v := x.top.entry(p)
	h, _, _ := decodePartEntry(v, x.top.sep)
	return h
}

// partOver is partition p's index in block, which checkPartition accepted
// before (a partition found in the block cache, which holds only checked
// ones), rebuilt without checking it again.
func (x *tableIndex) partOver(p int, block []byte) index {
	r := int(binary.LittleEndian.Uint32(block[len(block)-4:]))
	ix := index{data: block, restartsOff: len(block) - 4 - 4*r, n: r}
	if x.top.sep {
		ix.n, ix.sep, ix.compact = x.starts[p+1]-x.starts[p], true, true
	}
	return ix
}

func (x *tableIndex) ref() {
	for _, b := range x.keep {
		b.Ref()
	}
}

func (x *tableIndex) release() {
	for _, b := range x.keep {
		b.Release()
	}
}

// appendPartEntry encodes a version 3 top-level value: the partition's
// length<<1 | whole (whether its last key, the entry's, is whole), its
// offset, and the number of its first data block.
func appendPartEntry(dst []byte, h handle, whole bool, first int) []byte {
	dst = binary.AppendUvarint(dst, h.length<<1|b2u(whole))
	dst = binary.AppendUvarint(dst, h.offset)
	return binary.AppendUvarint(dst, uint64(first))
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// decodePartEntry decodes a top-level value: version 2's offset | length
// | first, or (sep) version 3's length<<1 | whole | offset | first.
func decodePartEntry(val []byte, sep bool) (h handle, first int, ok bool) {
	a, n := binary.Uvarint(val)
	b, m := binary.Uvarint(val[max(n, 0):])
	f, k := binary.Uvarint(val[max(n+m, 0):])
	if n <= 0 || m <= 0 || k <= 0 || n+m+k != len(val) || f > maxBlockLen {
		return handle{}, 0, false
	}
	if sep {
		return handle{offset: b, length: a >> 1}, int(f), true
	}
	return handle{offset: a, length: b}, int(f), true
}

// newTopIndex checks a version 2 or (sep) 3 top-level block: its entries are
// partitions in file order, lying in [lo, hi), whose first blocks start
// at 0 and increase, all below numBlocks; it returns the index and the
// partitions' first blocks.
func newTopIndex(block []byte, sep bool, lo, hi uint64, numBlocks int) (index, []int, error) {
	var starts []int
	next := lo // partitions follow one another in the file
	x, err := newIndex(block, sep, func(i int, val []byte) error {
		h, first, ok := decodePartEntry(val, sep)
		switch {
		case !ok:
			return fmt.Errorf("bad partition entry: %w", base.ErrCorruption)
		case h.offset < next || checkHandle(h, hi) != nil:
			return fmt.Errorf("index partition %d at [%d, +%d) outside [%d, %d): %w", i, h.offset, h.length, next, hi, base.ErrCorruption)
		case i == 0 && first != 0, i > 0 && first <= starts[i-1], first >= numBlocks:
			return fmt.Errorf("index partition %d starts at block %d of %d: %w", i, first, numBlocks, base.ErrCorruption)
		}
		next = h.end()
		starts = append(starts, first)
		return nil
	})
	if err != nil {
		return index{}, nil, err
	}
	if (x.n == 0) != (numBlocks == 0) {
		return index{}, nil, fmt.Errorf("%d index partitions for %d data blocks: %w", x.n, numBlocks, base.ErrCorruption)
	}
	return x, append(starts, numBlocks), nil
}

// checkPartition checks partition p's block, read and verified by its
// checksum: an index of data blocks in [0, r.dataEnd), as many as the
// top-level block says, ending at the key it says.
func (r *Reader) checkPartition(p int, block []byte) (index, error) {
	var x index
	var err error
	if r.ix.top.sep {
		x, err = newCompactIndex(block, r.dataEnd)
	} else {
		x, err = newIndex(block, false, dataHandles(r.dataEnd))
	}
	if err != nil {
		return index{}, fmt.Errorf("index partition %d: %w", p, err)
	}
	if want := r.ix.starts[p+1] - r.ix.starts[p]; x.n != want || !x.key(x.n-1, new([]byte)).equal(r.ix.top.key(p, nil)) {
		return index{}, fmt.Errorf("index partition %d has %d blocks, not the %d its top-level entry says, or another last key: %w",
			p, x.n, want, base.ErrCorruption)
	}
	return x, nil
}

// indexCursor holds one partition of a table's index while a lookup or
// an iterator uses its keys: a block-cache handle on it when the table is
// paged. The zero value holds none.
type indexCursor struct {
	p    int
	x    index
	h    cache.Handle
	held bool
	// found, if foundOK, is the handle of block foundBlock, which the
	// last search of a compact partition met on its way (blockHandle).
	found      handle
	foundBlock int
	foundOK    bool
}

func (c *indexCursor) release() {
	if c.held {
		c.h.Release()
		*c = indexCursor{}
	}
}

// holdPart makes c hold partition p.
func (r *Reader) holdPart(c *indexCursor, p int) error {
	if c.held && c.p == p {
		return nil
	}
	c.release()
	if !r.indexPaged {
		*c = indexCursor{p: p, x: r.ix.parts[p], held: true}
		return nil
	}
	h := r.ix.partHandle(p)
	if b, ok := r.cache.Get(r.fileNum, h.offset); ok {
		r.countMetaHit()
		*c = indexCursor{p: p, x: r.ix.partOver(p, b.Block()), h: b, held: true}
		return nil
	}
	b, err := r.readBlock(h)
	if err == nil {
		var x index
		if x, err = r.checkPartition(p, b.Block()); err == nil {
			r.countMetaRead(h.length + blockTrailerLen)
			r.cache.Set(r.fileNum, h.offset, &b, cache.High)
			*c = indexCursor{p: p, x: x, h: b, held: true}
			return nil
		}
		b.Release()
	}
	return fmt.Errorf("sstable %s: index partition %d at %d: %w", r.name, p, h.offset, err)
}

// seekIndex returns the first block from block from on whose index key
// is >= (ukey, trailer), or the number of blocks; the blocks before from must
// all end below that key. c then holds the block's partition (any, past
// the end).
func (r *Reader) seekIndex(c *indexCursor, from int, ukey []byte, trailer uint64) (int, error) {
	x := &r.ix
	np := x.numParts()
	if np == 0 {
		return 0, nil
	}
	p := 0 // version 1: one partition, whose own search reaches the end
	if x.top.n > 0 {
		if p = x.top.search(x.partOf(from), ukey, trailer); p == np {
			return x.numBlocks(), nil
		}
	}
	if err := r.holdPart(c, p); err != nil {
		return 0, err
	}
	start := x.starts[p]
	if !c.x.compact {
		return start + c.x.search(max(from-start, 0), ukey, trailer), nil
	}
	i, h, ok := c.x.compactSearch(max(from-start, 0), ukey, trailer)
	c.found, c.foundBlock, c.foundOK = h, start+i, ok
	return start + i, nil
}

// blockKey is block b's index key: its last key, or in version 3 a
// separator between it and the next block's first (appendSeparator),
// rebuilt in *buf where it must be. REQUIRES: c holds b's partition, or b
// is the last block of its partition (whose key the top-level block
// holds).
func (r *Reader) blockKey(c *indexCursor, b int, buf *[]byte) indexKey {
	p := r.ix.partOf(b)
	if b == r.ix.starts[p+1]-1 {
		return r.ix.lastKey(p)
	}
	return c.x.key(b-r.ix.starts[c.p], buf)
}

// blockHandle locates block b. REQUIRES: c holds b's partition.
func (r *Reader) blockHandle(c *indexCursor, b int) handle {
	if c.foundOK && c.foundBlock == b {
		return c.found
	}
	return c.x.handle(b - r.ix.starts[c.p])
}
