package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"slices"
	"testing"
)

// fuzzNum is the number of the recyclable log the fuzz targets read.
const fuzzNum = 7

// seedLogs are valid logs for the fuzz corpora: they run as plain tests.
// Each is legacy, or recyclable with number fuzzNum (sealed, and sealed
// over an older log's bytes, too).
func seedLogs(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, bs := range []int{64, 512} {
		recs := [][]byte{[]byte("hi"), {}, bytes.Repeat([]byte("x"), bs+bs/2), []byte("wal!")}
		legacy, _ := writeLog(t, newWriterSize(&memFile{}, bs), recs, false)
		open, _ := writeLog(t, recyclableWriter(bs, fuzzNum), recs, false)
		sealed, _ := writeLog(t, recyclableWriter(bs, fuzzNum), recs[:2], true)
		older, _ := writeLog(t, recyclableWriter(bs, fuzzNum-1), recs, true)
		seeds = append(seeds, legacy, open, sealed, overwrite(older, sealed), overwrite(older, open[:len(open)/2]))
	}
	log, _ := logOf(t, [][]byte{[]byte("hi"), []byte("wal!")})
	return append(seeds, log, nil)
}

// verifiesAnywhere reports whether a recyclable fragment of log fuzzNum
// verifies at any offset of log, wherever its block would put it.
func verifiesAnywhere(log []byte) bool {
	for p := 0; p+headerSize <= len(log); p++ {
		n := int(binary.LittleEndian.Uint16(log[p+4:]))
		if fragmentType(log[p+6]).recyclable() && p+headerSize+n <= len(log) &&
			binary.LittleEndian.Uint32(log[p:]) == checksum(int64(p), recyclable(fuzzNum), log[p+4:p+headerSize+n]) {
			return true
		}
	}
	return false
}

// FuzzReader feeds arbitrary bytes to a Reader on 64-byte blocks (so small
// inputs cross blocks) and on real ones: it must never panic or loop, must
// end with io.EOF or a corruption error, and can't return more payload than
// the input holds. The synced-log rule runs too: it returns the same
// records, and calls a tail torn only where the plain rule does. So does
// NewRecyclableReader: a sealed log ends cleanly with nothing dropped, and
// where no recyclable fragment of its number verifies anywhere, it says
// exactly what NewReader says.
func FuzzReader(f *testing.F) {
	for _, s := range seedLogs(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, log []byte) {
		for _, bs := range []int{64, blockSize} {
			plain := newReaderSize(bytes.NewReader(log), "fuzz.log", bs)
			strict := newReaderSize(bytes.NewReader(log), "fuzz.log", bs)
			strict.synced = true
			for {
				a, aerr := plain.Next()
				b, berr := strict.Next()
				if aerr == nil && berr == nil && bytes.Equal(a, b) {
					continue
				}
				if aerr == nil || berr == nil || berr == io.EOF && aerr != io.EOF {
					t.Fatalf("block %d: plain rule (%d bytes, %v), synced rule (%d bytes, %v)", bs, len(a), aerr, len(b), berr)
				}
				break
			}
			plainRes := fuzzRead(t, newReaderSize(bytes.NewReader(log), "fuzz.log", bs), log, bs)
			byNum := fuzzRead(t, newRecyclableReaderSize(bytes.NewReader(log), "fuzz.log", fuzzNum, bs), log, bs)
			if byNum.sealed && (byNum.err != io.EOF || !byNum.clean || byNum.dropped != 0) {
				t.Fatalf("block %d: sealed, yet %v, ends cleanly %v, dropped %d", bs, byNum.err, byNum.clean, byNum.dropped)
			}
			if !verifiesAnywhere(log) && !sameResult(plainRes, byNum) {
				t.Fatalf("block %d: a legacy log read by number: %d records, %v, dropped %d; NewReader: %d records, %v, dropped %d",
					bs, len(byNum.records), byNum.err, byNum.dropped, len(plainRes.records), plainRes.err, plainRes.dropped)
			}
		}
		// OlderLog of any bytes: an answer below the number asked, no error
		// from a reader that has none.
		if older, ok, err := OlderLog(bytes.NewReader(log), 64); err != nil || ok != (older != 0) || older >= 64 {
			t.Fatalf("OlderLog = %d, %v, %v", older, ok, err)
		} else if ok {
			if num, ok, err := FirstFragmentOf(bytes.NewReader(log), []uint64{older}); !ok || num != older || err != nil {
				t.Fatalf("OlderLog named %d, FirstFragmentOf = %d, %v, %v", older, num, ok, err)
			}
		}
	})
}

