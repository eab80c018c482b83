package compaction

import (
	"fmt"
	"slices"
	"testing"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/manifest"
)

func table(num uint64, lo, hi string, size uint64) *manifest.FileMetadata {
	return &manifest.FileMetadata{
		FileNum: num, Size: size,
		Smallest: base.MakeInternalKey([]byte(lo), 1, base.KindSet),
		Largest:  base.MakeInternalKey([]byte(hi), 1, base.KindSet),
	}
}

// TestTargetsAreDynamic: the last level's size sets the base level, whose
// target is LBaseMaxBytes, and the levels between grow by one ratio.
func TestTargetsAreDynamic(t *testing.T) {
	o := Options{L0Threshold: 4, LBaseMaxBytes: 64, Multiplier: 10}
	for _, tc := range []struct {
		lastSize uint64
		base     int
		targets  string
	}{
		{0, 6, "[0 0 0 0 0 0 1]"},
		{50, 6, "[0 0 0 0 0 0 50]"},
		{640, 5, "[0 0 0 0 0 64 640]"},
		{6500, 3, "[0 0 0 64 298 1393 6500]"},
		// A DB too large for six levels at Multiplier 10: L1 is the base,
		// and the ratio between levels grows instead.
		{64_000_000_000, 1, "[0 64 4038 254788 16076073 1014331643 64000000000]"},
	} {
		var v manifest.Version
		if tc.lastSize > 0 {
			v.Levels[6] = []*manifest.FileMetadata{table(1, "a", "z", tc.lastSize)}
		}
		targets, b := o.Targets(&v)
		if b != tc.base || fmt.Sprint(targets) != tc.targets {
			t.Errorf("last level %d bytes: base L%d, targets %v; want L%d, %s", tc.lastSize, b, targets, tc.base, tc.targets)
		}
	}
}

// TestPickL0IntoBaseLevel: L0 compacts into the base level, with the
// tables there that overlap it; a level above the base holding data is due
// first.
func TestPickL0IntoBaseLevel(t *testing.T) {
	o := Options{L0Threshold: 2, LBaseMaxBytes: 64, Multiplier: 10}
	noPointer := func(int) base.InternalKey { return base.InternalKey{} }
	var v manifest.Version
	v.Levels[0] = []*manifest.FileMetadata{table(5, "c", "f", 40), table(4, "a", "d", 40)}
	v.Levels[5] = []*manifest.FileMetadata{table(2, "a", "b", 30), table(3, "e", "g", 30), table(6, "x", "y", 1)}
	v.Levels[6] = []*manifest.FileMetadata{table(1, "a", "z", 640)}
	c := Pick(&v, o, noPointer, nil)
	if c == nil || c.Level != 0 || c.OutputLevel != 5 || len(c.Inputs[0]) != 2 || len(c.Inputs[1]) != 2 {
		t.Fatalf("picked %v, want L0→L5 with the 2 overlapping L5 tables", c)
	}
	// A table left in L2 (above the base level) holds data older than L0's
	// and newer than L5's: L0 must compact into L2, not below it.
	v.Levels[2] = []*manifest.FileMetadata{table(7, "m", "n", 1)}
	if l := l0OutputLevel(&v, o); l != 2 {
		t.Fatalf("L0 would compact into L%d, below the older data in L2", l)
	}
	// The stray table itself is due first, and moves down.
	v.Levels[0] = nil
	if c := Pick(&v, o, noPointer, nil); c == nil || c.Level != 2 || !c.Trivial() {
		t.Fatalf("picked %v, want the stray L2 table moved down", c)
	}
}

