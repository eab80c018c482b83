package sstable

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/monbandb/monban/internal/base"
)

// indexRestartInterval is the number of entries per restart point in a
// version 3 index partition (docs/format.md, "Index partition"). A lookup
// compares restart keys by binary search, then decodes at most this many
// entries of one run: a longer interval shares more of each key and
// stores fewer offsets, a shorter one decodes less per lookup. 4 is the
// balance docs/format.md measures against 8 and 16, with the commands
// that measure it (BenchmarkIndexBytes, BenchmarkSeekIndex).
const indexRestartInterval = 4

// A compact entry is a block entry (block.go) whose stored key is a
// separator (appendSeparator: the user key, then the trailer when whole)
// and whose value is length<<1 | whole, uvarint, followed at a restart
// point by the block's offset, uvarint. Data blocks are contiguous, so an
// entry that is not a restart point starts where the one before ends.

// appendCompactValue appends the value of a compact entry for block h
// whose key is whole or not, at a restart point or not.
func appendCompactValue(dst []byte, h handle, whole, restart bool) []byte {
	dst = binary.AppendUvarint(dst, h.length<<1|b2u(whole))
	if restart {
		dst = binary.AppendUvarint(dst, h.offset)
	}
	return dst
}

// newCompactIndex checks block as a version 3 partition of data blocks in
// [0, dataEnd): entries tile the block from offset 0 to the restart array,
// which lists exactly every indexRestartInterval-th entry, each sharing
// nothing (a single zero byte); every value decodes whole; the blocks
// follow one another without gaps and end by dataEnd; keys ascend. Those
// checks are what the compact accessors rely on.
func newCompactIndex(block []byte, dataEnd uint64) (index, error) {
	var it blockIter
	if err := it.init(block); err != nil {
		return index{}, err
	}
	x := index{data: block, restartsOff: it.restartsOff, sep: true, compact: true}
	bad := func(what string) (index, error) {
		return index{}, fmt.Errorf("index entry %d: %s: %w", x.n, what, base.ErrCorruption)
	}
	var prev indexKey
	var prevBuf []byte
	next := uint64(0) // where the next block starts, past the first
	for ok := it.first(); ok; ok = it.next() {
		g, atRestart := x.n/indexRestartInterval, x.n%indexRestartInterval == 0
		switch {
		case x.n == 0 && it.offset != 0:
			return bad("not at the start of the block")
		case atRestart && (g >= it.numRestarts || it.restart(g) != it.offset || block[it.offset] != 0):
			return bad("not whole at its restart point")
		}
		lenFlag, n := binary.Uvarint(it.val)
		if n <= 0 {
			return bad("bad length")
		}
		h, rest := handle{offset: next, length: lenFlag >> 1}, it.val[n:]
		if atRestart {
			off, m := binary.Uvarint(rest)
			if m <= 0 || x.n > 0 && off != next {
				return bad("bad offset, or a gap between data blocks")
			}
			h.offset, rest = off, rest[m:]
		}
		if len(rest) != 0 {
			return bad("bytes after the handle")
		}
		if err := checkHandle(h, dataEnd); err != nil {
			return index{}, err
		}
		k, ok := storedKey(it.key, lenFlag&1 == 1)
		if !ok {
			return bad("whole key without a trailer")
		}
		if x.n > 0 && !prev.below(k) {
			return bad("keys out of order")
		}
		// it.key may lie in the iterator's buffer, which the next entry
		// overwrites.
		prevBuf = append(prevBuf[:0], it.key...)
		prev, _ = storedKey(prevBuf, k.whole)
		next = h.end()
		x.n++
	}
	if it.err != nil {
		return index{}, it.err
	}
	if (x.n+indexRestartInterval-1)/indexRestartInterval != it.numRestarts {
		return index{}, fmt.Errorf("index block of %d entries has %d restart points: %w", x.n, it.numRestarts, base.ErrCorruption)
	}
	return x, nil
}