// fuzzRead reads log with r, checking what FuzzReader requires of every
// reader: an end in io.EOF or corruption, no more record bytes than the
// log holds, a DroppedBytes within it.
func fuzzRead(t *testing.T, r *Reader, log []byte, bs int) readResult {
	res := readLog(t, r, log)
	if res.err != io.EOF && !errors.Is(res.err, ErrCorruption) {
		t.Fatalf("block %d: error %v wraps neither io.EOF nor ErrCorruption", bs, res.err)
	}
	if res.dropped < 0 || res.dropped > int64(len(log)) {
		t.Fatalf("block %d: dropped %d of %d bytes", bs, res.dropped, len(log))
	}
	total := 0
	for _, rec := range res.records {
		total += len(rec) + headerSize
	}
	if total > len(log) {
		t.Fatalf("block %d: returned %d bytes of records from %d bytes", bs, total, len(log))
	}
	return res
}

// sameResult reports whether two reads of a log said the same.
func sameResult(a, b readResult) bool {
	if len(a.records) != len(b.records) || a.dropped != b.dropped || a.clean != b.clean ||
		(a.err == io.EOF) != (b.err == io.EOF) || !slices.Equal(a.offsets, b.offsets) {
		return false
	}
	for i := range a.records {
		if !bytes.Equal(a.records[i], b.records[i]) {
			return false
		}
	}
	var ca, cb *CorruptionError
	return !errors.As(a.err, &ca) || errors.As(b.err, &cb) && ca.Offset == cb.Offset && ca.Record == cb.Record
}

// FuzzDamage writes records cut from the fuzzer's data, then damages the
// log (XOR a byte pattern at an offset, or truncate): whatever the Reader
// returns must be a prefix of what was written, never a wrong record, and a
// clean end (io.EOF, nothing dropped) only if the log is undamaged.
func FuzzDamage(f *testing.F) {
	f.Add([]byte("hello, write-ahead log"), uint8(5), uint16(3), uint16(0), uint8(0xff), false)
	f.Add(bytes.Repeat([]byte("abcdefgh"), 40), uint8(20), uint16(100), uint16(90), uint8(1), true)
	f.Add(bytes.Repeat([]byte{0}, 300), uint8(0), uint16(64), uint16(64), uint8(0x80), false)
	f.Fuzz(func(t *testing.T, data []byte, split uint8, at, width uint16, xor uint8, truncate bool) {
		// Records: data cut every `split+1` bytes, plus an empty one.
		var model [][]byte
		step := int(split) + 1
		for len(data) > 0 {
			n := min(step, len(data))
			model = append(model, data[:n])
			data = data[n:]
		}
		model = append(model, nil)
		mf := &memFile{}
		w := newWriterSize(mf, 64)
		for _, rec := range model {
			if _, err := w.Append(rec); err != nil {
				t.Fatal(err)
			}
		}
		log := mf.data
		damaged := false
		if truncate {
			cut := int(at) % (len(log) + 1)
			damaged = cut < len(log)
			log = log[:cut]
		} else if xor != 0 {
			for i := int(at); i < len(log) && i <= int(at)+int(width%16); i++ {
				log[i] ^= xor
				damaged = true
			}
		}
		r := newReaderSize(bytes.NewReader(log), "fuzz.log", 64)
		for i := 0; ; i++ {
			rec, err := r.Next()
			if err != nil {
				if err != io.EOF && !errors.Is(err, ErrCorruption) {
					t.Fatalf("error %v wraps neither io.EOF nor ErrCorruption", err)
				}
				if truncate && err != io.EOF {
					t.Fatalf("truncated log gave %v, want io.EOF", err)
				}
				if damaged && err == io.EOF && r.DroppedBytes() == 0 && i == len(model) {
					t.Fatalf("damage went unnoticed: all %d records and a clean end", i)
				}
				if !damaged && (err != io.EOF || i != len(model) || r.DroppedBytes() != 0) {
					t.Fatalf("undamaged log: %d of %d records, %v, dropped %d", i, len(model), err, r.DroppedBytes())
				}
				return
			}
			if i >= len(model) || !bytes.Equal(rec, model[i]) {
				t.Fatalf("record %d: WRONG RECORD %q", i, rec)
			}
		}
	})
}

