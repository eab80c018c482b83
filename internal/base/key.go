package base

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
)

// ErrCorruption is wrapped by every error that reports bytes on disk which
// do not decode: bad checksums, impossible lengths, unknown versions.
var ErrCorruption = errors.New("monban: corruption")

// SeqNum orders every write the DB has committed. Only the low 56 bits are
// used; the trailer's low byte holds the Kind.
type SeqNum uint64

// MaxSeqNum is the largest sequence number a write can carry; reads at
// MaxSeqNum see everything.
const MaxSeqNum SeqNum = 1<<56 - 1

// Kind says what an internal entry does to its user key. The values are
// stored on disk (docs/format.md): never renumber them.
type Kind uint8

const (
	// KindDelete is a tombstone: the user key has no value at this sequence.
	KindDelete Kind = 0
	// KindSet carries a value.
	KindSet Kind = 1
	// KindRangeDelete is a range tombstone: it deletes every user key k
	// with key <= k < end, where end is the entry's value. It appears only
	// in batch records (the WAL); memtables and tables keep range
	// tombstones apart from their point entries (internal/keyspan), so no
	// point entry, data block or manifest bound ever carries it.
	KindRangeDelete Kind = 2

	// kindSeek is above every real kind, so that within one sequence number
	// a seek key sorts before (trailer descending) every real entry.
	kindSeek Kind = 0xff
)

func (k Kind) String() string {
	switch k {
	case KindDelete:
		return "DEL"
	case KindSet:
		return "SET"
	case KindRangeDelete:
		return "RANGEDEL"
	}
	return fmt.Sprintf("KIND(%d)", uint8(k))
}

// Valid reports whether k is a kind of point entry this version of monban
// writes: KindRangeDelete is not one (it is never a point entry).
func (k Kind) Valid() bool { return k == KindDelete || k == KindSet }

// TrailerLen is the size of the encoded trailer that follows the user key.
const TrailerLen = 8

// MakeTrailer packs a sequence number and a kind into a trailer.
func MakeTrailer(seq SeqNum, kind Kind) uint64 { return uint64(seq)<<8 | uint64(kind) }

// InternalKey is a user key tagged with the write that produced it.
type InternalKey struct {
	UserKey []byte
	Trailer uint64
}

// MakeInternalKey returns the internal key for a write of kind at seq.
func MakeInternalKey(userKey []byte, seq SeqNum, kind Kind) InternalKey {
	return InternalKey{UserKey: userKey, Trailer: MakeTrailer(seq, kind)}
}

// SeekKey returns the smallest internal key that a reader at snapshot seq
// may see for userKey (invariant 3).
func SeekKey(userKey []byte, seq SeqNum) InternalKey {
	return InternalKey{UserKey: userKey, Trailer: MakeTrailer(seq, kindSeek)}
}

// Seq returns the key's sequence number.
func (k InternalKey) Seq() SeqNum { return SeqNum(k.Trailer >> 8) }

// Kind returns the key's kind.
func (k InternalKey) Kind() Kind { return Kind(k.Trailer) }

// Size returns the length of the key's encoding.
func (k InternalKey) Size() int { return len(k.UserKey) + TrailerLen }

// Append appends the encoding of k to dst.
func (k InternalKey) Append(dst []byte) []byte {
	dst = append(dst, k.UserKey...)
	return binary.LittleEndian.AppendUint64(dst, k.Trailer)
}

func (k InternalKey) String() string {
	return fmt.Sprintf("%q#%d,%s", k.UserKey, k.Seq(), k.Kind())
}

// DecodeInternalKey splits an encoded internal key. The user key aliases b.
// It fails only when b is shorter than a trailer; callers that read b from
// disk wrap the error with the file and offset.
func DecodeInternalKey(b []byte) (InternalKey, error) {
	n := len(b) - TrailerLen
	if n < 0 {
		return InternalKey{}, fmt.Errorf("internal key of %d bytes is shorter than its trailer: %w", len(b), ErrCorruption)
	}
	return InternalKey{UserKey: b[:n:n], Trailer: binary.LittleEndian.Uint64(b[n:])}, nil
}

// Compare orders internal keys by invariant 2.
func Compare(a, b InternalKey) int {
	if c := bytes.Compare(a.UserKey, b.UserKey); c != 0 {
		return c
	}
	switch {
	case a.Trailer > b.Trailer:
		return -1
	case a.Trailer < b.Trailer:
		return 1
	}
	return 0
}

// CompareEncoded orders two encoded internal keys by invariant 2 without
// decoding them into structs. Both must be at least TrailerLen long.
func CompareEncoded(a, b []byte) int {
	na, nb := len(a)-TrailerLen, len(b)-TrailerLen
	if c := bytes.Compare(a[:na], b[:nb]); c != 0 {
		return c
	}
	ta, tb := binary.LittleEndian.Uint64(a[na:]), binary.LittleEndian.Uint64(b[nb:])
	switch {
	case ta > tb:
		return -1
	case ta < tb:
		return 1
	}
	return 0
}

// SharedPrefixLen returns the length of the longest prefix a and b share,
// comparing 8 bytes at a time.
func SharedPrefixLen(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}
