package filter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/big"
	"math/rand/v2"
	"testing"
)

// mapletSeedEncodings returns valid encodings: empty, sparse, wrapped,
// duplicate-heavy and nearly full tables under several codes.
func mapletSeedEncodings() [][]byte {
	var out [][]byte
	for i, lens := range [][]uint8{{1}, {1, 2, 2}, {2, 2, 2}, RunCodeLengths(treeShares(7), MaxRunCodeLen), {3, 3, 3, 3, 3, 3, 3, 3}} {
		rng := rand.New(rand.NewPCG(uint64(i), 5))
		m, _ := NewMaplet([]uint64{2, 4, 64, 192, 320}[i], 9, lens)
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
	f.Add(mapletVersion1Example())
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
// every entry's hash (the least whose fingerprint it stores) looks up its run, a
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
	p := m.p
	for fp, ok := c.next(); ok; fp, ok = c.next() {
		v := fp & m.hmsk
		d := m.code.dec[v>>(p-m.code.maxLen)]
		fpBits := p - uint(d.len)
		h := mapletPreimage(fp>>p<<p|(v&(1<<fpBits-1))<<d.len, m.qf.slots, p)
		if fq, got := m.split(h); fq != fp>>p || got>>d.len != v&(1<<fpBits-1) {
			t.Fatalf("no hash gives the stored entry %#x", fp)
		}
		if !m.Lookup(h).Has(int(d.run)) {
			t.Fatalf("stored entry (%#x, run %d) not found", h, d.run)
		}
		hs, rs = append(hs, h), append(rs, d.run)
	}
	if len(hs) != m.Len() {
		t.Fatalf("cursor yields %d entries, Len %d", len(hs), m.Len())
	}
	g, err := BuildMaplet(m.qf.slots, p, m.code.lens[:], hs, rs)
	if err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	b, _ := g.MarshalBinary()
	g.Release()
	if data[4] == 1 { // version 1 is read, not written: the tables must agree
		b, data = b[mapletHeader:len(b)-quotientTrailer], data[mapletHeaderV1:len(data)-quotientTrailer]
	}
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

// mapletPreimage returns the least hash, in the bits a maplet reads (the
// top KeyHashBits), whose quotient and fingerprint in a table of slots and
// p payload bits are f's: f = quotient·2^p + fingerprint, and the maplet's
// f of a hash H is ⌊H·slots/2^(64−p)⌋, so H = ⌈f·2^(64−p)/slots⌉ rounded
// up to the bits it reads (which the slots' and p's bits within KeyHashBits
// leave room for).
func mapletPreimage(f, slots uint64, p uint) uint64 {
	n := new(big.Int).Lsh(new(big.Int).SetUint64(f), 64-p)
	n.Add(n, new(big.Int).SetUint64(slots-1))
	n.Quo(n, new(big.Int).SetUint64(slots))
	unit := uint64(1) << (64 - KeyHashBits)
	return (n.Uint64() + unit - 1) &^ (unit - 1)
}

// TestMapletReadsVersion1 decodes the example of docs/format.md, "Maplet",
// as version 1 wrote it (before tables of any size): 4 slots, the same
// entries, found by the same hashes, and re-encoded as version 2 with the
// same table.
func TestMapletReadsVersion1(t *testing.T) {
	v1 := mapletVersion1Example()
	var m Maplet
	if err := m.UnmarshalBinary(v1); err != nil {
		t.Fatal(err)
	}
	defer m.Release()
	if m.Slots() != 4 || m.PayloadBits() != 4 || m.Len() != 3 {
		t.Fatalf("decoded %d slots, P=%d, %d entries; want 4, 4, 3", m.Slots(), m.PayloadBits(), m.Len())
	}
	for _, e := range []struct {
		bits uint64 // quotient<<4 | the next four hash bits
		run  int
	}{{0x1b, 0}, {0x16, 2}, {0x3e, 1}} {
		if got := m.Lookup(e.bits << (64 - 6)); got != 1<<e.run {
			t.Errorf("Lookup(%#x) = %b, want run %d", e.bits, got, e.run)
		}
	}
	v2, _ := m.MarshalBinary()
	if v2[4] != 2 || !bytes.Equal(v2[mapletHeader:len(v2)-4], v1[mapletHeaderV1:len(v1)-4]) {
		t.Fatalf("re-encoded as % x", v2)
	}
	// Version 1 fingerprints past the hash's top 40 bits are refused, at
	// the length their table has, so that only that rule can refuse them;
	// 40 bits exactly are read.
	for _, tc := range []struct {
		p  byte
		ok bool
	}{{38, true}, {39, false}} {
		b := append([]byte(nil), v1[:mapletHeaderV1]...)
		b[6] = tc.p
		b = binary.LittleEndian.AppendUint64(b[:72], 0) // count 0
		b = append(b, make([]byte, 8*quotientWords(4, uint(tc.p)))...)
		b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(b, quotientCRC))
		var g Maplet
		err := g.UnmarshalBinary(b)
		if tc.ok && err != nil || !tc.ok && !errors.Is(err, ErrCorrupt) {
			t.Errorf("version 1 with q=2 P=%d: %v, want ok %v", tc.p, err, tc.ok)
		}
		if err == nil {
			g.Release()
		}
	}
}

// mapletVersion1Example is docs/format.md's example maplet as version 1
// encoded it.
func mapletVersion1Example() []byte {
	v1 := []byte{0x4d, 0x42, 0x4d, 0x50, 0x01, 0x02, 0x04, 0x00, 0x01, 0x02, 0x02}
	v1 = append(v1, make([]byte, 72-len(v1))...)
	for _, w := range []uint64{3, 0x0a, 0x04, 0x04, 0xbd50, 0, 0, 0} {
		v1 = binary.LittleEndian.AppendUint64(v1, w)
	}
	return binary.LittleEndian.AppendUint32(v1, 0xb696607c)
}
