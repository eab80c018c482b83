package sstable

import (
	"bytes"
	"encoding/binary"

	"github.com/monbandb/monban/internal/base"
)

// indexKey is the key an index entry stands for. In format versions 1 and
// 2 it is always a data block's last internal key (whole). In version 3
// it is a separator (appendSeparator): either a whole internal key, or a
// bare user key that sorts before every internal key with that user key,
// seek keys included, so that no lookup of that user key stops at it.
type indexKey struct {
	ukey    []byte
	trailer uint64 // meaningful when whole
	whole   bool
}

// cmp compares k with the internal key (ukey, trailer).
func (k indexKey) cmp(ukey []byte, trailer uint64) int {
	if c := bytes.Compare(k.ukey, ukey); c != 0 {
		return c
	}
	switch {
	case !k.whole || k.trailer > trailer:
		return -1
	case k.trailer < trailer:
		return 1
	}
	return 0
}

// below reports whether k sorts strictly before o.
func (k indexKey) below(o indexKey) bool {
	if !o.whole {
		c := bytes.Compare(k.ukey, o.ukey)
		return c < 0 // a bare key is the least of its user key: equal is not below
	}
	return k.cmp(o.ukey, o.trailer) < 0
}

func (k indexKey) equal(o indexKey) bool {
	return k.whole == o.whole && bytes.Equal(k.ukey, o.ukey) && (!k.whole || k.trailer == o.trailer)
}

// isVersionOf reports whether k is an internal key of ukey: only a whole
// key is. A bare separator with ukey's bytes lies before ukey's versions,
// and after the block it ends, whose last key has a smaller user key.
func (k indexKey) isVersionOf(ukey []byte) bool { return k.whole && bytes.Equal(k.ukey, ukey) }

// wholeKey is the indexKey of an encoded internal key (len >= TrailerLen).
func wholeKey(enc []byte) indexKey {
	n := len(enc) - base.TrailerLen
	return indexKey{ukey: enc[:n], trailer: binary.LittleEndian.Uint64(enc[n:]), whole: true}
}

// storedKey splits an index key as version 3 stores it: the user key,
// then the trailer when whole (the entry's value says which).
func storedKey(stored []byte, whole bool) (indexKey, bool) {
	if !whole {
		return indexKey{ukey: stored}, true
	}
	if len(stored) < base.TrailerLen {
		return indexKey{}, false
	}
	return wholeKey(stored), true
}

// appendSeparator appends to dst the version 3 index key of a data block
// whose last key is last (encoded), followed by a block starting at next
// (nil: the table's last block), and reports whether it is whole.
//
// The key s must satisfy last <= s < next: a lookup of any key up to s
// then stops at this block or before, and one above it finds nothing here.
// When the user keys differ at byte d, next's user key cut after byte d
// is the shortest bare key that does: it is above last's user key (longer
// where last's is its prefix, else greater at byte d), at most next's, and
// bare, so below every version of it. No shorter key fits: one of d bytes
// or fewer is a prefix of the shared bytes (not above last) or differs
// from both before d (below both or above both). When the user keys are
// equal (a key's versions span the boundary) or there is no next block,
// s is last itself, which also keeps invariant 4 (doc.go) wherever it
// matters: a bare key is never mistaken for a version (isVersionOf).
func appendSeparator(dst, last, next []byte) ([]byte, bool) {
	lu := last[:len(last)-base.TrailerLen]
	if next == nil {
		return append(dst, last...), true
	}
	nu := next[:len(next)-base.TrailerLen]
	if bytes.Equal(lu, nu) {
		return append(dst, last...), true
	}
	d := base.SharedPrefixLen(lu, nu)
	return append(dst, nu[:d+1]...), false
}