// TestBoundsWithTheEmptyKey: the empty key, stored as nil, is a bound like
// any other; taking it for "no bound yet" narrowed a compaction's range
// and left out an overlapping output table (found by FuzzDB).
func TestBoundsWithTheEmptyKey(t *testing.T) {
	empty := &manifest.FileMetadata{FileNum: 1,
		Smallest: base.MakeInternalKey(nil, 3, base.KindSet), Largest: base.MakeInternalKey(nil, 3, base.KindSet)}
	c := &Compaction{Inputs: [2][]*manifest.FileMetadata{{empty, table(2, "b", "k", 10)}, {table(3, "c", "d", 10)}}}
	if lo, hi := c.Bounds(); len(lo) != 0 || string(hi) != "k" {
		t.Fatalf("Bounds = %q, %q; want \"\", \"k\"", lo, hi)
	}
	c = &Compaction{Inputs: [2][]*manifest.FileMetadata{{table(2, "b", "k", 10), empty}}}
	if lo, hi := c.Bounds(); len(lo) != 0 || string(hi) != "k" {
		t.Fatalf("Bounds with the empty-key table last = %q, %q; want \"\", \"k\"", lo, hi)
	}
}

// TestPickMinOverlap: of a level's tables, the one overlapping the fewest
// bytes below per byte of its own moves down; among tables that overlap
// nothing below, the first after the compaction pointer.
func TestPickMinOverlap(t *testing.T) {
	o := Options{L0Threshold: 4, LBaseMaxBytes: 64, Multiplier: 10}
	var v manifest.Version
	v.Levels[5] = []*manifest.FileMetadata{table(1, "a", "c", 40), table(2, "d", "f", 40), table(3, "g", "i", 40)}
	v.Levels[6] = []*manifest.FileMetadata{table(4, "a", "b", 300), table(5, "e", "e", 10), table(6, "h", "h", 300)}
	c := Pick(&v, o, func(int) base.InternalKey { return base.InternalKey{} }, nil)
	if c == nil || c.Level != 5 || c.Inputs[0][0].FileNum != 2 || len(c.Inputs[1]) != 1 || c.Inputs[1][0].FileNum != 5 {
		t.Fatalf("picked %v, want table 2 (10 bytes below it, against 300)", c)
	}
	v.Levels[6] = []*manifest.FileMetadata{table(4, "x", "z", 600)}
	after2 := func(int) base.InternalKey { return v.Levels[5][1].Largest }
	if c := Pick(&v, o, after2, nil); c == nil || c.Inputs[0][0].FileNum != 3 {
		t.Fatalf("with nothing below and the pointer after table 2, picked %v; want table 3", c)
	}
	after3 := func(int) base.InternalKey { return v.Levels[5][2].Largest }
	if c := Pick(&v, o, after3, nil); c == nil || c.Inputs[0][0].FileNum != 1 {
		t.Fatalf("with the pointer past the last table, picked %v; want table 1 (wrapped)", c)
	}
}

// TestConcurrentPicksDisjoint: compactions picked one after another, each
// beside those already running, never share an input table and never
// write overlapping ranges into the same level, and a level's running
// compactions take just enough out of it to bring it within its target.
func TestConcurrentPicksDisjoint(t *testing.T) {
	o := Options{L0Threshold: 2, LBaseMaxBytes: 80, Multiplier: 10}
	noPointer := func(int) base.InternalKey { return base.InternalKey{} }
	var v manifest.Version
	v.Levels[0] = []*manifest.FileMetadata{table(20, "a", "z", 10), table(21, "a", "z", 10)}
	for i := range 8 {
		lo := string(rune('a' + 3*i))
		v.Levels[5] = append(v.Levels[5], table(uint64(i+1), lo, lo+"z", 30))
		v.Levels[6] = append(v.Levels[6], table(uint64(i+10), lo, lo+"z", 100))
	}
	pickAll := func() []*Compaction {
		var running []*Compaction
		for c := Pick(&v, o, noPointer, nil); c != nil; c = Pick(&v, o, noPointer, running) {
			for _, p := range running {
				for _, files := range c.Inputs {
					if slices.ContainsFunc(files, p.Holds) {
						t.Fatalf("%v and %v share an input", c, p)
					}
				}
				plo, phi := p.Bounds()
				lo, hi := c.Bounds()
				if p.OutputLevel == c.OutputLevel && string(lo) <= string(phi) && string(plo) <= string(hi) {
					t.Fatalf("%v and %v write overlapping ranges into L%d", c, p, c.OutputLevel)
				}
			}
			running = append(running, c)
			if len(running) > 20 {
				t.Fatal("picking does not end")
			}
		}
		return running
	}
	// L5 (240 bytes against a target of 80) is more urgent than L0 (score
	// 1), and the L0 compaction needs every L5 table (its tables span the
	// key space): it waits while any is held.
	for _, c := range pickAll() {
		if c.Level == 0 {
			t.Fatalf("picked %v beside compactions holding L5 tables", c)
		}
	}
	v.Levels[0] = nil
	var moved uint64
	running := pickAll()
	for _, c := range running {
		if c.Level != 5 || len(c.Inputs[0]) != 1 {
			t.Fatalf("picked %v, want single L5 tables", c)
		}
		moved += c.Inputs[0][0].Size
	}
	if left := v.LevelSize(5) - moved; left > 80 || left+30 <= 80 {
		t.Fatalf("%d compactions leave %d bytes in L5; want just enough moved to be within its 80-byte target", len(running), left)
	}
}

