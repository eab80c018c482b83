package wal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// Recyclable logs written over an older log's file (invariant 9). MemFS's
// Create truncates, so a reused file is built as the bytes it would hold:
// the new log's bytes written so far over the older log's.

// overwrite returns the file a reused old becomes once new's bytes are
// written over its start.
func overwrite(old, new []byte) []byte {
	img := bytes.Clone(old)
	if len(new) > len(img) {
		img = append(img, make([]byte, len(new)-len(img))...)
	}
	copy(img, new)
	return img
}

// TestRecycledFile writes a recyclable log (number 8, the shapes of
// damageLog) over a longer older log and crashes it at every length: the
// file is the new log's first cut bytes, then the older log's from there.
// Whatever the cut, the new log's reader returns exactly the records
// complete in the file (those complete before the cut, and any the older
// bytes happen to complete as the new log would have) and then a torn
// tail: never an older record, never corruption, never a clean end while
// the older bytes follow. The older log is recyclable (number 7) with the
// same records first, so its fragments lie at the same offsets with the
// same bytes as the new log's and only the number in their checksums
// tells them apart; or recyclable with other records; or legacy, which
// the first fragment accepted rules out once the cut is past it.
func TestRecycledFile(t *testing.T) {
	for _, bs := range []int{512, blockSize} {
		d := newKindDamageLog(t, bs, recyclable(8), true)
		if typ := fragmentType(d.bytes[6]); typ != typeRecyclableFull {
			t.Fatalf("recyclable log's first fragment has type %d", typ)
		}
		firstEnd := d.frags[0].end
		rng := rand.New(rand.NewPCG(3, 4))
		more := randomRecord(rng, 2*bs)
		var other [][]byte
		for size := 0; size < len(d.bytes)+2*bs; {
			other = append(other, randomRecord(rng, randomSize(rng, 2*bs)))
			size += len(other[len(other)-1])
		}
		olds := []struct {
			name  string
			log   []byte
			after int64 // the cuts tested start here
		}{
			{"same records", first(writeLog(t, recyclableWriter(bs, 7), append(d.records, more), false)), 0},
			{"other records", first(writeLog(t, recyclableWriter(bs, 7), other, false)), 0},
			{"legacy", first(writeLog(t, newWriterSize(&memFile{}, bs), append(d.records, more), false)), firstEnd},
		}
		for _, old := range olds {
			t.Run(fmt.Sprintf("%s/block=%d", old.name, bs), func(t *testing.T) {
				if len(old.log) <= len(d.bytes)+bs {
					t.Fatalf("older log of %d bytes, not longer than the new one's %d", len(old.log), len(d.bytes))
				}
				exhaustive := bs < blockSize || longTests
				for cut := old.after; cut <= int64(len(d.bytes)); cut++ {
					if !exhaustive && cut%101 != 0 && !d.nearBoundary(cut, 16) {
						continue
					}
					img := overwrite(old.log, d.bytes[:cut])
					n, lastEnd := d.complete(agree(img, d.bytes))
					res := readLog(t, newRecyclableReaderSize(bytes.NewReader(img), "000008.log", 8, bs), img)
					if err := d.same(res, n); err != nil {
						t.Fatalf("cut at %d: %v", cut, err)
					}
					if res.err != io.EOF || res.dropped != tornBytes(img, lastEnd) || res.sealed || res.clean {
						t.Fatalf("cut at %d: ended with %v, dropped %d (want %d), sealed %v, ends cleanly %v; want a torn tail",
							cut, res.err, res.dropped, tornBytes(img, lastEnd), res.sealed, res.clean)
					}
				}
			})
		}
	}
}

// same reports whether res holds exactly the log's first n records.
func (d *damageLog) same(res readResult, n int) error {
	for i, rec := range res.records {
		if i >= len(d.records) || !bytes.Equal(rec, d.records[i]) {
			return fmt.Errorf("record %d: WRONG RECORD (%d bytes): an older log's?", i, len(rec))
		}
	}
	if len(res.records) != n {
		return fmt.Errorf("returned %d records then %v; want %d", len(res.records), res.err, n)
	}
	return nil
}

func first(b []byte, _ []int64) []byte { return b }

// agree returns the length of the longest common prefix of a and b.
func agree(a, b []byte) int64 {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return int64(n)
}

