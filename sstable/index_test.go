package sstable

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/monbandb/monban/internal/base"
)

// indexModel is what a version 1 or 2 index block says, as plain arrays:
// the encoded last key of each data block and its handle.
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
		x, err := newIndex(m.block(1), false, dataHandles(1<<40))
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if x.len() != len(m.keys) {
			t.Fatalf("seed %d: len %d, want %d", seed, x.len(), len(m.keys))
		}
		for i := range m.keys {
			if !x.key(i, nil).equal(wholeKey(m.keys[i])) || x.handle(i) != m.handles[i] {
				t.Fatalf("seed %d entry %d: %v %v, want %x %v", seed, i, x.key(i, nil), x.handle(i), m.keys[i], m.handles[i])
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
		if _, err := newIndex(tc.block, false, dataHandles(tc.end)); !errors.Is(err, base.ErrCorruption) {
			t.Errorf("%s: newIndex = %v, want ErrCorruption", tc.name, err)
		}
	}
	if _, err := newIndex(good, false, dataHandles(1<<40)); err != nil {
		t.Fatalf("the good block: %v", err)
	}
}

// compactModel is what a version 3 partition says: each data block's
// separator, whether it is whole, and its handle (contiguous).
type compactModel struct {
	seps    [][]byte
	whole   []bool
	handles []handle
}

// compactIndexModel draws n+1 ascending keys sharing long prefixes, with
// runs of versions of one user key, and indexes n blocks ending at the
// first n of them, each followed by the next.
func compactIndexModel(seed uint64, n int) compactModel {
	rng := newRand(seed)
	keys := ascendingKeys(rng, n+1)
	var m compactModel
	off := uint64(rng.IntN(100))
	for i := range n {
		next := keys[i+1]
		if i == n-1 && rng.IntN(2) == 0 {
			next = nil // the table's last block
		}
		s, whole := appendSeparator(nil, keys[i], next)
		m.seps, m.whole = append(m.seps, s), append(m.whole, whole)
		h := handle{offset: off, length: uint64(rng.IntN(70000))}
		m.handles = append(m.handles, h)
		off = h.end()
	}
	return m
}

// ascendingKeys draws n strictly ascending encoded internal keys: user
// keys with a long shared prefix, some of them prefixes of the next, one
// empty, and versions of one user key now and then.
func ascendingKeys(rng *rand.Rand, n int) [][]byte {
	var keys [][]byte
	ukey := []byte{} // the first key is empty
	seq := base.SeqNum(n + 1)
	for len(keys) < n {
		switch r := rng.IntN(8); {
		case len(keys) == 0, r == 0: // the empty key, or another version of the same user key
		case r == 1: // the next user key extends this one
			ukey = append(bytes.Clone(ukey), byte(rng.IntN(3)))
		default: // a bump at a random depth past a long shared prefix
			d := rng.IntN(len(ukey) + 1)
			next := append(bytes.Clone(ukey[:d]), "prefix-shared-by-many-keys"[:rng.IntN(27)]...)
			if len(next) == d || bytes.Compare(next, ukey) <= 0 {
				next = append(bytes.Clone(ukey), byte(1+rng.IntN(255)))
			}
			ukey = next
		}
		seq--
		keys = append(keys, base.MakeInternalKey(ukey, seq, base.KindSet).Append(nil))
	}
	return keys
}

func (m compactModel) block() []byte {
	b := blockBuilder{restartInterval: indexRestartInterval}
	for i, s := range m.seps {
		b.add(s, appendCompactValue(nil, m.handles[i], m.whole[i], b.restartNext()))
	}
	return b.finish()
}

func (m compactModel) key(i int) indexKey {
	k, _ := storedKey(m.seps[i], m.whole[i])
	return k
}

