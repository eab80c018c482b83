package wal

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// seedLogs are valid logs for the fuzz corpora: they run as plain tests.
func seedLogs(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, bs := range []int{64, 512} {
		f := &memFile{}
		w := newWriterSize(f, bs)
		for _, rec := range [][]byte{[]byte("hi"), {}, bytes.Repeat([]byte("x"), bs+bs/2), []byte("wal!")} {
			if _, err := w.Append(rec); err != nil {
				t.Fatal(err)
			}
		}
		seeds = append(seeds, f.data)
	}
	log, _ := logOf(t, [][]byte{[]byte("hi"), []byte("wal!")})
	return append(seeds, log, nil)
}

// FuzzReader feeds arbitrary bytes to a Reader on 64-byte blocks (so small
// inputs cross blocks) and on real ones: it must never panic or loop, must
// end with io.EOF or a corruption error, and can't return more payload than
// the input holds. The synced-log rule runs too: it returns the same
// records, and calls a tail torn only where the plain rule does.
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
			r := newReaderSize(bytes.NewReader(log), "fuzz.log", bs)
			total := 0
			for {
				rec, err := r.Next()
				if err != nil {
					if err != io.EOF && !errors.Is(err, ErrCorruption) {
						t.Fatalf("block %d: error %v wraps neither io.EOF nor ErrCorruption", bs, err)
					}
					if r.DroppedBytes() < 0 || r.DroppedBytes() > int64(len(log)) {
						t.Fatalf("block %d: dropped %d of %d bytes", bs, r.DroppedBytes(), len(log))
					}
					break
				}
				if total += len(rec) + headerSize; total > len(log) {
					t.Fatalf("block %d: returned %d bytes of records from %d bytes", bs, total, len(log))
				}
			}
		}
	})
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
