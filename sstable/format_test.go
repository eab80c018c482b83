package sstable

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/monbandb/monban/internal/base"
)

// TestFormatExample pins the worked example of docs/format.md ("SSTable").
func TestFormatExample(t *testing.T) {
	es := []entry{
		{base.MakeInternalKey([]byte("cat"), 5, base.KindSet), []byte("meow")},
		{base.MakeInternalKey([]byte("cow"), 3, base.KindDelete), nil},
	}
	data, p := buildTable(t, es, WriterOptions{TableID: 0x8a1c2b3d4e5f6071})
	unhex := func(s string) string { return strings.Join(strings.Fields(s), "") }
	for _, part := range []struct {
		off  int
		want string
	}{
		{0, `00 0b 04 63 61 74 01 05 00 00 00 00 00 00 6d 65 6f 77
		     01 0a 00 6f 77 00 03 00 00 00 00 00 00 00 00 00 00 01 00 00 00 00 5c f0 d1 ad`},
		{44, `00 0b 02 63 6f 77 00 03 00 00 00 00 00 00 00 27 00 00 00 00 01 00 00 00 00 35 07 ca f0`},
		{73, `00 0b 01 64 61 74 61 2e 62 6c 6f 63 6b 73 01`},
		{328, `00 08 0a 74 61 62 6c 65 2e 69 64 f1 c0 fd f2 d4 e7 8a 8e 8a 01`},
		{409, `0f 00 00 00 00 21 ef d4 42`},
		{418, `2c 00 00 00 00 00 00 00 18 00 00 00 00 00 00 00
		       00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
		       49 00 00 00 00 00 00 00 54 01 00 00 00 00 00 00
		       01 00 00 00 f3 2f 4f 86 4d 4f 4e 42 41 4e 53 54`},
	} {
		want := unhex(part.want)
		got := hex.EncodeToString(data[part.off:min(len(data), part.off+len(want)/2)])
		if got != want {
			t.Errorf("bytes at %d:\n got %s\nwant %s", part.off, got, want)
		}
	}
	if len(data) != 482 || p.TableID != 0x8a1c2b3d4e5f6071 || p.DataBytes != 44 || p.IndexBytes != 29 {
		t.Errorf("size %d, props %+v", len(data), p)
	}
}
