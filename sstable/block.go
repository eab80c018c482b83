package sstable

import (
	"encoding/binary"

	"github.com/monbandb/monban/internal/base"
)

// blockBuilder assembles one block (docs/format.md, "SSTable block"):
//
//	entry*  restart offset u32 LE * n  n u32 LE
//	entry = shared uvarint | unshared uvarint | value length uvarint |
//	        key[shared:] | value
//
// Every restartInterval-th entry is a restart point: it stores its whole key
// (shared = 0) and its offset is listed in the restart array, so a reader
// binary-searches restart points and then scans at most restartInterval
// entries, decoding keys in order.
type blockBuilder struct {
	restartInterval int
	buf             []byte
	restarts        []uint32
	counter         int // entries since the last restart point
	lastKey         []byte
	entries         int
}

func (b *blockBuilder) add(key, value []byte) {
	shared := 0
	if !b.restartNext() {
		shared = base.SharedPrefixLen(key, b.lastKey)
	} else {
		b.restarts = append(b.restarts, uint32(len(b.buf)))
		b.counter = 0
	}
	b.buf = binary.AppendUvarint(b.buf, uint64(shared))
	b.buf = binary.AppendUvarint(b.buf, uint64(len(key)-shared))
	b.buf = binary.AppendUvarint(b.buf, uint64(len(value)))
	b.buf = append(b.buf, key[shared:]...)
	b.buf = append(b.buf, value...)
	b.lastKey = append(b.lastKey[:0], key...)
	b.counter++
	b.entries++
}

// restartNext reports whether the next entry added is a restart point.
func (b *blockBuilder) restartNext() bool { return b.entries == 0 || b.counter >= b.restartInterval }

// estimatedSize is the length finish would return now.
func (b *blockBuilder) estimatedSize() int { return len(b.buf) + 4*len(b.restarts) + 4 }

// finish appends the restart array and returns the block; it stays valid
// until reset.
func (b *blockBuilder) finish() []byte {
	for _, r := range b.restarts {
		b.buf = binary.LittleEndian.AppendUint32(b.buf, r)
	}
	return binary.LittleEndian.AppendUint32(b.buf, uint32(len(b.restarts)))
}

func (b *blockBuilder) reset() {
	b.buf, b.restarts, b.lastKey = b.buf[:0], b.restarts[:0], b.lastKey[:0]
	b.counter, b.entries = 0, 0
}
