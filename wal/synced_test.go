package wal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// The synced-log rule (NewSyncedReader, doc.go invariant 6) on the shapes
// of damageLog: only an incomplete final record or zeros are a torn tail.

// TestSyncedTruncate cuts the log at every byte offset: a cut log is a
// torn tail under the synced rule too. Zero-filled after the cut (a file
// extended before its data landed), it is a torn tail only when the cut
// fell between fragments; a fragment completed by zeros fails its checksum
// and is corruption at its start.
func TestSyncedTruncate(t *testing.T) {
	for _, bs := range []int{512, blockSize} {
		t.Run(fmt.Sprint("block=", bs), func(t *testing.T) {
			d := newDamageLog(t, bs)
			d.synced = true
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
				padded = append(append(padded[:0], d.bytes[:cut]...), make([]byte, (cut/bs+2)*bs-cut)...)
				var err error
				if s, inside := d.fragmentAt(int64(cut)); inside {
					err = d.check(padded, s.record, true, s.start, 0)
				} else {
					n, lastEnd := d.complete(s.end)
					err = d.check(padded, n, false, 0, tornBytes(d.bytes[:cut], lastEnd)) // the zeros are not counted
				}
				if err != nil {
					t.Fatalf("cut at %d, zero-filled to %d: %v", cut, len(padded), err)
				}
			}
		})
	}
}

// fragmentAt returns the fragment that a cut at off splits, and whether
// zeros written from off change it (then it fails its checksum). Otherwise
// the returned span ends where the zeros start to count as a torn tail.
func (d *damageLog) fragmentAt(off int64) (span, bool) {
	for _, s := range d.frags {
		if off > s.start && off < s.end && s.end-s.start >= headerSize && !allZero(d.bytes[off:s.end]) {
			return s, true
		}
		if off > s.start && off < s.end {
			return s, false
		}
	}
	return span{start: off, end: off}, false
}

// TestSyncedBitFlip flips every bit of the log, the final record included:
// under the synced rule every flip is corruption at the damaged fragment
// (or trailer), after every record before it. There is no exception: the
// checksum covers length, type and payload, a flip that raises the final
// fragment's length past the end of the file is caught because the bytes
// present verify at their own length, and trailers must be zero.
func TestSyncedBitFlip(t *testing.T) {
	for _, bs := range []int{512, blockSize} {
		t.Run(fmt.Sprint("block=", bs), func(t *testing.T) {
			d := newDamageLog(t, bs)
			d.synced = true
			exhaustive := bs < blockSize || longTests
			log := bytes.Clone(d.bytes)
			flips := 0
			for _, s := range d.frags {
				for i := s.start; i < s.end; i++ {
					inHeader := i < s.start+headerSize || s.end-s.start < headerSize
					if !exhaustive && !inHeader && i%499 != 0 && !d.nearBoundary(i, 4) {
						continue
					}
					for bit := range 8 {
						log[i] ^= 1 << bit
						if err := d.check(log, s.record, true, s.start, 0); err != nil {
							t.Fatalf("flip bit %d of byte %d (fragment %d..%d of record %d): %v", bit, i, s.start, s.end, s.record, err)
						}
						log[i] ^= 1 << bit
						flips++
					}
				}
			}
			t.Logf("%d-byte log, %d-byte blocks: %d bit flips, all corruption", len(log), bs, flips)
		})
	}
}

// TestSyncedTailCases names the tails the two rules judge differently.
func TestSyncedTailCases(t *testing.T) {
	clean, offs := logOf(t, [][]byte{[]byte("a"), []byte("bb"), []byte("ccc")})
	size := len(clean)
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	withByte := func(at int, xor byte) []byte { l := bytes.Clone(clean); l[at] ^= xor; return l }
	last := int(offs[2])
	for _, tc := range []struct {
		name     string
		log      []byte
		records  int
		dropped  int64  // for a torn tail
		corrupt  string // for corruption: the reason in the error
		walTorn  bool   // NewReader calls it a torn tail
		atOffset int64
	}{
		{"zeros after the last record", cat(clean, make([]byte, 100)), 3, 0, "", true, 0},
		{"final header cut short", clean[:last+5], 2, 5, "", true, 0},
		{"final payload cut short", clean[:size-1], 2, int64(size - 1 - last), "", true, 0},
		{"checksum mismatch in the final record", withByte(size-1, 0x01), 2, 0, "checksum mismatch", true, int64(last)},
		{"final length raised past the end", withByte(last+4, 0x10), 2, 0, "length field damaged", true, int64(last)},
		{"final type zeroed", withByte(last+6, 0x01), 2, 0, "zeroed bytes", true, int64(last)},
		{"a whole fragment of garbage after the log", cat(clean, []byte{1, 2, 3, 4, 0, 0, 1}), 3, 0, "checksum mismatch", true, int64(size)},
		{"zeros, then a non-zero byte", cat(clean, make([]byte, 50), []byte{9}, make([]byte, 10)), 3, 0, "zeroed bytes", true, int64(size)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if res := readAll(t, tc.log); tc.walTorn != (res.err == io.EOF) {
				t.Fatalf("NewReader ended with %v", res.err)
			}
			r := NewSyncedReader(bytes.NewReader(tc.log), "MANIFEST-000003")
			n := 0
			var err error
			for {
				if _, err = r.Next(); err != nil {
					break
				}
				n++
			}
			if n != tc.records {
				t.Fatalf("%d records then %v, want %d", n, err, tc.records)
			}
			if tc.corrupt == "" {
				if err != io.EOF || r.DroppedBytes() != tc.dropped {
					t.Fatalf("ended with %v, dropped %d; want io.EOF, dropped %d", err, r.DroppedBytes(), tc.dropped)
				}
				return
			}
			var ce *CorruptionError
			if !errors.As(err, &ce) || ce.Offset != tc.atOffset || ce.Name != "MANIFEST-000003" || !strings.Contains(err.Error(), tc.corrupt) {
				t.Fatalf("ended with %v; want corruption at %d naming MANIFEST-000003: %s", err, tc.atOffset, tc.corrupt)
			}
		})
	}
}
