package sstable

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/monbandb/monban/internal/base"
)

var errBlock = fmt.Errorf("malformed block: %w", base.ErrCorruption)

// blockIter decodes a block in place (see blockBuilder for the layout).
// Keys at restart points alias the block; others are rebuilt in keyBuf.
// Every offset and length is checked against the block before use, so a
// malformed block yields errBlock, never a panic; every step moves the
// offset strictly forward, so no scan can loop.
//
// Keys are compared as encoded internal keys; the properties block, whose
// keys are names, is only scanned with first/next.
type blockIter struct {
	data        []byte
	restartsOff int // start of the restart array = end of the entries
	numRestarts int

	offset     int // of the current entry; == restartsOff when exhausted
	nextOffset int
	key        []byte
	keyBuf     []byte
	keyInBuf   bool
	val        []byte
	err        error

	// Set by seekGE: whether it stepped over an entry below the target
	// (prevSeen), and whether the last such entry had the target's user key.
	prevSeen, prevSameUser bool
}

// reset drops the iterator's view of its block, keeping only the key
// buffer for reuse.
func (it *blockIter) reset() { *it = blockIter{keyBuf: it.keyBuf[:0]} }

// init points the iterator at a block; it fails if the restart array does
// not fit.
func (it *blockIter) init(data []byte) error {
	it.reset()
	if len(data) < 4 {
		return errBlock
	}
	n := binary.LittleEndian.Uint32(data[len(data)-4:])
	if uint64(n) > uint64(len(data)-4)/4 {
		return errBlock
	}
	it.data = data
	it.numRestarts = int(n)
	it.restartsOff = len(data) - 4 - 4*int(n)
	it.offset, it.nextOffset = it.restartsOff, it.restartsOff
	return nil
}

func (it *blockIter) valid() bool { return it.offset < it.restartsOff && it.err == nil }

func (it *blockIter) fail() bool {
	it.err = errBlock
	it.offset = it.restartsOff
	return false
}

func (it *blockIter) restart(i int) int {
	return int(binary.LittleEndian.Uint32(it.data[it.restartsOff+4*i:]))
}

// decodeAt decodes the entry at off, whose predecessor's key is in it.key
// (ignored when the entry shares nothing).
func (it *blockIter) decodeAt(off int) bool {
	if off < 0 || off >= it.restartsOff {
		return it.fail()
	}
	p := it.data[off:it.restartsOff]
	shared, n1 := binary.Uvarint(p)
	if n1 <= 0 {
		return it.fail()
	}
	unshared, n2 := binary.Uvarint(p[n1:])
	if n2 <= 0 {
		return it.fail()
	}
	vlen, n3 := binary.Uvarint(p[n1+n2:])
	if n3 <= 0 {
		return it.fail()
	}
	h := n1 + n2 + n3
	rest := uint64(len(p) - h)
	if unshared > rest || vlen > rest-unshared || shared > uint64(len(it.key)) {
		return it.fail()
	}
	k := p[h : h+int(unshared)]
	if shared == 0 {
		it.key, it.keyInBuf = k, false
	} else {
		if !it.keyInBuf {
			it.keyBuf = append(it.keyBuf[:0], it.key[:shared]...)
		} else {
			it.keyBuf = it.keyBuf[:shared]
		}
		it.keyBuf = append(it.keyBuf, k...)
		it.key, it.keyInBuf = it.keyBuf, true
	}
	it.val = p[h+int(unshared) : h+int(unshared)+int(vlen)]
	it.offset = off
	it.nextOffset = off + h + int(unshared) + int(vlen)
	return true
}

// decodeRestart decodes the entry at restart point i, which must share
// nothing with its predecessor.
func (it *blockIter) decodeRestart(i int) bool {
	it.key = it.key[:0:0]
	return it.decodeAt(it.restart(i))
}

func (it *blockIter) first() bool {
	if it.numRestarts == 0 || it.restartsOff == 0 {
		it.offset = it.restartsOff
		return false
	}
	return it.decodeRestart(0)
}

func (it *blockIter) next() bool {
	if !it.valid() {
		return false
	}
	if it.nextOffset >= it.restartsOff {
		it.offset = it.restartsOff
		return false
	}
	return it.decodeAt(it.nextOffset)
}

func (it *blockIter) last() bool {
	if it.numRestarts == 0 || it.restartsOff == 0 {
		it.offset = it.restartsOff
		return false
	}
	return it.scanToBefore(it.numRestarts-1, it.restartsOff)
}

// prev moves to the entry before the current one: back to the restart point
// preceding it, then forward (the cost of prefix compression).
func (it *blockIter) prev() bool {
	if !it.valid() {
		return false
	}
	cur := it.offset
	// Last restart point strictly before cur.
	lo, hi := 0, it.numRestarts
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if it.restart(m) < cur {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo == 0 {
		it.offset = it.restartsOff // before the first entry
		return false
	}
	return it.scanToBefore(lo-1, cur)
}

// scanToBefore decodes from restart point r up to the last entry that starts
// before limit.
func (it *blockIter) scanToBefore(r, limit int) bool {
	if !it.decodeRestart(r) {
		return false
	}
	if it.offset >= limit {
		return it.fail()
	}
	for it.nextOffset < limit {
		if !it.decodeAt(it.nextOffset) {
			return false
		}
	}
	return true
}

// seekGE moves to the first entry whose internal key is >= (ukey, trailer).
func (it *blockIter) seekGE(ukey []byte, trailer uint64) bool {
	if it.numRestarts == 0 || it.restartsOff == 0 {
		it.offset = it.restartsOff
		return false
	}
	// Find the last restart point whose key is < target; scanning starts
	// there (or at 0).
	lo, hi := 0, it.numRestarts
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if !it.decodeRestart(m) {
			return false
		}
		c, ok := cmpKey(it.key, ukey, trailer)
		if !ok {
			return it.fail()
		}
		if c < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	it.prevSeen, it.prevSameUser = false, false
	start := max(lo-1, 0)
	if !it.decodeRestart(start) {
		return false
	}
	for {
		c, ok := cmpKey(it.key, ukey, trailer)
		if !ok {
			return it.fail()
		}
		if c >= 0 {
			return true
		}
		it.prevSeen = true
		it.prevSameUser = bytes.Equal(it.key[:len(it.key)-base.TrailerLen], ukey)
		if !it.next() {
			return false
		}
	}
}

// seekLT moves to the last entry whose internal key is < (ukey, trailer).
func (it *blockIter) seekLT(ukey []byte, trailer uint64) bool {
	if !it.seekGE(ukey, trailer) {
		if it.err != nil {
			return false
		}
		return it.last()
	}
	return it.prev()
}

// cmpKey compares an encoded internal key against (ukey, trailer) in the
// order of base.Compare, without encoding the target. ok is false when enc
// is too short to be an internal key.
func cmpKey(enc, ukey []byte, trailer uint64) (c int, ok bool) {
	n := len(enc) - base.TrailerLen
	if n < 0 {
		return 0, false
	}
	if c := bytes.Compare(enc[:n], ukey); c != 0 {
		return c, true
	}
	t := binary.LittleEndian.Uint64(enc[n:])
	switch {
	case t > trailer:
		return -1, true
	case t < trailer:
		return 1, true
	}
	return 0, true
}