// FuzzRecycle writes a recyclable log (number 2) over an older one (number
// 1), both of records cut from the fuzzer's data, seals the newer one or
// not, and crashes it after cut bytes: the file is the newer log's first
// cut bytes, then the older log's. Without further damage the reader
// returns exactly the newer log's records complete in the file, then
// io.EOF, sealed only if the seal was written; never an older record,
// never corruption. With a byte of the newer log's flipped, it returns a
// prefix of the newer log's records, then io.EOF or corruption.
func FuzzRecycle(f *testing.F) {
	f.Add([]byte("hello, recycled write-ahead log"), uint8(4), uint8(9), uint16(40), true, uint16(0), uint8(0))
	f.Add(bytes.Repeat([]byte("abcdefgh"), 40), uint8(20), uint8(20), uint16(200), false, uint16(30), uint8(0x40))
	f.Add(bytes.Repeat([]byte{0}, 300), uint8(63), uint8(7), uint16(1000), true, uint16(0), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, split, oldSplit uint8, cut uint16, seal bool, flipAt uint16, xor uint8) {
		cutUp := func(data []byte, step int) [][]byte {
			var recs [][]byte
			for len(data) > 0 {
				n := min(step, len(data))
				recs = append(recs, data[:n])
				data = data[n:]
			}
			return append(recs, nil)
		}
		older, _ := writeLog(t, recyclableWriter(64, 1), append(cutUp(data, int(oldSplit)+1), data), true)
		w := recyclableWriter(64, 2)
		model := cutUp(data, int(split)+1)
		ends := make([]int64, len(model))
		for i, rec := range model {
			if _, err := w.Append(rec); err != nil {
				t.Fatal(err)
			}
			ends[i] = w.Size()
		}
		if seal {
			if err := w.Seal(); err != nil {
				t.Fatal(err)
			}
		}
		newer := w.f.(*memFile).data
		n := int(cut) % (len(newer) + 1)
		img := overwrite(older, newer[:n])
		flipped := xor != 0 && int(flipAt) < n
		if flipped {
			img[flipAt] ^= xor
		}
		res := readLog(t, newRecyclableReaderSize(bytes.NewReader(img), "000002.log", 2, 64), img)
		for i, rec := range res.records {
			if i >= len(model) || !bytes.Equal(rec, model[i]) {
				t.Fatalf("record %d: WRONG RECORD %q", i, rec)
			}
		}
		if flipped {
			if res.err != io.EOF && !errors.Is(res.err, ErrCorruption) {
				t.Fatalf("error %v wraps neither io.EOF nor ErrCorruption", res.err)
			}
			return
		}
		complete := 0
		for complete < len(ends) && ends[complete] <= agree(img, newer) {
			complete++
		}
		wantSealed := seal && agree(img, newer) == int64(len(newer))
		if res.err != io.EOF || len(res.records) != complete || res.sealed != wantSealed {
			t.Fatalf("%d of %d records, %v, sealed %v; want %d, io.EOF, sealed %v", len(res.records), len(model), res.err, res.sealed, complete, wantSealed)
		}
	})
}
