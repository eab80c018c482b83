package wal

import (
	"bytes"
	"slices"
	"testing"
)

// TestOlderLog: a reused file that log 12 never wrote to holds log 7's
// bytes, which OlderLog names; once log 12 wrote its first record, or for
// a legacy log's bytes, an empty or cut file, another program's bytes, or
// a log numbered at or above 12, it names none.
func TestOlderLog(t *testing.T) {
	records := [][]byte{[]byte("first"), bytes.Repeat([]byte("x"), 40000), []byte("third")}
	older, _ := writeLog(t, recyclableWriter(blockSize, 7), records, false)
	newer, _ := writeLog(t, recyclableWriter(blockSize, 12), records[:1], false)
	legacy, _ := logOf(t, records)
	above, _ := writeLog(t, recyclableWriter(blockSize, 13), records, false)
	sealedEmpty := recyclableWriter(blockSize, 5)
	if err := sealedEmpty.Seal(); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		file []byte
		want uint64
	}{
		{"log 7's bytes", older, 7},
		{"log 5, sealed before any record", sealedEmpty.f.(*memFile).data, 5},
		{"log 12 wrote its first record", overwrite(older, newer), 0},
		{"legacy", legacy, 0},
		{"a newer log's", above, 0},
		{"empty", nil, 0},
		{"cut in its first fragment", older[:10], 0},
		{"cut after its first fragment", older[:20], 7},
		{"zeros", make([]byte, 4096), 0},
		{"another program's", bytes.Repeat([]byte("not a log "), 100), 0},
	}
	for _, c := range cases {
		got, ok, err := OlderLog(bytes.NewReader(c.file), 12)
		if err != nil || ok != (c.want != 0) || got != c.want {
			t.Errorf("%s: OlderLog = %d, %v, %v; want %d", c.name, got, ok, err, c.want)
		}
		if c.want != 0 {
			if num, ok, err := FirstFragmentOf(bytes.NewReader(c.file), []uint64{12, c.want}); !ok || num != c.want || err != nil {
				t.Errorf("%s: FirstFragmentOf(12, %d) = %d, %v, %v", c.name, c.want, num, ok, err)
			}
		}
	}
	for _, nums := range [][]uint64{{7, 12}, {7, 13, 12}, {13}} {
		num, ok, err := FirstFragmentOf(bytes.NewReader(above), nums)
		if want := slices.Contains(nums, 13); err != nil || ok != want || ok && num != 13 {
			t.Errorf("log 13's bytes: FirstFragmentOf(%v) = %d, %v, %v", nums, num, ok, err)
		}
	}
	if _, ok, _ := OlderLog(bytes.NewReader(older), 7); ok {
		t.Error("log 7's bytes named as older than log 7")
	}
}

// TestOlderChecksums: the checksum olderChecksums derives for a number is
// the one checksum computes, for fragments of many lengths, offsets and
// numbers.
func TestOlderChecksums(t *testing.T) {
	for _, n := range []int{0, 1, 7, 100, 4096, 32761} {
		frag := bytes.Repeat([]byte{byte(n), 0x5a, 0x33}, n/3+1)[:n]
		for _, off := range []int64{0, 7, blockSize, 3 * blockSize} {
			c := newOlderChecksums(off, frag)
			for _, num := range []uint64{0, 1, 2, 3, 12, 1 << 20, 1<<40 + 12345, ^uint64(0)} {
				if got, want := c.of(num), checksum(off, logKind{recyclable: true, num: num}, frag); got != want {
					t.Fatalf("fragment of %d bytes at %d, log %d: %08x, checksum says %08x", n, off, num, got, want)
				}
			}
		}
	}
}

// BenchmarkOlderLogNoMatch: the worst case, a fragment no number below
// 2^20 verifies, tried against each.
func BenchmarkOlderLogNoMatch(b *testing.B) {
	log, _ := writeLog(b, recyclableWriter(blockSize, 1<<21), [][]byte{bytes.Repeat([]byte("x"), 30000)}, false)
	for b.Loop() {
		if _, ok, err := OlderLog(bytes.NewReader(log), 1<<20); ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// TestOlderLogAt: log 12 wrote two records over a file that held log 7's
// four blocks; the block after log 12's records starts with log 7's
// fragment, which OlderLogAt names; not within one of its fragments, nor
// past the end.
func TestOlderLogAt(t *testing.T) {
	var records [][]byte
	for i := range 4 {
		records = append(records, bytes.Repeat([]byte{byte('a' + i)}, 30000))
	}
	older, _ := writeLog(t, recyclableWriter(blockSize, 7), records, false)
	w := recyclableWriter(blockSize, 12)
	newer, _ := writeLog(t, w, [][]byte{[]byte("one"), []byte("two")}, false)
	file := overwrite(older, newer)
	rd := NewRecyclableReader(bytes.NewReader(file), "000012.log", 12)
	for {
		if _, err := rd.Next(); err != nil {
			break
		}
	}
	end := rd.RecordsEnd()
	if end != int64(len(newer)) {
		t.Fatalf("RecordsEnd %d, log 12 wrote %d bytes", end, len(newer))
	}
	if got, ok, err := OlderLogAt(bytes.NewReader(file), NextBlock(end), 12); !ok || err != nil || got != 7 {
		t.Errorf("the block after log 12's records: OlderLogAt = %d, %v, %v; want 7", got, ok, err)
	}
	if _, ok, _ := OlderLogAt(bytes.NewReader(file), end, 12); ok {
		t.Error("OlderLogAt within log 7's fragment named a log")
	}
	if _, ok, _ := OlderLogAt(bytes.NewReader(file), NextBlock(int64(len(file))+1), 12); ok {
		t.Error("OlderLogAt past the end named a log")
	}
}

// TestOlderLogAtRecordsEnd: logs 7 and 12 began with a record of the same
// length, and a crash stopped log 12 there: log 7's second fragment starts
// where log 12's records end, within the block, and OlderLogAt names it.
func TestOlderLogAtRecordsEnd(t *testing.T) {
	older, _ := writeLog(t, recyclableWriter(blockSize, 7), [][]byte{[]byte("head7"), []byte("a record of log 7")}, false)
	newer, _ := writeLog(t, recyclableWriter(blockSize, 12), [][]byte{[]byte("hd12!")}, false)
	file := overwrite(older, newer)
	if got, ok, err := OlderLogAt(bytes.NewReader(file), int64(len(newer)), 12); !ok || err != nil || got != 7 {
		t.Errorf("where log 12's record ends: OlderLogAt = %d, %v, %v; want 7", got, ok, err)
	}
	if _, ok, _ := OlderLogAt(bytes.NewReader(file), int64(len(newer))+1, 12); ok {
		t.Error("OlderLogAt a byte later named a log")
	}
	if _, ok, _ := OlderLogAt(bytes.NewReader(file), blockSize-headerSize+1, 12); ok {
		t.Error("OlderLogAt where no header fits named a log")
	}
}

// TestFirstRecordFrame: the bytes FirstRecordFrame gives are the ones a
// writer of that log writes for its first record.
func TestFirstRecordFrame(t *testing.T) {
	for _, rec := range [][]byte{nil, []byte("identity"), bytes.Repeat([]byte("x"), blockSize)} {
		written, _ := writeLog(t, recyclableWriter(blockSize, 9), [][]byte{rec}, false)
		if got := FirstRecordFrame(9, rec); !bytes.Equal(got, written) {
			t.Errorf("record of %d bytes: FirstRecordFrame gives %d bytes, the writer wrote %d, or other bytes", len(rec), len(got), len(written))
		}
	}
}
