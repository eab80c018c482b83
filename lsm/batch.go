package lsm

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/monbandb/monban/internal/base"
)

// batchHeaderLen is the size of a batch's header: the sequence number of its
// first entry (uint64) and its entry count (uint32). docs/format.md, "Batch".
const batchHeaderLen = 12

// Batch collects writes that Write applies atomically: all of them or, also
// across a crash, none. The zero value is an empty batch ready to use. A
// Batch copies the keys and values given to it. It is not safe for
// concurrent use, and must not be modified while Write is using it.
//
// The encoding is the WAL record payload (docs/format.md, "Batch"), so a
// committed batch is written to the log without re-encoding.
type Batch struct {
	data  []byte // header followed by the entries; nil until the first write
	count uint32
	err   error // the first write that broke a size limit; Write returns it
}

// Put adds a write of value under key. A key longer than MaxKeySize, a
// value longer than MaxValueSize, or a write that would take the batch
// past MaxBatchSize makes the whole batch fail in Write.
func (b *Batch) Put(key, value []byte) {
	if b.checkSizes(key, value, pairLen(key, value)) {
		return
	}
	b.addPair(base.KindSet, key, value)
}

// addPair appends an entry of two byte strings: a put's key and value, a
// range deletion's start and end.
func (b *Batch) addPair(kind base.Kind, first, second []byte) {
	b.grow(1 + 2*binary.MaxVarintLen32 + len(first) + len(second))
	b.data = append(b.data, byte(kind))
	b.data = appendBytes(b.data, first)
	b.data = appendBytes(b.data, second)
	b.count++
}

// Delete adds a deletion of key.
func (b *Batch) Delete(key []byte) {
	if b.checkSizes(key, nil, deleteLen(key)) {
		return
	}
	b.grow(1 + binary.MaxVarintLen32 + len(key))
	b.data = append(b.data, byte(base.KindDelete))
	b.data = appendBytes(b.data, key)
	b.count++
}

// DeleteRange adds a deletion of every key k with start <= k < end, at
// one sequence number: the batch's writes before it are deleted by it,
// those after it are newer and survive it. start >= end makes the whole
// batch fail in Write with ErrInvalidRange (an empty range names no key,
// which is a mistake more often than an intent), a start or end longer
// than MaxKeySize with ErrInvalidKey, one that would take the batch past
// MaxBatchSize with ErrBatchTooLarge.
//
// The record holds start as its key and end as its value (docs/format.md,
// "Batch").
func (b *Batch) DeleteRange(start, end []byte) {
	if b.checkRange(start, end) {
		return
	}
	b.addPair(base.KindRangeDelete, start, end)
}

// checkRange is checkSizes for a range deletion.
func (b *Batch) checkRange(start, end []byte) bool {
	switch {
	case b.err != nil:
	case len(start) > MaxKeySize || len(end) > MaxKeySize:
		b.err = fmt.Errorf("%w: range bound of %d bytes exceeds MaxKeySize", ErrInvalidKey, max(len(start), len(end)))
	case bytes.Compare(start, end) >= 0:
		b.err = fmt.Errorf("%w: DeleteRange from %q to %q deletes no key", ErrInvalidRange, start, end)
	default:
		b.checkRoom(pairLen(start, end))
	}
	return b.err != nil
}

// pairLen is the encoded size of an entry of two byte strings: its kind,
// then each with its length.
func pairLen(first, second []byte) int {
	return 1 + uvarintLen(uint64(len(first))) + len(first) + uvarintLen(uint64(len(second))) + len(second)
}

// deleteLen is the encoded size of a delete of key in a batch: its kind,
// then key with its length.
func deleteLen(key []byte) int { return 1 + uvarintLen(uint64(len(key))) + len(key) }

// deleteRecordLen is the size of the WAL record a Batch of one Delete of key
// encodes to: what an elided delete does not write.
func deleteRecordLen(key []byte) int { return batchHeaderLen + deleteLen(key) }

// uvarintLen is the number of bytes binary.AppendUvarint writes for x.
func uvarintLen(x uint64) int {
	n := 1
	for ; x >= 0x80; x >>= 7 {
		n++
	}
	return n
}

// Len returns the number of writes in the batch.
func (b *Batch) Len() int { return int(b.count) }

// Reset empties the batch, keeping its memory for reuse.
func (b *Batch) Reset() {
	b.data = b.data[:0]
	b.count = 0
	b.err = nil
}

// checkSizes records the first oversized key or value, or the first write
// of n encoded bytes the batch has no room for, and reports whether the
// write must be dropped.
func (b *Batch) checkSizes(key, value []byte, n int) bool {
	switch {
	case b.err != nil:
	case len(key) > MaxKeySize:
		b.err = fmt.Errorf("%w: key of %d bytes exceeds MaxKeySize", ErrInvalidKey, len(key))
	case len(value) > MaxValueSize:
		b.err = fmt.Errorf("%w: value of %d bytes exceeds MaxValueSize", ErrInvalidValue, len(value))
	default:
		b.checkRoom(n)
	}
	return b.err != nil
}

