package lsm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestDeleteRangeSpaceComesBack: a DeleteRange of nine keys in ten of a
// DB spread over several levels, then a Flush, and nothing else: the
// background compactions, weighing the tombstone by what it covers below
// (compaction.RangeDelBytes), push it to the bottom and the tables give
// back at least three quarters of the bytes the deleted keys held —
// without Compact, which would hide whether the picker does it.
func TestDeleteRangeSpaceComesBack(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	d := openMem(t, vfs.NewMem(), &Options{MemtableSize: 32 << 10, TargetFileSize: 16 << 10, LBaseMaxBytes: 64 << 10, BlockSize: 1024})
	defer d.Close()
	const n = 20000
	want := model{}
	for _, i := range rng.Perm(n) {
		k, v := fmt.Sprintf("k%05d", i), randValue(rng, 100)
		if err := d.Put([]byte(k), []byte(v)); err != nil {
			t.Fatal(err)
		}
		want[k] = v
	}
	settleL0(t, d)
	s := d.Stats()
	var levels []int
	for i, l := range s.Levels {
		if l.Files > 0 {
			levels = append(levels, i)
		}
	}
	if len(levels) < 3 {
		t.Fatalf("the fill left tables in levels %v, want several:\n%v", levels, s)
	}
	t.Logf("the fill left tables in levels %v", levels)
	before := s.Total.Bytes

	// Keys k01000..k18999: nine in ten.
	if err := d.DeleteRange([]byte("k01000"), []byte("k19000")); err != nil {
		t.Fatal(err)
	}
	want.deleteRange([]byte("k01000"), []byte("k19000"))
	settleL0(t, d)
	s = d.Stats()
	deleted := before * 9 / 10
	t.Logf("%d table bytes before the DeleteRange, %d after: %d reclaimed of the %d the deleted keys held\n%v",
		before, s.Total.Bytes, int64(before)-int64(s.Total.Bytes), deleted, s)
	if s.Total.Bytes > before || before-s.Total.Bytes < deleted*3/4 {
		t.Errorf("the tables hold %d bytes, %d before the DeleteRange of 90%% of the keys: want at least %d reclaimed",
			s.Total.Bytes, before, deleted*3/4)
	}
	for _, k := range []string{"k00000", "k00999", "k01000", "k10000", "k18999", "k19000", "k19999"} {
		if v, ok := want[k]; ok {
			mustGet(t, d, k, v)
		} else if _, err := d.Get([]byte(k)); err == nil {
			t.Errorf("Get(%q) found a deleted key", k)
		}
	}
}

// randValue returns n random letters, which compression does not shrink
// much.
func randValue(rng *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + rng.IntN(26))
	}
	return string(b)
}

// TestStatsCountRangeDels: a flushed DeleteRange over half of a compacted
// DB, too little to make L0 due at the default LBaseMaxBytes, stays in L0,
// and Stats shows its span and about half the last level's bytes as what
// it covers.
func TestStatsCountRangeDels(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{BlockSize: 512})
	defer d.Close()
	rng := rand.New(rand.NewPCG(1, 0))
	for i := range 2000 {
		if err := d.Put(fmt.Appendf(nil, "k%05d", i), []byte(randValue(rng, 100))); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	if err := d.DeleteRange([]byte("k00500"), []byte("k01500")); err != nil {
		t.Fatal(err)
	}
	settleL0(t, d)
	s := d.Stats()
	l0, last := s.Levels[0], s.Levels[NumLevels-1].Bytes
	if l0.RangeDels != 1 || s.Total.RangeDels != 1 || l0.RangeDelBytes < last*2/5 || l0.RangeDelBytes > last*3/5 || s.Total.RangeDelBytes != l0.RangeDelBytes {
		t.Errorf("L0 counts %d spans covering %d bytes (total %d, %d), the last level holds %d: want 1 span over about half\n%v",
			l0.RangeDels, l0.RangeDelBytes, s.Total.RangeDels, s.Total.RangeDelBytes, last, s)
	}
}
