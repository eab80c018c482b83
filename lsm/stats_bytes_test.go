package lsm

import (
	"fmt"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestTableBytesInPerLevel: a compaction of level N into N+1 takes tables
// from both; each level's TableBytesIn counts the bytes taken from it.
// All of them were counted under N (a black-box attack of the API's docs
// found it).
func TestTableBytesInPerLevel(t *testing.T) {
	var merges []CompactionInfo
	d := openMem(t, vfs.NewMem(), &Options{EventListener: &EventListener{
		CompactionEnd: func(c CompactionInfo) {
			if c.Level != c.OutputLevel && len(c.Inputs) > 1 {
				merges = append(merges, c)
			}
		},
	}})
	defer d.Close()
	for i := range 100 {
		if err := d.Put(fmt.Appendf(nil, "k%03d", i), []byte("old-value-old-value")); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(); err != nil { // one table, in the last level
		t.Fatal(err)
	}
	for i := 0; i < 100; i += 2 {
		if err := d.Put(fmt.Appendf(nil, "k%03d", i), []byte("new")); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(); err != nil { // the new table merges into the last level's
		t.Fatal(err)
	}
	want := make([]uint64, NumLevels)
	for _, m := range merges {
		for _, in := range m.Inputs {
			want[in.Level] += in.Size
		}
	}
	if len(merges) == 0 {
		t.Fatal("no compaction merged two levels")
	}
	s := d.Stats()
	for l := range NumLevels {
		if got := s.Levels[l].TableBytesIn; got != want[l] {
			t.Errorf("L%d TableBytesIn %d; the compactions took %d bytes from it", l, got, want[l])
		}
	}
}