// TestL0WaitsForEnoughToMerge: L0 at its threshold is not due while it
// holds less than half the bytes of the level it compacts into (every
// byte of which the compaction would rewrite), until it reaches
// L0MaxTables.
func TestL0WaitsForEnoughToMerge(t *testing.T) {
	o := Options{L0Threshold: 2, L0MaxTables: 4, LBaseMaxBytes: 64, Multiplier: 10}
	noPointer := func(int) base.InternalKey { return base.InternalKey{} }
	var v manifest.Version
	v.Levels[6] = []*manifest.FileMetadata{table(1, "a", "z", 60)}
	for n := range 4 {
		v.Levels[0] = append([]*manifest.FileMetadata{table(uint64(10+n), "a", "z", 5)}, v.Levels[0]...)
		c := Pick(&v, o, noPointer, nil)
		switch due := n+1 == 4; {
		case due && (c == nil || c.Level != 0):
			t.Fatalf("%d L0 tables of 5 bytes over 60: picked %v, want L0 (L0MaxTables)", n+1, c)
		case !due && c != nil:
			t.Fatalf("%d L0 tables of 5 bytes over 60: picked %v, want nothing yet", n+1, c)
		}
	}
	// Enough bytes make the threshold count again.
	v.Levels[0] = []*manifest.FileMetadata{table(20, "a", "z", 15), table(21, "a", "z", 15)}
	if c := Pick(&v, o, noPointer, nil); c == nil || c.Level != 0 {
		t.Fatalf("2 L0 tables of 15 bytes over 60: picked %v, want L0", c)
	}
}

// TestL0CompactionsShareTheirOutputLevel: while an L0 compaction writes
// into L4, the base level then, a second one of newer L0 tables must not
// go to L5, where the base level has moved since: L4 would then hold the
// older versions above the newer ones, and reads would return them.
func TestL0CompactionsShareTheirOutputLevel(t *testing.T) {
	o := Options{L0Threshold: 1, LBaseMaxBytes: 64, Multiplier: 10}
	noPointer := func(int) base.InternalKey { return base.InternalKey{} }
	var v manifest.Version
	older := table(10, "a", "c", 10)
	v.Levels[0] = []*manifest.FileMetadata{table(11, "b", "d", 10), older}
	v.Levels[6] = []*manifest.FileMetadata{table(1, "a", "z", 640)}
	running := []*Compaction{{Level: 0, OutputLevel: 4, Inputs: [2][]*manifest.FileMetadata{{older}}}}
	if l0OutputLevel(&v, o) != 5 {
		t.Fatalf("base level L%d, want L5 for this test", l0OutputLevel(&v, o))
	}
	if c := Pick(&v, o, noPointer, running); c != nil && c.Level == 0 {
		t.Fatalf("picked %v beside an L0 compaction into L4", c)
	}
}

