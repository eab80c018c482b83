package raft

import (
	"bytes"
	"errors"
	"reflect"
	"testing"
	"time"

	hraft "github.com/hashicorp/raft"
	"github.com/monbandb/monban/lsm"
	"github.com/monbandb/monban/vfs"
)

// appendLog appends l's encoding in the layout before runs, the value of
// its 'l' key: what a Store of that layout wrote, and this one reads.
func appendLog(dst []byte, l *hraft.Log) []byte {
	return appendEntry(append(dst, logFormatV1), l)
}

// TestLogEncodingExample holds doc.go's worked example to the code.
func TestLogEncodingExample(t *testing.T) {
	l := hraft.Log{Index: 7, Term: 2, Type: hraft.LogCommand, Data: []byte("hi"),
		AppendedAt: time.Unix(1, 5e8)}
	got := appendLog(nil, &l)
	want := []byte{0x01, 0x02, 0x00, 0x02, 0x80, 0xca, 0xb5, 0xee, 0x01, 0x02, 'h', 'i', 0x00}
	if !bytes.Equal(got, want) {
		t.Fatalf("encoding % x, doc.go says % x", got, want)
	}
}

// TestRunEncodingExample holds doc.go's worked example of a run to what
// StoreLogs writes.
func TestRunEncodingExample(t *testing.T) {
	s := openStore(t, "db", &lsm.Options{FS: vfs.NewMem()})
	store(t, s, []*hraft.Log{
		{Index: 7, Term: 2, Type: hraft.LogCommand, Data: []byte("hi"), AppendedAt: time.Unix(1, 5e8)},
		{Index: 8, Term: 2, Type: hraft.LogNoop},
	})
	got, err := s.db.Get(runKey(8))
	want := []byte{0x02, 0x02,
		0x0c, 0x02, 0x00, 0x02, 0x80, 0xca, 0xb5, 0xee, 0x01, 0x02, 'h', 'i', 0x00,
		0x0b, 0x02, 0x01, 0xff, 0xdb, 0x8f, 0xf9, 0xce, 0x03, 0x00, 0x00, 0x00}
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("run % x, %v; doc.go says % x", got, err, want)
	}
}

func TestLogRoundTrip(t *testing.T) {
	for _, l := range []hraft.Log{
		{Index: 1},
		{Index: 1<<64 - 1, Term: 1<<64 - 1, Type: hraft.LogConfiguration, Data: []byte{0}, Extensions: []byte("ext")},
		{Index: 9, Term: 3, Type: hraft.LogBarrier, AppendedAt: time.Date(2026, 12, 3, 13, 0, 0, 999999999, time.UTC)},
		{Index: 9, AppendedAt: time.Date(1900, 1, 1, 0, 0, 0, 1, time.UTC)}, // before 1970: negative seconds
	} {
		var got hraft.Log
		if err := decodeLog(l.Index, appendLog(nil, &l), &got); err != nil {
			t.Fatalf("%+v: %v", l, err)
		}
		if !got.AppendedAt.Equal(l.AppendedAt) {
			t.Errorf("AppendedAt %v came back %v", l.AppendedAt, got.AppendedAt)
		}
		got.AppendedAt, l.AppendedAt = time.Time{}, time.Time{}
		if !reflect.DeepEqual(got, l) {
			t.Errorf("encoded %+v, decoded %+v", l, got)
		}
	}
}

// FuzzDecodeLog: whatever the bytes, decodeLog returns a corruption error
// or an entry that encodes back to the same bytes.
func FuzzDecodeLog(f *testing.F) {
	f.Add(appendLog(nil, &hraft.Log{Term: 2, Data: []byte("hi"), AppendedAt: time.Unix(1, 5e8)}))
	f.Add(appendLog(nil, &hraft.Log{Type: hraft.LogConfiguration, Extensions: []byte{1, 2}}))
	f.Add([]byte{})
	f.Add([]byte{2})
	f.Fuzz(func(t *testing.T, p []byte) {
		var l hraft.Log
		err := decodeLog(5, p, &l)
		if err != nil {
			if !errors.Is(err, lsm.ErrCorruption) {
				t.Fatalf("error %v does not wrap ErrCorruption", err)
			}
			return
		}
		// Varints have more than one encoding of a number; the canonical
		// re-encoding must decode to the same entry.
		var again hraft.Log
		if err := decodeLog(5, appendLog(nil, &l), &again); err != nil || !reflect.DeepEqual(again, l) {
			t.Fatalf("decoded %+v, re-encoded and decoded %+v, %v", l, again, err)
		}
	})
}
