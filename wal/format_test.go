package wal

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/monbandb/monban/internal/doctest"
)

// TestFormatExample pins the worked examples in doc.go and docs/format.md,
// recomputing their checksums from the standard library alone.
func TestFormatExample(t *testing.T) {
	log, offs := logOf(t, [][]byte{[]byte("hi"), []byte("wal!")})
	want := doctest.Hex(t, "../docs/format.md", "Two records, `\"hi\"` and `\"wal!\"`")
	if !bytes.Equal(log, want) || offs[0] != 0 || offs[1] != 9 {
		t.Fatalf("log = % x, offsets %v; want % x, [0 9]", log, offs, want)
	}
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	for _, off := range offs {
		n := int(binary.LittleEndian.Uint16(log[off+4:]))
		covered := binary.LittleEndian.AppendUint64(nil, uint64(off))
		covered = append(covered, log[off+4:off+7+int64(n)]...)
		if got := binary.LittleEndian.Uint32(log[off:]); got != crc32.Checksum(covered, castagnoli) {
			t.Fatalf("fragment at %d: stored checksum %08x, CRC-32C of offset‖length‖type‖payload is %08x",
				off, got, crc32.Checksum(covered, castagnoli))
		}
	}
	if got := binary.LittleEndian.Uint32(log); got != 0x6dc446d2 {
		t.Fatalf("first checksum %08x, doc says 6dc446d2", got)
	}

	// docs/format.md: a third record of 40000 bytes is a FIRST of 32741
	// bytes at offset 20 and a LAST of 7259 bytes at offset 32768.
	log, offs = logOf(t, [][]byte{[]byte("hi"), []byte("wal!"), make([]byte, 40000)})
	if offs[2] != 20 || log[20+6] != byte(typeFirst) || binary.LittleEndian.Uint16(log[20+4:]) != 32741 ||
		log[32768+6] != byte(typeLast) || binary.LittleEndian.Uint16(log[32768+4:]) != 7259 || len(log) != 32768+7+7259 {
		t.Fatalf("40000-byte record framed differently from docs/format.md")
	}

	// The recyclable log number 7: "hi", then the seal. Its checksums are
	// seeded with the offset, then the number.
	log, offs = writeLog(t, NewRecyclableWriter(&memFile{}, 7), [][]byte{[]byte("hi")}, true)
	want = doctest.Hex(t, "../docs/format.md", "The record `\"hi\"` in the recyclable log number 7")
	if !bytes.Equal(log, want) || offs[0] != 0 {
		t.Fatalf("log = % x, offsets %v; want % x, [0]", log, offs, want)
	}
	for _, off := range []int{0, 9} {
		n := int(binary.LittleEndian.Uint16(log[off+4:]))
		covered := binary.LittleEndian.AppendUint64(nil, uint64(off))
		covered = binary.LittleEndian.AppendUint64(covered, 7)
		covered = append(covered, log[off+4:off+7+n]...)
		if got := binary.LittleEndian.Uint32(log[off:]); got != crc32.Checksum(covered, castagnoli) {
			t.Fatalf("fragment at %d: stored checksum %08x, CRC-32C of offset‖number‖length‖type‖payload is %08x",
				off, got, crc32.Checksum(covered, castagnoli))
		}
	}
	if log[6] != 5 || log[9+6] != 9 || binary.LittleEndian.Uint32(log) != 0x13258e86 || binary.LittleEndian.Uint32(log[9:]) != 0x45fc6e2f {
		t.Fatalf("types %d, %d and checksums %08x, %08x; doc says 5 (FULL), 9 (SEAL), 13258e86, 45fc6e2f",
			log[6], log[9+6], binary.LittleEndian.Uint32(log), binary.LittleEndian.Uint32(log[9:]))
	}
	res := readLog(t, NewRecyclableReader(bytes.NewReader(log), "000007.log", 7), log)
	if len(res.records) != 1 || string(res.records[0]) != "hi" || !res.sealed {
		t.Fatalf("reading the example back: %q, %v, sealed %v", res.records, res.err, res.sealed)
	}
}

// TestCRCUint64 checks the seed's slicing-by-8 against the standard
// library on the bytes it stands for, from random registers.
func TestCRCUint64(t *testing.T) {
	castagnoli := crc32.MakeTable(crc32.Castagnoli)
	rng := rand.New(rand.NewPCG(7, 8))
	for range 10000 {
		crc, v := rng.Uint32(), rng.Uint64()
		if got, want := crcUint64(crc, v), ^crc32.Update(^crc, castagnoli, binary.LittleEndian.AppendUint64(nil, v)); got != want {
			t.Fatalf("crcUint64(%08x, %016x) = %08x, crc32.Update says %08x", crc, v, got, want)
		}
	}
}