// TestRecycledLegacyFile pins why a legacy log's file must not be reused
// (invariant 9): where the new log has written nothing yet, its reader
// takes the legacy log for the new one, offsets being all that seeds a
// legacy checksum. An older recyclable log reads as nothing.
func TestRecycledLegacyFile(t *testing.T) {
	legacy, _ := logOf(t, [][]byte{[]byte("old")})
	if res := readLog(t, NewRecyclableReader(bytes.NewReader(legacy), "000008.log", 8), legacy); len(res.records) != 1 {
		t.Fatalf("untouched legacy file: %d records, %v; the hazard the doc warns of is gone, update it", len(res.records), res.err)
	}
	old, _ := writeLog(t, NewRecyclableWriter(&memFile{}, 7), [][]byte{[]byte("old")}, true)
	if res := readLog(t, NewRecyclableReader(bytes.NewReader(old), "000008.log", 8), old); len(res.records) != 0 || res.err != io.EOF || res.sealed {
		t.Fatalf("untouched recyclable file: %d records, %v, sealed %v; want none, io.EOF", len(res.records), res.err, res.sealed)
	}
}

// TestSealedTails: a sealed log reads as its records and io.EOF, sealed
// and ending cleanly with nothing dropped, whatever follows the seal, even
// a fragment of its own; an unsealed one ends cleanly only when nothing
// but a mapped Writer's zeros follows. A seal that is not this log's is
// damage like any other fragment, and one where it cannot belong is
// corruption, being intact. Three records: "a", 40000 bytes of 'b'
// (a FIRST filling block 0, a LAST in block 1) and "c".
func TestSealedTails(t *testing.T) {
	const num = 3
	recs := [][]byte{[]byte("a"), bytes.Repeat([]byte{'b'}, 40000), []byte("c")}
	open, _ := writeLog(t, NewRecyclableWriter(&memFile{}, num), recs, false)
	sealed, _ := writeLog(t, NewRecyclableWriter(&memFile{}, num), recs, true)
	if len(sealed) != len(open)+headerSize || sealed[len(open)+6] != byte(typeSeal) {
		t.Fatalf("sealed log of %d bytes, ends in type %d; want the unsealed one's %d and a SEAL", len(sealed), sealed[len(sealed)-1], len(open))
	}
	older, _ := writeLog(t, NewRecyclableWriter(&memFile{}, num-1), append(recs, recs...), true)
	garbage := randomRecord(rand.New(rand.NewPCG(5, 6)), 3000)
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	// frag frames record (or a seal) as log num's next fragment at log's end.
	frag := func(log []byte, k logKind, record []byte, whole fragmentType) []byte {
		_, b := appendFrame(bytes.Clone(log), int64(len(log)), blockSize, k, record, whole)
		return b
	}
	withSeal := func(log []byte, k logKind) []byte { return frag(log, k, nil, typeSeal) }
	// In place of "c", a FIRST filling block 1, its LAST never written.
	firstOnly := frag(open[:len(open)-headerSize-1], recyclable(num), make([]byte, 2*blockSize-len(open)+100), typeFull)[:2*blockSize]
	legacy, _ := logOf(t, recs)

	for _, tc := range []struct {
		name    string
		log     []byte
		records int
		sealed  bool
		clean   bool
		dropped int64 // -1: corruption
	}{
		{"sealed", sealed, 3, true, true, 0},
		{"sealed, then zeros", cat(sealed, make([]byte, 5000)), 3, true, true, 0},
		{"sealed, then garbage", cat(sealed, garbage), 3, true, true, 0},
		{"sealed, then the older log's bytes", overwrite(older, sealed), 3, true, true, 0},
		{"sealed, then a record of the same log", frag(sealed, recyclable(num), []byte("d"), typeFull), 3, true, true, 0},
		{"sealed, then garbage and a record of the same log", frag(cat(sealed, garbage), recyclable(num), []byte("d"), typeFull), 3, true, true, 0},
		{"a seal alone", withSeal(nil, recyclable(num)), 0, true, true, 0},
		{"unsealed", open, 3, false, true, 0},
		{"unsealed, then zeros to a window boundary", cat(open, make([]byte, windowSize-len(open))), 3, false, true, 0},
		{"unsealed, then the older log's bytes", overwrite(older, open), 3, false, false, int64(len(older) - len(open))},
		{"sealed by another log", withSeal(open, recyclable(num+1)), 3, false, false, headerSize},
		{"a SEAL inside a record", withSeal(firstOnly, recyclable(num)), 2, false, false, -1}, // an intact fragment where none belongs
		{"a SEAL with a payload", frag(open, recyclable(num), []byte{1}, typeSeal), 3, false, false, headerSize + 1},
		{"a legacy log, sealed", withSeal(legacy, recyclable(num)), 3, false, false, headerSize},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := readLog(t, NewRecyclableReader(bytes.NewReader(tc.log), "000003.log", num), tc.log)
			if tc.dropped < 0 {
				if len(res.records) != tc.records || !errors.Is(res.err, ErrCorruption) {
					t.Fatalf("%d records then %v; want %d, corruption", len(res.records), res.err, tc.records)
				}
				return
			}
			if len(res.records) != tc.records || res.err != io.EOF {
				t.Fatalf("%d records then %v; want %d, io.EOF", len(res.records), res.err, tc.records)
			}
			for i, rec := range res.records {
				if !bytes.Equal(rec, recs[i]) {
					t.Fatalf("record %d: WRONG RECORD (%d bytes)", i, len(rec))
				}
			}
			if res.sealed != tc.sealed || res.clean != tc.clean || res.dropped != tc.dropped {
				t.Fatalf("sealed %v, ends cleanly %v, dropped %d; want %v, %v, %d", res.sealed, res.clean, res.dropped, tc.sealed, tc.clean, tc.dropped)
			}
		})
	}
}

