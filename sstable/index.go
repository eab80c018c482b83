package sstable

import (
	"encoding/binary"
	"fmt"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/offheap"
)

// index is a table's index block, searched where it lies rather than
// decoded into an array. An array of (key slice, handle) pairs cost 40
// bytes per data block on top of the block itself: 4.5 MB of a 4M-key
// DB's live heap, which Go's collector lets grow to twice that in RSS.
//
// The writer makes every index entry a restart point, so entry i starts
// at restart i and decodes without its neighbours. Open checks every
// entry once (newIndex); key and handle then trust the block, which the
// Reader pins for its life and nothing writes to.
//
// The block's memory is owned by keep (internal/offheap), on which the
// index's Reader holds a reference until Close: the keys entry and key
// return alias it, so they are valid while the Reader is open, which every
// caller ensures by holding the Reader (a table-cache reference) while it
// compares them.
type index struct {
	data        []byte // the block: entries, then the restart array
	restartsOff int
	n           int
	keep        *offheap.Buffer
}

// newIndex checks block as an index (docs/format.md, "Index block"): its
// entries tile the block up to the restart array, entry i at restart i
// with its shared length a single zero byte; every key holds a trailer
// and is above the one before; every handle lies in [0, dataEnd). Those
// checks are what index's accessors rely on. The block lies in keep's
// memory, and on success the index takes over the caller's reference.
func newIndex(block []byte, keep *offheap.Buffer, dataEnd uint64) (index, error) {
	var it blockIter
	if err := it.init(block); err != nil {
		return index{}, err
	}
	x := index{data: block, restartsOff: it.restartsOff, n: it.numRestarts, keep: keep}
	end := 0 // where the previous entry ended: the next must start there
	for i := range x.n {
		off := it.restart(i)
		if off != end || off >= x.restartsOff || block[off] != 0 || !it.decodeRestart(i) {
			return index{}, fmt.Errorf("index entry %d is not whole at its restart point: %w", i, base.ErrCorruption)
		}
		if len(it.key) < base.TrailerLen {
			return index{}, errBlock
		}
		h, ok := decodeHandle(it.val)
		if !ok {
			return index{}, fmt.Errorf("bad block handle: %w", base.ErrCorruption)
		}
		if err := checkHandle(h, dataEnd); err != nil {
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

// len is the number of data blocks.
func (x *index) len() int { return x.n }

// entry returns entry i's encoded key (the last internal key of data
// block i) and its value (the block's handle), aliasing the block.
func (x *index) entry(i int) (key, val []byte) {
	off := int(binary.LittleEndian.Uint32(x.data[x.restartsOff+4*i:]))
	p := x.data[off+1:] // past the shared length: one zero byte (newIndex)
	if p[0] < 0x80 && p[1] < 0x80 {
		// Both lengths fit in one byte, as they do for keys under 128
		// bytes: searchIndex decodes a dozen keys per Get, and this path
		// is what keeps that as fast as reading a decoded array.
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