// TestCompactIndexMatchesModel: a version 3 partition read in place gives
// back every separator and handle it was built from, and compactSearch
// finds what a linear scan of the model finds, from any starting entry
// below the answer, with that entry's handle.
func TestCompactIndexMatchesModel(t *testing.T) {
	for seed := range uint64(100) {
		m := compactIndexModel(seed, 1+int(seed)%40)
		x, err := newCompactIndex(m.block(), 1<<40)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		var buf []byte
		for i := range m.seps {
			if !x.key(i, &buf).equal(m.key(i)) || x.handle(i) != m.handles[i] {
				t.Fatalf("seed %d entry %d: %v %v, want %v %v", seed, i, x.key(i, &buf), x.handle(i), m.key(i), m.handles[i])
			}
		}
		rng := newRand(seed + 1000)
		probes := ascendingKeys(newRand(seed), len(m.seps)+1) // the keys the model was cut from
		for range 200 {
			p, _ := base.DecodeInternalKey(probes[rng.IntN(len(probes))])
			ukey, trailer := p.UserKey, p.Trailer+uint64(rng.IntN(3))-1
			if rng.IntN(3) == 0 {
				ukey = append(bytes.Clone(ukey), byte(rng.IntN(3)))
			}
			want := len(m.seps)
			for i := range m.seps {
				if m.key(i).cmp(ukey, trailer) >= 0 {
					want = i
					break
				}
			}
			from := rng.IntN(want + 1)
			if got, h, ok := x.compactSearch(from, ukey, trailer); got != want || ok && h != m.handles[got] {
				t.Fatalf("seed %d: search(%d, %q, %x) = %d %v, want %d", seed, from, ukey, trailer, got, h, want)
			}
		}
	}
}

// TestSeparatorBounds: every separator lies in [last, next) as internal
// keys compare, a bare one is shorter than next's user key or equal to
// it, and none is longer than it must be (cutting its last byte breaks
// the bound).
func TestSeparatorBounds(t *testing.T) {
	for seed := range uint64(200) {
		keys := ascendingKeys(newRand(seed), 60)
		for i := 0; i+1 < len(keys); i++ {
			last, next := keys[i], keys[i+1]
			s, whole := appendSeparator(nil, last, next)
			k, _ := storedKey(s, whole)
			l, n := wholeKey(last), wholeKey(next)
			if !(l.below(k) || l.equal(k)) || !k.below(n) {
				t.Fatalf("separator %v of %v and %v is not in [last, next)", k, l, n)
			}
			if whole {
				if !bytes.Equal(s, last) {
					t.Fatalf("whole separator %x is not the last key %x", s, last)
				}
				continue
			}
			if short := (indexKey{ukey: s[:len(s)-1]}); l.below(short) && short.below(n) {
				t.Fatalf("separator %q of %v and %v could be %q", s, l, n, short.ukey)
			}
		}
	}
}

// TestCompactIndexRejects: newCompactIndex refuses every partition the
// accessors could misread.
func TestCompactIndexRejects(t *testing.T) {
	m := compactIndexModel(7, 20)
	good := m.block()
	if _, err := newCompactIndex(good, 1<<40); err != nil {
		t.Fatalf("the good block: %v", err)
	}
	gap := m
	gap.handles = append([]handle(nil), m.handles...)
	gap.handles[8].offset++ // a restart point that leaves a byte between blocks
	swapped := m
	swapped.seps = append([][]byte{m.seps[1], m.seps[0]}, m.seps[2:]...)
	swapped.whole = append([]bool{m.whole[1], m.whole[0]}, m.whole[2:]...)
	flat := blockBuilder{restartInterval: 1}
	for i, s := range m.seps {
		flat.add(s, appendCompactValue(nil, m.handles[i], m.whole[i], true))
	}
	noTrailer := compactModel{seps: [][]byte{[]byte("abc")}, whole: []bool{true}, handles: m.handles[:1]}
	extra := append(bytes.Clone(good[:len(good)-4]), good[len(good)-4:]...)
	binary.LittleEndian.PutUint32(extra[len(extra)-4:], binary.LittleEndian.Uint32(extra[len(extra)-4:])+1)
	for _, tc := range []struct {
		name  string
		block []byte
		end   uint64
	}{
		{"restart interval 1", flat.finish(), 1 << 40},
		{"a gap between data blocks", gap.block(), 1 << 40},
		{"keys out of order", swapped.block(), 1 << 40},
		{"a whole key without a trailer", noTrailer.block(), 1 << 40},
		{"a restart count that does not match", extra, 1 << 40},
		{"handle past the data", good, m.handles[len(m.handles)-1].offset},
	} {
		if _, err := newCompactIndex(tc.block, tc.end); !errors.Is(err, base.ErrCorruption) {
			t.Errorf("%s: newCompactIndex = %v, want ErrCorruption", tc.name, err)
		}
	}
}