// compactAt decodes the entry at off of a block newCompactIndex accepted:
// its shared length, its stored key's other bytes, its value, and where
// the next entry starts.
func (x *index) compactAt(off int) (shared int, suffix, val []byte, next int) {
	p := x.data[off:]
	if p[0] < 0x80 && p[1] < 0x80 && p[2] < 0x80 {
		// One byte each, as for keys and values under 128 bytes: nearly
		// every entry.
		k := 3 + int(p[1])
		v := k + int(p[2])
		return int(p[0]), p[3:k], p[k:v], off + v
	}
	s, n1 := binary.Uvarint(p)
	u, n2 := binary.Uvarint(p[n1:])
	v, n3 := binary.Uvarint(p[n1+n2:])
	h := n1 + n2 + n3
	return int(s), p[h : h+int(u)], p[h+int(u) : h+int(u)+int(v)], off + h + int(u) + int(v)
}

func (x *index) restartOff(g int) int {
	return int(binary.LittleEndian.Uint32(x.data[x.restartsOff+4*g:]))
}

// compactKey is entry i's key, rebuilt in *buf unless at a restart point.
func (x *index) compactKey(i int, buf *[]byte) indexKey {
	g := i / indexRestartInterval
	_, suffix, val, next := x.compactAt(x.restartOff(g))
	if i == g*indexRestartInterval {
		k, _ := x.keyOf(suffix, val)
		return k
	}
	b := append((*buf)[:0], suffix...)
	for range i - g*indexRestartInterval {
		var shared int
		shared, suffix, val, next = x.compactAt(next)
		b = append(b[:shared], suffix...)
	}
	*buf = b
	k, _ := x.keyOf(b, val)
	return k
}

// compactHandle is entry i's block: the offset stored at its restart
// point, moved past each block between.
func (x *index) compactHandle(i int) handle {
	g := i / indexRestartInterval
	_, _, val, next := x.compactAt(x.restartOff(g))
	lenFlag, n := binary.Uvarint(val)
	off, _ := binary.Uvarint(val[n:])
	h := handle{offset: off, length: lenFlag >> 1}
	for range i - g*indexRestartInterval {
		_, _, val, next = x.compactAt(next)
		lenFlag, _ = binary.Uvarint(val)
		h = handle{offset: h.end(), length: lenFlag >> 1}
	}
	return h
}

// compactSearch is search for a compact index: a binary search over the
// restart keys for the last run that starts below the target, then a scan
// of that run. It also returns the handle of the entry found, which the
// scan passes over anyway, unless that entry starts the next run (ok
// false).
func (x *index) compactSearch(from int, ukey []byte, trailer uint64) (i int, h handle, ok bool) {
	if from >= x.n {
		return x.n, handle{}, false
	}
	lo, hi := from/indexRestartInterval+1, (x.n+indexRestartInterval-1)/indexRestartInterval
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		_, suffix, val, _ := x.compactAt(x.restartOff(m))
		if cmpStored(suffix, val[0]&1 == 1, ukey, trailer) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	g := lo - 1
	var room [64]byte // keys that share bytes are rebuilt here: no allocation for short keys
	buf := room[:0]
	var key []byte // the entry's key: in the block when it shares nothing, else in buf
	off, end := x.restartOff(g), min(lo*indexRestartInterval, x.n)
	for i = g * indexRestartInterval; i < end; i++ {
		shared, suffix, val, next := x.compactAt(off)
		lenFlag, n := binary.Uvarint(val)
		if i == g*indexRestartInterval {
			h.offset, _ = binary.Uvarint(val[n:])
		} else {
			h.offset = h.end()
		}
		h.length = lenFlag >> 1
		if shared == 0 {
			key = suffix
		} else {
			buf = append(append(buf[:0], key[:shared]...), suffix...)
			key = buf
		}
		// A run's restart key is below the target when the binary search
		// compared it; the entries before from are below it too.
		if i >= from && (i > g*indexRestartInterval || g == from/indexRestartInterval) && cmpStored(key, lenFlag&1 == 1, ukey, trailer) >= 0 {
			return i, h, true
		}
		off = next
	}
	return end, handle{}, false
}

// cmpStored compares a version 3 stored key, whole or bare, with (ukey,
// trailer): a bare key sorts before every internal key of its user key.
func cmpStored(stored []byte, whole bool, ukey []byte, trailer uint64) int {
	if whole {
		c, _ := cmpKey(stored, ukey, trailer)
		return c
	}
	if c := bytes.Compare(stored, ukey); c != 0 {
		return c
	}
	return -1
}
