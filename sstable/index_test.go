package sstable

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/monbandb/monban/internal/base"
)

// indexModel is what an index block says, as plain arrays: the encoded
// last key of each data block and its handle.
type indexModel struct {
	keys    [][]byte
	handles []handle
}

func randIndexModel(seed uint64) indexModel {
	rng := newRand(seed)
	var m indexModel
	off := uint64(0)
	var ukey []byte
	for i := range rng.IntN(200) {
		// Keys ascend: a growing number in user keys of varying length,
		// and now and then an older version of the same user key.
		if ukey == nil || rng.IntN(4) > 0 {
			ukey = fmt.Appendf(nil, "k%06d%s", 2*i, strings.Repeat("x", suffixLen(rng.IntN(10))))
		}
		ik := base.MakeInternalKey(ukey, base.SeqNum(1000-i), base.KindSet)
		m.keys = append(m.keys, ik.Append(nil))
		h := handle{offset: off, length: uint64(rng.IntN(5000))}
		m.handles = append(m.handles, h)
		off = h.end()
	}
	return m
}

// suffixLen makes one user key in ten longer than 127 bytes, whose length
// no longer fits in one varint byte (index.entry's slow path).
func suffixLen(r int) int {
	if r == 0 {
		return 150
	}
	return r
}

func (m indexModel) block(restartInterval int) []byte {
	b := blockBuilder{restartInterval: restartInterval}
	for i, k := range m.keys {
		b.add(k, appendHandle(nil, m.handles[i]))
	}
	return b.finish()
}

// TestIndexMatchesModel: an index read in place gives back every key and
// handle it was built from, and seekIndex finds what a linear scan of
// the model finds.
func TestIndexMatchesModel(t *testing.T) {
	for seed := range uint64(50) {
		m := randIndexModel(seed)
		x, err := newIndex(m.block(1), dataHandles(1<<40))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if x.len() != len(m.keys) {
			t.Fatalf("seed %d: len %d, want %d", seed, x.len(), len(m.keys))
		}
		for i := range m.keys {
			if string(x.key(i)) != string(m.keys[i]) || x.handle(i) != m.handles[i] {
				t.Fatalf("seed %d entry %d: %x %v, want %x %v", seed, i, x.key(i), x.handle(i), m.keys[i], m.handles[i])
			}
		}
		r := &Reader{ix: oneIndex(x, nil)}
		rng := newRand(seed + 1000)
		for range 100 {
			ukey := fmt.Appendf(nil, "k%06d%s", rng.IntN(420), strings.Repeat("x", suffixLen(rng.IntN(10))))
			trailer := uint64(rng.IntN(2000))<<8 | uint64(base.KindSet)
			want := len(m.keys)
			for i, k := range m.keys {
				if c, _ := cmpKey(k, ukey, trailer); c >= 0 {
					want = i
					break
				}
			}
			var c indexCursor
			if got, _ := r.seekIndex(&c, 0, ukey, trailer); got != want {
				t.Fatalf("seed %d: searchIndex(%q, %x) = %d, want %d", seed, ukey, trailer, got, want)
			}
		}
	}
}

// TestIndexRejectsOtherLayouts: the accessors trust what newIndex
// accepted, so it must reject every index it could not read in place.
func TestIndexRejectsOtherLayouts(t *testing.T) {
	m := randIndexModel(3)
	if len(m.keys) < 3 {
		t.Fatal("model too small")
	}
	good := m.block(1)
	restarts := 4 * (len(m.keys) + 1)
	entries := good[:len(good)-restarts]

	// A varint 0 spelled in two bytes: the same entry, not where key()
	// expects its length.
	longZero := append(append(append([]byte{}, 0x80, 0x00), entries[1:]...), good[len(good)-restarts:]...)
	for i := 1; i < len(m.keys); i++ {
		at := len(entries) + 1 + 4*i
		binary.LittleEndian.PutUint32(longZero[at:], binary.LittleEndian.Uint32(longZero[at:])+1)
	}
	gap := append(append(append([]byte{}, entries...), 0xff), good[len(good)-restarts:]...)
	swapped := indexModel{keys: append([][]byte{m.keys[1], m.keys[0]}, m.keys[2:]...), handles: m.handles}

	for _, tc := range []struct {
		name  string
		block []byte
		end   uint64
	}{
		{"restart interval 2", m.block(2), 1 << 40},
		{"two-byte shared length", longZero, 1 << 40},
		{"a byte between the entries and the restarts", gap, 1 << 40},
		{"keys out of order", swapped.block(1), 1 << 40},
		{"handle past the data", good, m.handles[len(m.handles)-1].offset},
	} {
		if _, err := newIndex(tc.block, dataHandles(tc.end)); !errors.Is(err, base.ErrCorruption) {
			t.Errorf("%s: newIndex = %v, want ErrCorruption", tc.name, err)
		}
	}
	if _, err := newIndex(good, dataHandles(1<<40)); err != nil {
		t.Fatalf("the good block: %v", err)
	}
}