// TestIntraL0 checks when L0 merges into itself: only beside a compaction
// of L0 into the base level, which holds the older tables; only the newest
// free tables, stopping before one larger than all the newer ones; one at
// a time; and never with a compaction of L0 into the base level starting
// beside it, which would move newer data below older.
func TestIntraL0(t *testing.T) {
	o := Options{L0Threshold: 2, L0MaxTables: 4, IntraL0MinTables: 3, LBaseMaxBytes: 64, Multiplier: 10}
	noPointer := func(int) base.InternalKey { return base.InternalKey{} }
	var v manifest.Version
	// Newest first: three small flushes, an earlier merge's output, then
	// the two tables an L0 compaction into L5 holds.
	v.Levels[0] = []*manifest.FileMetadata{
		table(20, "a", "z", 10), table(19, "a", "z", 10), table(18, "a", "z", 10),
		table(17, "a", "z", 40), table(11, "a", "z", 10), table(10, "a", "z", 10)}
	v.Levels[5] = []*manifest.FileMetadata{table(2, "a", "z", 50)}
	v.Levels[6] = []*manifest.FileMetadata{table(1, "a", "z", 640)}
	intoBase := &Compaction{Level: 0, OutputLevel: 5,
		Inputs: [2][]*manifest.FileMetadata{v.Levels[0][4:], v.Levels[5]}}

	if c := pickIntraL0(&v, o, nil); c != nil {
		t.Fatalf("with nothing running: picked %v; L0 can go down instead", c)
	}
	c := Pick(&v, o, noPointer, []*Compaction{intoBase})
	if c == nil || !c.IntraL0() || c.Kind() != KindIntraL0 {
		t.Fatalf("beside %v: picked %v, want an intra-L0 merge", intoBase, c)
	}
	if got := fileNums(c.Inputs[0]); !slices.Equal(got, []uint64{20, 19, 18}) || len(c.Inputs[1]) != 0 {
		t.Fatalf("intra-L0 inputs %v+%d, want [20 19 18]: table 17 is larger than the three newer together", got, len(c.Inputs[1]))
	}
	v.Levels[0][3].Size = 30 // now no larger than the newer ones: merged again
	if got := fileNums(pickIntraL0(&v, o, []*Compaction{intoBase}).Inputs[0]); !slices.Equal(got, []uint64{20, 19, 18, 17}) {
		t.Fatalf("intra-L0 inputs %v, want [20 19 18 17]", got)
	}
	if c := pickIntraL0(&v, o, []*Compaction{intoBase, c}); c != nil {
		t.Fatalf("beside another intra-L0 merge: picked %v", c)
	}
	if c := pickL0(&v, o, []*Compaction{c}); c != nil {
		t.Fatalf("beside an intra-L0 merge: picked %v into the base level", c)
	}
	few := o
	few.IntraL0MinTables = 5
	if c := pickIntraL0(&v, few, []*Compaction{intoBase}); c != nil {
		t.Fatalf("with IntraL0MinTables 5: picked %v of 4 free tables", c)
	}
}

func fileNums(files []*manifest.FileMetadata) []uint64 {
	var nums []uint64
	for _, f := range files {
		nums = append(nums, f.FileNum)
	}
	return nums
}

// TestSmallL0TableCountsByItsSize: a table far smaller than the L0 tables
// beside it (a Flush cut short) does not make L0 due on its own, as a full
// one does; tables all small count one each.
func TestSmallL0TableCountsByItsSize(t *testing.T) {
	o := Options{L0Threshold: 4, L0MaxTables: 18, LBaseMaxBytes: 64, Multiplier: 10}
	var v manifest.Version
	v.Levels[5] = []*manifest.FileMetadata{table(1, "a", "z", 600)}
	v.Levels[6] = []*manifest.FileMetadata{table(2, "a", "z", 6000)}
	v.Levels[0] = []*manifest.FileMetadata{table(13, "a", "z", 5), table(12, "a", "z", 100), table(11, "a", "z", 100), table(10, "a", "z", 100)}
	if s := o.Score(&v, 0, nil); s >= 1 {
		t.Fatalf("three full L0 tables and a 5-byte one: score %.2f, want below 1", s)
	}
	v.Levels[0][0].Size = 100
	if s := o.Score(&v, 0, nil); s < 1 {
		t.Fatalf("four full L0 tables: score %.2f, want at least 1", s)
	}
	for _, f := range v.Levels[0] {
		f.Size = 3
	}
	v.Levels[5][0].Size = 6 // so L0 holds half the base level's bytes
	if s := o.Score(&v, 0, nil); s < 1 {
		t.Fatalf("four small L0 tables alike: score %.2f, want at least 1", s)
	}
}
