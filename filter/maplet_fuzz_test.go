package filter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// mapletSeedEncodings returns valid encodings: empty, sparse, wrapped,
// duplicate-heavy and nearly full tables under several codes.
func mapletSeedEncodings() [][]byte {
	var out [][]byte
	for i, lens := range [][]uint8{{1}, {1, 2, 2}, {2, 2, 2}, RunCodeLengths(treeShares(7), MaxRunCodeLen), {3, 3, 3, 3, 3, 3, 3, 3}} {
		rng := rand.New(rand.NewPCG(uint64(i), 5))
		q := uint(1 + i)
		m, _ := NewMaplet(q, 9, lens)
		for range rng.IntN(int(MapletMaxLoad * float64(m.Slots()))) {
			h := rng.Uint64()
			if rng.IntN(4) == 0 {
				h = ^uint64(0) - rng.Uint64N(1<<50) // crowd the last slots: clusters wrap
			}
			if r := rng.IntN(len(lens)); lens[r] != 0 {
				_ = m.Insert(h, r)
			}
		}
		b, _ := m.MarshalBinary()
		out = append(out, b)
		m.Release()
	}
	return out
}

// FuzzMapletUnmarshal feeds arbitrary bytes to UnmarshalBinary: it must
// never panic, and a maplet it accepts must behave like one built by
// Insert.
func FuzzMapletUnmarshal(f *testing.F) {
	for _, b := range mapletSeedEncodings() {
		f.Add(b)
		f.Add(b[:len(b)-1])
	}
	f.Add([]byte("MBMP"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecodedMaplet(t, data)
	})
}

// FuzzMapletTable is FuzzMapletUnmarshal with the checksum appended by the
// target, so the fuzzer reaches the code and table checks.
func FuzzMapletTable(f *testing.F) {
	for _, b := range mapletSeedEncodings() {
		f.Add(b[:len(b)-quotientTrailer])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		data := binary.LittleEndian.AppendUint32(append([]byte(nil), body...), crc32.Checksum(body, quotientCRC))
		checkDecodedMaplet(t, data)
	})
}

// checkDecodedMaplet decodes data and, if accepted, checks the maplet:
// every entry's hash (its stored bits, zeros after) looks up its run, a
// rebuild from the entries encodes to the same bytes (the encoding is
// canonical), and removes and inserts keep it consistent.
func checkDecodedMaplet(t *testing.T, data []byte) {
	var m Maplet
	if err := m.UnmarshalBinary(data); err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error does not wrap ErrCorrupt: %v", err)
		}
		return
	}
	defer m.Release()
	var hs []uint64
	var rs []uint8
	c := m.qf.cursor()
	p, w := m.p, m.qf.qbits+m.p
	for fp, ok := c.next(); ok; fp, ok = c.next() {
		v := fp & m.hmsk
		d := m.code.dec[v>>(p-m.code.maxLen)]
		fpBits := p - uint(d.len)
		h := (fp>>p<<p | (v&(1<<fpBits-1))<<d.len) << (64 - w)
		if !m.Lookup(h).Has(int(d.run)) {
			t.Fatalf("stored entry (%#x, run %d) not found", h, d.run)
		}
		hs, rs = append(hs, h), append(rs, d.run)
	}
	if len(hs) != m.Len() {
		t.Fatalf("cursor yields %d entries, Len %d", len(hs), m.Len())
	}
	g, err := BuildMaplet(m.QBits(), p, m.code.lens[:], hs, rs)
	if err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	b, _ := g.MarshalBinary()
	g.Release()
	if !bytes.Equal(b, data) {
		t.Fatalf("accepted a non-canonical encoding")
	}
	rng := rand.New(rand.NewPCG(uint64(len(data)), 4))
	for i, h := range hs {
		if i%2 == 0 && !m.Remove(h, int(rs[i])) {
			t.Fatalf("remove of stored entry (%#x, %d) failed", h, rs[i])
		}
	}
	for range 8 {
		if r := rng.IntN(MaxRuns); m.CodeLen(r) > 0 {
			_ = m.Insert(rng.Uint64(), r)
		}
	}
	if err := m.validate(); err != nil {
		t.Fatalf("after updates: %v", err)
	}
	for i, h := range hs {
		if i%2 == 1 && !m.Lookup(h).Has(int(rs[i])) {
			t.Fatalf("false negative after updates: (%#x, %d)", h, rs[i])
		}
	}
}
