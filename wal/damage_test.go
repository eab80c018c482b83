package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"testing"
)

// longTests enables the exhaustive variants (every offset, every bit) on
// full 32 KiB blocks, which take minutes under -race.
var longTests = os.Getenv("MONBAN_LONG") != ""

// damageLog is a small log whose records cross blocks in every way the
// framing allows: FULL, FIRST/MIDDLE/LAST, an empty record, a zero
// trailer, an empty FIRST. It is built with block size bs so the same
// shapes can be tested on tiny blocks (every offset, every bit, quickly)
// and on the real 32 KiB ones, and as each kind of log.
type damageLog struct {
	bs       int
	synced   bool // read with the synced-log rule (NewSyncedReader)
	byNumber bool // read with NewRecyclableReader, told the log's number
	kind     logKind
	bytes    []byte
	records  [][]byte
	ends     []int64 // ends[i]: offset just past record i (the next Append starts there)
	frags    []span  // every fragment and trailer, in file order
}

// span is one fragment or trailer of the clean log, found by a parser
// independent of Reader, and the record it belongs to (a trailer belongs
// to the record whose Append wrote it: the next one).
type span struct {
	start, end int64
	record     int
}

func newDamageLog(t testing.TB, bs int) *damageLog {
	return newKindDamageLog(t, bs, logKind{}, false)
}

// newKindDamageLog is newDamageLog written as a log of kind k, to be read
// with NewRecyclableReader if byNumber (always, for a recyclable log).
func newKindDamageLog(t testing.TB, bs int, k logKind, byNumber bool) *damageLog {
	rng := rand.New(rand.NewPCG(1, 2))
	d := &damageLog{bs: bs, kind: k, byNumber: byNumber || k.recyclable}
	f := &memFile{}
	w := newWriterSize(f, bs)
	w.kind = k
	add := func(n int) {
		rec := randomRecord(rng, n)
		if _, err := w.Append(rec); err != nil {
			t.Fatal(err)
		}
		d.records = append(d.records, rec)
		d.ends = append(d.ends, w.Size())
	}
	// fill appends a FULL record that leaves exactly k bytes in its block.
	fill := func(k int) { add(bs - int(w.Size()%int64(bs)) - headerSize - k) }
	add(bs / 10)
	add(0)
	add(bs / 4)
	fill(3)     // a 3-byte trailer
	add(2 * bs) // FIRST, MIDDLE, LAST
	add(20)
	add(1)
	fill(headerSize) // the next record starts with an empty FIRST
	add(30)
	add(5)
	add(bs / 3)
	d.bytes = f.data

	// Parse the clean log to know which bytes belong to which record.
	rec := 0
	for off := int64(0); off < int64(len(d.bytes)); {
		if left := int64(bs) - off%int64(bs); left < headerSize {
			d.frags = append(d.frags, span{off, off + left, rec})
			off += left
			continue
		}
		n := int64(binary.LittleEndian.Uint16(d.bytes[off+4:]))
		d.frags = append(d.frags, span{off, off + headerSize + n, rec})
		if t := fragmentType(d.bytes[off+6]).role(); t == typeFull || t == typeLast {
			rec++
		}
		off += headerSize + n
	}
	if rec != len(d.records) || len(d.bytes) < 3*bs {
		t.Fatalf("damage log: parsed %d records of %d, %d bytes", rec, len(d.records), len(d.bytes))
	}
	return d
}

// check reads log and compares what the Reader said with the model:
// records must be exactly d.records[:wantN], then the log must end with
// io.EOF and wantDropped, or (wantCorrupt) a *CorruptionError at wantAt.
func (d *damageLog) check(log []byte, wantN int, wantCorrupt bool, wantAt, wantDropped int64) error {
	r := newReaderSize(bytes.NewReader(log), "damaged.log", d.bs)
	if d.byNumber {
		r = newRecyclableReaderSize(bytes.NewReader(log), "damaged.log", d.kind.num, d.bs)
	}
	r.synced = d.synced
	n := 0
	for {
		rec, err := r.Next()
		if err == nil {
			if n >= len(d.records) || !bytes.Equal(rec, d.records[n]) {
				return fmt.Errorf("record %d: WRONG RECORD (%d bytes)", n, len(rec))
			}
			n++
			continue
		}
		var ce *CorruptionError
		switch {
		case n != wantN:
			return fmt.Errorf("returned %d records then %v; want %d records", n, err, wantN)
		case wantCorrupt && (!errors.As(err, &ce) || !errors.Is(err, ErrCorruption) || ce.Offset != wantAt):
			return fmt.Errorf("ended with %v; want corruption at offset %d", err, wantAt)
		case !wantCorrupt && (err != io.EOF || r.DroppedBytes() != wantDropped):
			return fmt.Errorf("ended with %v, dropped %d; want io.EOF, dropped %d", err, r.DroppedBytes(), wantDropped)
		}
		return nil
	}
}