// TestSealBlockEdges seals a log whose last record leaves 0..9 bytes in
// its block: the seal goes after trailer padding where a header does not
// fit, and the log reads back sealed, on each writer.
func TestSealBlockEdges(t *testing.T) {
	for left := 0; left <= 9; left++ {
		recs := [][]byte{bytes.Repeat([]byte{'a'}, blockSize-headerSize-left)}
		log, _ := writeLog(t, NewRecyclableWriter(&memFile{}, 1), recs, true)
		at := blockSize - left
		if left < headerSize {
			at = blockSize
		}
		if len(log) != at+headerSize || log[at+6] != byte(typeSeal) || !allZero(log[blockSize-left:at]) {
			t.Fatalf("left %d: %d-byte log, type %d at %d", left, len(log), log[min(at+6, len(log)-1)], at)
		}
		res := readLog(t, NewRecyclableReader(bytes.NewReader(log), "000001.log", 1), log)
		if len(res.records) != 1 || res.err != io.EOF || !res.sealed || !res.clean {
			t.Fatalf("left %d: %d records, %v, sealed %v, clean %v", left, len(res.records), res.err, res.sealed, res.clean)
		}
	}
}

// TestWriterSeal: Seal syncs what it appends; after it Append and Seal
// fail with ErrClosed while Sync and Close work. A legacy Writer has no
// seal: Seal fails, and the Writer goes on as if it had not been called.
func TestWriterSeal(t *testing.T) {
	f := &memFile{}
	w := NewRecyclableWriter(f, 9)
	if _, err := w.Append([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := w.Seal(); err != nil || f.syncs != 1 || w.Size() != int64(len(f.data)) || len(f.data) != 2*headerSize+1 {
		t.Fatalf("Seal: %v, %d syncs, Size %d, %d bytes", err, f.syncs, w.Size(), len(f.data))
	}
	if _, err := w.Append([]byte("y")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Seal: %v, want ErrClosed", err)
	}
	if err := w.Seal(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Seal after Seal: %v, want ErrClosed", err)
	}
	if err := w.Sync(); err != nil {
		t.Fatalf("Sync after Seal: %v", err)
	}
	if err := w.Close(); err != nil || !f.closed {
		t.Fatalf("Close after Seal: %v", err)
	}

	lf := &memFile{}
	lw := NewWriter(lf)
	if err := lw.Seal(); err == nil || errors.Is(err, ErrClosed) {
		t.Fatalf("Seal of a legacy log: %v, want an error other than ErrClosed", err)
	}
	if _, err := lw.Append([]byte("hi")); err != nil || lf.syncs != 0 {
		t.Fatalf("Append after a refused Seal: %v, %d syncs", err, lf.syncs)
	}
	if want, _ := logOf(t, [][]byte{[]byte("hi")}); !bytes.Equal(lf.data, want) {
		t.Fatalf("refused Seal changed the log: % x", lf.data)
	}
}

// TestKindsDoNotMix: the readers of legacy logs (the manifest's synced one
// included) know types 1-4 only. A recyclable log is damage to them from
// its first byte: NewReader sees a torn tail of the whole log, nothing
// verifying after it as a legacy fragment; NewSyncedReader, corruption.
func TestKindsDoNotMix(t *testing.T) {
	log, _ := writeLog(t, NewRecyclableWriter(&memFile{}, 4), [][]byte{[]byte("a"), []byte("b")}, true)
	if res := readAll(t, log); len(res.records) != 0 || res.err != io.EOF || res.dropped != int64(len(log)) {
		t.Fatalf("NewReader: %d records, %v, dropped %d; want none, a torn tail of %d", len(res.records), res.err, res.dropped, len(log))
	}
	res := readLog(t, NewSyncedReader(bytes.NewReader(log), "MANIFEST-000004"), log)
	var ce *CorruptionError
	if len(res.records) != 0 || !errors.As(res.err, &ce) || ce.Offset != 0 || !strings.Contains(ce.Reason, "recyclable log in a legacy one") {
		t.Fatalf("NewSyncedReader: %d records, %v; want corruption at 0", len(res.records), res.err)
	}
}
