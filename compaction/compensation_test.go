package compaction

import (
	"fmt"
	"testing"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/keyspan"
	"github.com/monbandb/monban/internal/manifest"
)

// withRangeDels returns f holding tombstones, each [start, end) at seq
// 9, 8, ... in turn.
func withRangeDels(f *manifest.FileMetadata, bounds ...string) *manifest.FileMetadata {
	var ts []keyspan.Tombstone
	for i := 0; i+1 < len(bounds); i += 2 {
		ts = append(ts, keyspan.Tombstone{Start: []byte(bounds[i]), End: []byte(bounds[i+1]), Seq: base.SeqNum(9 - i/2)})
	}
	f.SetRangeDels(keyspan.Fragment(ts))
	return f
}

// tenthOfSize is a PartialBytes that answers a tenth of the table, and
// logs what it was asked.
func tenthOfSize(asked *[]string) PartialBytes {
	return func(f *manifest.FileMetadata, lo, hi []byte) uint64 {
		*asked = append(*asked, fmt.Sprintf("%d[%s,%s)", f.FileNum, lo, hi))
		return f.Size / 10
	}
}

// TestRangeDelBytesCountsWhatLiesBelow: a table's spans count the whole
// size of the tables below that they cover, what PartialBytes says of
// those they cut, and nothing of tables beside or above the table's own
// level, or that start where a span ends.
func TestRangeDelBytesCountsWhatLiesBelow(t *testing.T) {
	var v manifest.Version
	// The spans [c, g) and [m, p) at L3; [e, g) abuts [c, e) at another
	// seq, so [c, g) is one run.
	tomb := withRangeDels(table(10, "c", "o", 1), "c", "e", "e", "g", "m", "p")
	v.Levels[1] = []*manifest.FileMetadata{table(1, "a", "z", 1000)}      // above: no
	v.Levels[3] = []*manifest.FileMetadata{tomb, table(2, "q", "r", 500)} // its own level: no
	v.Levels[4] = []*manifest.FileMetadata{table(3, "d", "f", 70)}        // inside [c, g) across the fragments: all
	v.Levels[5] = []*manifest.FileMetadata{table(4, "a", "d", 200), table(5, "g", "h", 300), table(6, "n", "o", 40)}
	v.Levels[6] = []*manifest.FileMetadata{table(7, "b", "l", 900), table(8, "m", "q", 600)}
	var asked []string
	got := RangeDelBytes(&v, 3, mustSpans(t, tomb), tenthOfSize(&asked))
	// 70 (3) + 20 (4, cut) + 40 (6) + 90 (7, cut) + 60 (8, cut); table 5
	// starts at g, where [c, g) ends.
	if want := uint64(70 + 20 + 40 + 90 + 60); got != want {
		t.Errorf("RangeDelBytes = %d, want %d (partial asked %v)", got, want, asked)
	}
	if want := "[4[c,g) 7[c,g) 8[m,p)]"; fmt.Sprint(asked) != want {
		t.Errorf("partial asked %v, want %s", asked, want)
	}

	// EstimateRangeDels records it once, and leaves tables without
	// tombstones at 0.
	v.Levels[3][1].SetRangeDels(keyspan.Spans{})
	asked = nil
	EstimateRangeDels(&v, tenthOfSize(&asked))
	EstimateRangeDels(&v, tenthOfSize(&asked))
	if tomb.RangeDelBytes() != got || v.Levels[3][1].RangeDelBytes() != 0 || len(asked) != 3 {
		t.Errorf("estimated %d and %d, partial asked %v; want %d and 0, three questions", tomb.RangeDelBytes(), v.Levels[3][1].RangeDelBytes(), asked, got)
	}
	if tomb.CompensatedSize() != 1+got {
		t.Errorf("CompensatedSize %d, want 1 + %d", tomb.CompensatedSize(), got)
	}
}

func mustSpans(t *testing.T, f *manifest.FileMetadata) keyspan.Spans {
	s, ok := f.RangeDels()
	if !ok {
		t.Fatalf("table %d: range tombstones unknown", f.FileNum)
	}
	return s
}

// TestCompensationMakesALevelDue: a small L5 table whose range tombstone
// covers most of L6 makes L5 due, though its bytes are far under the
// target, and is the table picked, though another overlaps less of L6;
// in L0, one such table makes L0 due alone.
func TestCompensationMakesALevelDue(t *testing.T) {
	o := Options{L0Threshold: 4, LBaseMaxBytes: 64, Multiplier: 10}
	noPointer := func(int) base.InternalKey { return base.InternalKey{} }
	none := func(*manifest.FileMetadata, []byte, []byte) uint64 { return 0 }
	var v manifest.Version
	// Targets as in TestTargetsAreDynamic: L5's is 1393.
	v.Levels[5] = []*manifest.FileMetadata{table(1, "a", "c", 100), table(2, "d", "m", 100), table(3, "n", "z", 100)}
	v.Levels[6] = []*manifest.FileMetadata{table(4, "a", "b", 500), table(5, "d", "l", 5000), table(6, "o", "p", 1000)}
	if s := o.Score(&v, 5, nil); s >= 1 {
		t.Fatalf("L5 scores %.2f before any tombstone", s)
	}
	withRangeDels(v.Levels[5][1], "d", "m")
	EstimateRangeDels(&v, none)
	if s := o.Score(&v, 5, nil); s < 1 {
		t.Fatalf("L5 scores %.2f with table 2 deleting L6's 5000 bytes", s)
	}
	// Table 2 overlaps 5000 bytes of L6 against table 1's 500, but
	// deletes them.
	c := Pick(&v, o, noPointer, nil)
	if c == nil || c.Level != 5 || c.Inputs[0][0].FileNum != 2 {
		t.Fatalf("picked %v, want table 2 of L5", c)
	}

	v.Levels[5] = nil
	v.Levels[0] = []*manifest.FileMetadata{withRangeDels(table(7, "a", "z", 1), "a", "z")}
	EstimateRangeDels(&v, none)
	if c := Pick(&v, o, noPointer, nil); c == nil || c.Level != 0 || c.Score < 1 {
		t.Fatalf("picked %v, want L0 due for one table deleting all of L6", c)
	}
}
