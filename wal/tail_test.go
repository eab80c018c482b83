package wal

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// TestTailCases names what a crash (or a bad disk) leaves behind and what
// the Reader makes of it. Three records: "a" (offset 0), 40000 bytes of 'b'
// (offset 8: a FIRST filling block 0, a LAST in block 1) and "c".
func TestTailCases(t *testing.T) {
	b := bytes.Repeat([]byte{'b'}, 40000)
	clean, offs := logOf(t, [][]byte{[]byte("a"), b, []byte("c")})
	endB := offs[2] // record "c" starts where record b's LAST ends
	size := int64(len(clean))
	zeros := func(n int) []byte { return make([]byte, n) }
	cat := func(parts ...[]byte) []byte { return bytes.Join(parts, nil) }
	flip := func(at int64) []byte { l := bytes.Clone(clean); l[at] ^= 0x10; return l }
	// "a" and a FULL record that fills block 0 exactly.
	fullBlock0, _ := logOf(t, [][]byte{[]byte("a"), make([]byte, blockSize-8-headerSize)})

	for _, tc := range []struct {
		name    string
		log     []byte
		records int    // how many records come back
		dropped int64  // for a torn tail: zeros ending the file do not count
		corrupt string // for corruption: the reason in the error
	}{
		{"clean log", clean, 3, 0, ""},
		{"empty file", nil, 0, 0, ""},
		{"header cut short", clean[:endB+3], 2, 3, ""},
		{"payload cut short", clean[:size-1], 2, size - 1 - endB, ""},
		{"FIRST without its LAST", clean[:blockSize], 1, blockSize - 8, ""},
		{"FIRST and part of LAST", clean[:blockSize+100], 1, blockSize + 100 - 8, ""},
		{"FIRST and part of LAST, then zeros", cat(clean[:blockSize+100], zeros(1000)), 1, blockSize + 100 - 8, ""},
		{"zeros after the last record", cat(clean, zeros(1000)), 3, 0, ""},
		{"zeros to the end of the block and a whole zero block", cat(clean, zeros(2*blockSize-len(clean))), 3, 0, ""},
		{"checksum mismatch in the last record", flip(size - 1), 2, size - endB, ""},
		{"checksum mismatch with a record after it", flip(4), 0, 0, "checksum mismatch"},
		{"damaged FIRST, its LAST intact in the next block", flip(100), 1, 0, "checksum mismatch"},
		{"damaged LAST, a record after it", flip(blockSize + 10), 1, 0, "checksum mismatch"},
		{"zeros where a record was, a record after", cat(clean[:8], zeros(blockSize-8), clean[blockSize:]), 1, 0, "zeroed bytes"},
		{"LAST without FIRST", cat(fullBlock0, clean[blockSize:]), 2, 0, "LAST without FIRST"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := readAll(t, tc.log)
			if len(res.records) != tc.records {
				t.Fatalf("%d records, want %d (ended with %v)", len(res.records), tc.records, res.err)
			}
			if tc.corrupt == "" {
				if res.err != io.EOF || res.dropped != tc.dropped {
					t.Fatalf("ended with %v, dropped %d; want io.EOF, dropped %d", res.err, res.dropped, tc.dropped)
				}
				return
			}
			if !errors.Is(res.err, ErrCorruption) || !strings.Contains(res.err.Error(), tc.corrupt) ||
				!strings.Contains(res.err.Error(), "test.log") {
				t.Fatalf("ended with %v; want a corruption error naming test.log: %s", res.err, tc.corrupt)
			}
		})
	}
}

// errReader returns its data, then a read error that is not corruption.
type errReader struct{ data []byte }

func (e *errReader) Read(p []byte) (int, error) {
	if len(e.data) == 0 {
		return 0, errors.New("input/output error")
	}
	n := copy(p, e.data)
	e.data = e.data[n:]
	return n, nil
}

// TestReadError: an I/O error is reported as such (not as corruption, not
// as the end of the log) with the log's name, and it is final.
func TestReadError(t *testing.T) {
	log, _ := logOf(t, [][]byte{[]byte("a"), bytes.Repeat([]byte{'b'}, 40000)})
	r := NewReader(&errReader{data: log[:blockSize]}, "000009.log")
	if rec, err := r.Next(); err != nil || string(rec) != "a" {
		t.Fatalf("first record: %q, %v", rec, err)
	}
	_, err := r.Next()
	if err == nil || err == io.EOF || errors.Is(err, ErrCorruption) || !strings.Contains(err.Error(), "000009.log") {
		t.Fatalf("Next over a failing reader: %v", err)
	}
	if _, err2 := r.Next(); err2 != err {
		t.Fatalf("error not sticky: %v then %v", err, err2)
	}
}

// TestEndsCleanly: a log ends cleanly at its last record, or in zeros to a
// window boundary (a mapped Writer's reservation); zeros to anywhere else,
// and torn bytes, do not.
func TestEndsCleanly(t *testing.T) {
	log, _ := logOf(t, [][]byte{[]byte("hi"), bytes.Repeat([]byte{'x'}, 40000)})
	zerosTo := func(n int) []byte { return append(append([]byte{}, log...), make([]byte, n-len(log))...) }
	for _, tc := range []struct {
		name string
		log  []byte
		want bool
	}{
		{"at its last record", log, true},
		{"zeros to a window boundary", zerosTo(windowSize), true},
		{"zeros to two windows", zerosTo(2 * windowSize), true},
		{"zeros short of a window boundary", zerosTo(windowSize - 1), false},
		{"zeros to a page, not a window", zerosTo(64 << 10), false},
		{"a torn record", append(append([]byte{}, log...), log[:20]...), false},
		{"a torn record, then zeros to a window boundary", append(append(append([]byte{}, log...), 1, 2, 3), make([]byte, windowSize-len(log)-3)...), false},
	} {
		r := NewReader(bytes.NewReader(tc.log), "log")
		for {
			if _, err := r.Next(); err != nil {
				if err != io.EOF {
					t.Fatalf("%s: %v", tc.name, err)
				}
				break
			}
		}
		if got := r.EndsCleanly(); got != tc.want {
			t.Errorf("%s: EndsCleanly() = %v, want %v", tc.name, got, tc.want)
		}
	}
}
