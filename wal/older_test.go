package wal

import (
	"bytes"
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
	}
	if _, ok, _ := OlderLog(bytes.NewReader(older), 7); ok {
		t.Error("log 7's bytes named as older than log 7")
	}
}
