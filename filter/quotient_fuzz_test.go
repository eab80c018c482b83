package filter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"math/rand/v2"
	"testing"
)

// quotientSeedEncodings returns valid encodings covering empty, sparse,
// wrapped, duplicate-heavy and full tables.
func quotientSeedEncodings() [][]byte {
	var out [][]byte
	for i, p := range [][3]uint{{1, 1, 2}, {2, 3, 3}, {3, 5, 0}, {4, 4, 15}, {5, 3, 31}, {6, 2, 64}, {7, 9, 120}, {8, 56, 240}} {
		rng := rand.New(rand.NewPCG(uint64(i), 3))
		f, _ := NewQuotient(p[0], p[1])
		for f.Len() < int(p[2]) {
			h := rng.Uint64()
			if rng.IntN(4) == 0 {
				h = ^uint64(0) - rng.Uint64N(1<<40) // crowd the last slots: clusters wrap
			}
			_ = f.InsertHash(h)
		}
		b, _ := f.MarshalBinary()
		out = append(out, b)
	}
	return out
}

// FuzzQuotientUnmarshal feeds arbitrary bytes to UnmarshalBinary: it must
// never panic, and a filter it accepts must behave like one built by
// Insert.
func FuzzQuotientUnmarshal(f *testing.F) {
	for _, b := range quotientSeedEncodings() {
		f.Add(b)
		f.Add(b[:len(b)-1])
	}
	f.Add([]byte("MBQF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkDecoded(t, data)
	})
}

// FuzzQuotientTable fuzzes the table itself: the input is an encoding
// without its checksum, which the target appends, so the fuzzer reaches the
// structural checks instead of stopping at the CRC.
func FuzzQuotientTable(f *testing.F) {
	for _, b := range quotientSeedEncodings() {
		f.Add(b[:len(b)-quotientTrailer])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		data := binary.LittleEndian.AppendUint32(append([]byte(nil), body...), crc32.Checksum(body, quotientCRC))
		checkDecoded(t, data)
	})
}

// checkDecoded decodes data and, if accepted, checks the filter: its
// fingerprints all answer MayContain, Len matches, the encoding is canonical
// (a rebuild from its fingerprints encodes to the same bytes), and inserts
// and deletes keep it consistent.
func checkDecoded(t *testing.T, data []byte) {
	var q Quotient
	if err := q.UnmarshalBinary(data); err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error does not wrap ErrCorrupt: %v", err)
		}
		return
	}
	width := q.QBits() + q.RBits()
	g, _ := NewQuotient(q.QBits(), q.RBits())
	c := q.cursor()
	var fps []uint64
	for fp, ok := c.next(); ok; fp, ok = c.next() {
		if !q.MayContainHash(fp << (64 - width)) {
			t.Fatalf("stored fingerprint %#x not found", fp)
		}
		fps = append(fps, fp)
		if err := g.InsertHash(fp << (64 - width)); err != nil {
			t.Fatalf("rebuild: %v", err)
		}
	}
	if len(fps) != q.Len() {
		t.Fatalf("cursor yields %d fingerprints, Len %d", len(fps), q.Len())
	}
	if b, _ := g.MarshalBinary(); !bytes.Equal(b, data) {
		t.Fatalf("accepted a non-canonical encoding")
	}
	// Mutate: delete half the fingerprints, insert some new ones.
	rng := rand.New(rand.NewPCG(uint64(len(data)), 4))
	for i, fp := range fps {
		if i%2 == 0 && !q.DeleteHash(fp<<(64-width)) {
			t.Fatalf("delete of stored fingerprint %#x failed", fp)
		}
	}
	for range 8 {
		_ = q.InsertHash(rng.Uint64())
	}
	if err := q.validate(); err != nil {
		t.Fatalf("after updates: %v", err)
	}
	for i, fp := range fps {
		if i%2 == 1 && !q.MayContainHash(fp<<(64-width)) {
			t.Fatalf("false negative after updates: %#x", fp)
		}
	}
}