// complete returns how many records end at or before off, and where the
// last of them ends.
func (d *damageLog) complete(off int64) (int, int64) {
	n := 0
	for n < len(d.ends) && d.ends[n] <= off {
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return n, d.ends[n-1]
}

// nearBoundary reports whether off is within radius bytes of a fragment,
// trailer or block edge: where sampled runs look at every offset.
func (d *damageLog) nearBoundary(off, radius int64) bool {
	for _, s := range d.frags {
		if off >= s.start-radius && off <= s.start+radius || off >= s.end-radius && off <= s.end+radius {
			return true
		}
	}
	return false
}

// damageKinds are the logs TestTruncate and TestBitFlip damage: a legacy
// log read by NewReader and by NewRecyclableReader (which must judge it
// exactly as NewReader does), and a recyclable log.
var damageKinds = []struct {
	name     string
	kind     logKind
	byNumber bool
}{
	{"legacy", logKind{}, false},
	{"legacy/by-number", logKind{num: 12}, true},
	{"recyclable", recyclable(12), true},
}

// TestTruncate cuts the log at every byte offset, and (every third offset)
// fills the rest of its block and one more with zeros, as preallocation
// leaves it. A truncated log is always a torn tail, never corruption: every
// record complete before the cut comes back and the rest is dropped, the
// zeros not counted in DroppedBytes. Run on
// 512-byte blocks exhaustively, and on 32 KiB blocks near every edge and at
// a stride (every offset with MONBAN_LONG=1), for each of damageKinds.
func TestTruncate(t *testing.T) {
	for _, k := range damageKinds {
		for _, bs := range []int{512, blockSize} {
			t.Run(fmt.Sprint(k.name, "/block=", bs), func(t *testing.T) {
				d := newKindDamageLog(t, bs, k.kind, k.byNumber)
				exhaustive := bs < blockSize || longTests
				var padded []byte
				for cut := 0; cut <= len(d.bytes); cut++ {
					if !exhaustive && cut%101 != 0 && !d.nearBoundary(int64(cut), 16) {
						continue
					}
					n, lastEnd := d.complete(int64(cut))
					if err := d.check(d.bytes[:cut], n, false, 0, tornBytes(d.bytes[:cut], lastEnd)); err != nil {
						t.Fatalf("cut at %d: %v", cut, err)
					}
					if cut%3 != 0 {
						continue
					}
					padded = append(append(padded[:0], d.bytes[:cut]...), make([]byte, (cut/bs+2)*bs-cut)...)
					if err := d.check(padded, n, false, 0, tornBytes(d.bytes[:cut], lastEnd)); err != nil { // the zeros are not counted
						t.Fatalf("cut at %d, zero-filled to %d: %v", cut, len(padded), err)
					}
				}
			})
		}
	}
}

// TestBitFlip flips every bit of the log, one at a time, and checks the
// exact outcome invariant 4 predicts: never a wrong record; a flip in the
// log's final fragment is a torn tail (every earlier record, io.EOF); a
// flip anywhere else has intact data after it, so it is a corruption error
// at the damaged fragment's offset after every record before it. On 32 KiB
// blocks every header and trailer bit is flipped and payload bits at a
// stride (every bit with MONBAN_LONG=1). For each of damageKinds: in a
// recyclable log too, damage with this log's fragments after it is
// corruption.
func TestBitFlip(t *testing.T) {
	for _, k := range damageKinds {
		for _, bs := range []int{512, blockSize} {
			t.Run(fmt.Sprint(k.name, "/block=", bs), func(t *testing.T) {
				d := newKindDamageLog(t, bs, k.kind, k.byNumber)
				exhaustive := bs < blockSize || longTests
				log := bytes.Clone(d.bytes)
				final := d.frags[len(d.frags)-1]
				flips, corrupt := 0, 0
				for _, s := range d.frags {
					for i := s.start; i < s.end; i++ {
						inHeader := i < s.start+headerSize || s.end-s.start < headerSize
						if !exhaustive && !inHeader && i%499 != 0 && !d.nearBoundary(i, 4) {
							continue
						}
						for bit := range 8 {
							log[i] ^= 1 << bit
							var err error
							if s == final {
								n, lastEnd := d.complete(s.start)
								err = d.check(log, n, false, 0, int64(len(log))-lastEnd)
							} else {
								err = d.check(log, s.record, true, s.start, 0)
								corrupt++
							}
							if err != nil {
								t.Fatalf("flip bit %d of byte %d (fragment %d..%d of record %d): %v", bit, i, s.start, s.end, s.record, err)
							}
							log[i] ^= 1 << bit
							flips++
						}
					}
				}
				t.Logf("%d-byte log, %d-byte blocks: %d bit flips, %d reported as corruption, %d as a torn tail",
					len(log), bs, flips, corrupt, flips-corrupt)
			})
		}
	}
}