// checkRoom records ErrBatchTooLarge if an entry of n encoded bytes would
// take the batch past maxBatchSize.
func (b *Batch) checkRoom(n int) {
	if b.Size() > maxBatchSize-n {
		b.err = fmt.Errorf("%w: a write of %d bytes would take a batch of %d past MaxBatchSize", ErrBatchTooLarge, n, b.Size())
	}
}

// maxBatchSize is MaxBatchSize, which tests lower to reach it.
var maxBatchSize = MaxBatchSize

// Size returns the batch's encoded size in bytes.
func (b *Batch) Size() int { return max(len(b.data), batchHeaderLen) }

func (b *Batch) grow(n int) {
	if len(b.data) == 0 {
		b.data = append(b.data[:0], make([]byte, batchHeaderLen)...)
	}
	b.data = growSlice(b.data, n)
}

// growSlice makes room for n more bytes, doubling, but reserving no more
// than a batch may hold.
func growSlice(s []byte, n int) []byte {
	if cap(s)-len(s) >= n {
		return s
	}
	ns := make([]byte, len(s), max(min(2*cap(s)+n, maxBatchSize), len(s)+n))
	copy(ns, s)
	return ns
}

func appendBytes(dst, p []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(p)))
	return append(dst, p...)
}

// encode stamps the batch with the sequence number of its first entry and
// returns the encoded record.
func (b *Batch) encode(seq base.SeqNum) []byte {
	b.grow(0)
	binary.LittleEndian.PutUint64(b.data[0:8], uint64(seq))
	binary.LittleEndian.PutUint32(b.data[8:12], b.count)
	return b.data
}

// batchEntry is one decoded write of a batch record. Key and Value alias the
// record.
type batchEntry struct {
	Seq   base.SeqNum
	Kind  base.Kind
	Key   []byte
	Value []byte
}

// batchHeader returns an encoded batch record's first sequence number
// and count of entries; ok is false if the record is shorter than that.
func batchHeader(rec []byte) (seq base.SeqNum, count uint32, ok bool) {
	if len(rec) < batchHeaderLen {
		return 0, 0, false
	}
	return base.SeqNum(binary.LittleEndian.Uint64(rec[0:8])), binary.LittleEndian.Uint32(rec[8:12]), true
}

// decodeBatch calls fn for every entry of an encoded batch record, in order,
// each with its own sequence number. Record bytes come from the WAL, so every
// length is checked against what is present before it is used.
func decodeBatch(rec []byte, fn func(batchEntry) error) (n int, err error) {
	seq, count, ok := batchHeader(rec)
	if !ok {
		return 0, fmt.Errorf("batch of %d bytes is shorter than its header: %w", len(rec), base.ErrCorruption)
	}
	p := rec[batchHeaderLen:]
	for i := uint32(0); i < count; i++ {
		if len(p) == 0 {
			return int(i), fmt.Errorf("batch says %d entries, holds %d: %w", count, i, base.ErrCorruption)
		}
		e := batchEntry{Seq: seq + base.SeqNum(i), Kind: base.Kind(p[0])}
		p = p[1:]
		if !e.Kind.Valid() && e.Kind != base.KindRangeDelete {
			return int(i), fmt.Errorf("batch entry %d has unknown kind %d: %w", i, e.Kind, base.ErrCorruption)
		}
		if e.Key, p, err = takeBytes(p); err != nil {
			return int(i), fmt.Errorf("batch entry %d key: %w", i, err)
		}
		if e.Kind != base.KindDelete { // a set's value, a range deletion's end
			if e.Value, p, err = takeBytes(p); err != nil {
				return int(i), fmt.Errorf("batch entry %d value: %w", i, err)
			}
		}
		if e.Kind == base.KindRangeDelete && bytes.Compare(e.Key, e.Value) >= 0 {
			return int(i), fmt.Errorf("batch entry %d deletes the empty range [%q, %q): %w", i, e.Key, e.Value, base.ErrCorruption)
		}
		if err := fn(e); err != nil {
			return int(i), err
		}
	}
	if len(p) != 0 {
		return int(count), fmt.Errorf("batch has %d bytes after its %d entries: %w", len(p), count, base.ErrCorruption)
	}
	return int(count), nil
}

func takeBytes(p []byte) (field, rest []byte, err error) {
	n, w := binary.Uvarint(p)
	if w <= 0 || n > uint64(len(p)-w) {
		return nil, nil, fmt.Errorf("length does not fit the %d bytes left: %w", len(p), base.ErrCorruption)
	}
	end := w + int(n)
	return p[w:end:end], p[end:], nil
}
