package compaction

import (
	"fmt"
	"testing"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/keyspan"
	"github.com/monbandb/monban/internal/manifest"
)

// seqs sets f's sequence numbers.
func seqs(f *manifest.FileMetadata, smallest, largest base.SeqNum) *manifest.FileMetadata {
	f.SmallestSeq, f.LargestSeq = smallest, largest
	return f
}

// tombs gives f the tombstones [start, end)#seq, as triples, and no
// other; its seqs span theirs.
func tombs(f *manifest.FileMetadata, ts ...any) *manifest.FileMetadata {
	var all []keyspan.Tombstone
	for i := 0; i+2 < len(ts); i += 3 {
		seq := base.SeqNum(ts[i+2].(int))
		all = append(all, keyspan.Tombstone{Start: []byte(ts[i].(string)), End: []byte(ts[i+1].(string)), Seq: seq})
		if f.LargestSeq == 0 || seq > f.LargestSeq {
			f.LargestSeq = seq
		}
		if f.SmallestSeq == 0 || seq < f.SmallestSeq {
			f.SmallestSeq = seq
		}
	}
	f.SetRangeDels(keyspan.Fragment(all))
	return f
}

func noSnapshots() []base.SeqNum { return nil }

func snapshotsAt(s ...base.SeqNum) func() []base.SeqNum {
	return func() []base.SeqNum { return s }
}

func nums(files []*manifest.FileMetadata) string { return fmt.Sprint(fileNums(files)) }

// TestPickDeleteOnly holds each soundness condition of a delete-only
// compaction to an example: a tombstone [b, p)#100 in L0 over L6 tables
// that it covers wholly or in part, older or newer than it.
func TestPickDeleteOnly(t *testing.T) {
	build := func() *manifest.Version {
		var v manifest.Version
		v.Levels[0] = []*manifest.FileMetadata{tombs(table(20, "b", "p", 1), "b", "p", 100)}
		v.Levels[6] = []*manifest.FileMetadata{
			seqs(table(1, "a", "c", 10), 1, 10),  // cut by the tombstone's start: stays
			seqs(table(2, "d", "f", 10), 11, 20), // covered, older: goes
			seqs(table(3, "g", "h", 10), 21, 99), // covered, its newest key just below: goes
			seqs(table(4, "i", "j", 10), 5, 100), // a key at the tombstone's seq: impossible, but not older: stays
			seqs(table(5, "k", "m", 10), 5, 150), // a key newer than the tombstone: stays
			seqs(table(6, "n", "p", 10), 30, 40), // p is the tombstone's end, not covered: stays
		}
		return &v
	}
	v := build()
	c, waiting := PickDeleteOnly(v, noSnapshots, nil)
	if c == nil || c.Kind() != KindDeleteOnly || c.Level != 6 || c.OutputLevel != 6 || nums(c.Inputs[0]) != "[2 3]" || len(c.Inputs[1]) != 0 || waiting != (Waiting{}) {
		t.Fatalf("picked %v (inputs %v), waiting %v; want a delete-only of L6's tables [2 3]", c, c.Inputs, waiting)
	}

	// Snapshots: one between a table's oldest key and the tombstone sees
	// the table's keys, so it stays; one below the table or at or above
	// the tombstone does not. Waiting bounds the snapshots whose Close
	// may let a table go: from the kept tables' oldest keys to the
	// tombstone.
	for _, tc := range []struct {
		snaps []base.SeqNum
		want  string
		wait  Waiting
	}{
		{[]base.SeqNum{11}, "[3]", Waiting{11, 100}},    // 11 reads table 2's oldest key
		{[]base.SeqNum{10, 99}, "[]", Waiting{11, 100}}, // 99 reads both
		{[]base.SeqNum{5, 100}, "[2 3]", Waiting{}},     // 100 sees the tombstone
		{[]base.SeqNum{20}, "[3]", Waiting{11, 100}},    // sees all of 2, none of 3
	} {
		c, waiting := PickDeleteOnly(build(), snapshotsAt(tc.snaps...), nil)
		got := "[]"
		if c != nil {
			got = nums(c.Inputs[0])
		}
		if got != tc.want || waiting != tc.wait {
			t.Errorf("snapshots %v: dropped %s, waiting %v; want %s, %v", tc.snaps, got, waiting, tc.want, tc.wait)
		}
		for _, s := range tc.snaps {
			if blocks := s >= 11 && s < 100; waiting.Holds(s) != blocks {
				t.Errorf("snapshots %v: Holds(%d) = %v, want %v", tc.snaps, s, waiting.Holds(s), blocks)
			}
		}
	}

	// A table held by a running compaction is not taken.
	v = build()
	running := Rewrite(6, v.Levels[6][1])
	if c, _ := PickDeleteOnly(v, noSnapshots, []*Compaction{running}); c == nil || nums(c.Inputs[0]) != "[3]" {
		t.Errorf("beside %v: picked %v, want table 3 alone", running, c)
	}
}

// TestPickDeleteOnlyLevels: a tombstone deletes only what every read meets
// after it — tables of lower levels, and older L0 tables — never a table
// above it, however old; and fragments cut at two tables' boundary cover
// a table below that spans it, while a gap between spans does not.
func TestPickDeleteOnlyLevels(t *testing.T) {
	var v manifest.Version
	// The tombstone in L3, split at "m\x00" between two tables as a
	// compaction cuts it.
	v.Levels[3] = []*manifest.FileMetadata{
		tombs(table(30, "a", "m", 1), "a", "m\x00", 100),
		tombs(table(31, "m\x00", "z", 1), "m\x00", "z", 100),
	}
	v.Levels[1] = []*manifest.FileMetadata{seqs(table(1, "c", "d", 10), 1, 2)} // above: stays
	v.Levels[5] = []*manifest.FileMetadata{seqs(table(2, "k", "p", 10), 1, 2)} // across the cut: goes
	v.Levels[6] = []*manifest.FileMetadata{seqs(table(3, "b", "c", 10), 1, 2)} // below: goes
	c, _ := PickDeleteOnly(&v, noSnapshots, nil)
	if c == nil || c.Level != 5 || nums(c.Inputs[0]) != "[2]" {
		t.Fatalf("picked %v, want L5's table 2 first", c)
	}
	c, _ = PickDeleteOnly(&v, noSnapshots, []*Compaction{c})
	if c == nil || c.Level != 6 || nums(c.Inputs[0]) != "[3]" {
		t.Fatalf("beside L5's: picked %v, want L6's table 3", c)
	}

	// A gap between the two tables' spans leaves the keys in it uncovered.
	v.Levels[3][1] = tombs(table(31, "n", "z", 1), "n", "z", 100)
	c, _ = PickDeleteOnly(&v, noSnapshots, nil)
	if c == nil || c.Level != 6 {
		t.Fatalf("with a gap [m\\x00, n): picked %v, want L6's table 3 only", c)
	}

	// L0: a newer table's tombstone deletes an older table, not the other
	// way round.
	var l0 manifest.Version
	l0.Levels[0] = []*manifest.FileMetadata{
		seqs(table(12, "a", "b", 10), 200, 210),
		tombs(table(11, "a", "z", 1), "a", "z", 100),
		seqs(table(10, "c", "d", 10), 50, 60),
	}
	c, _ = PickDeleteOnly(&l0, noSnapshots, nil)
	if c == nil || c.Level != 0 || c.Kind() != KindDeleteOnly || c.IntraL0() || nums(c.Inputs[0]) != "[10]" {
		t.Fatalf("L0: picked %v, want a delete-only of table 10", c)
	}
	// It keeps L0's order: no compaction of L0 into a lower level starts
	// beside it, nor it beside one; beside an intra-L0 merge it may.
	intoBase := &Compaction{Level: 0, OutputLevel: 6, Inputs: [2][]*manifest.FileMetadata{{l0.Levels[0][0]}}}
	intra := &Compaction{Level: 0, OutputLevel: 0, Inputs: [2][]*manifest.FileMetadata{{l0.Levels[0][0], l0.Levels[0][1]}}}
	if !Conflicts(c, []*Compaction{intoBase}) || !Conflicts(intoBase, []*Compaction{c}) {
		t.Errorf("an L0 delete-only and an L0 compaction into L6 may run together")
	}
	if Conflicts(c, []*Compaction{intra}) {
		t.Errorf("an L0 delete-only may not run beside an intra-L0 merge of other tables")
	}
}

// TestPickDeleteOnlyNothingToDo: no range tombstone, no snapshot asked
// for; unknown tombstones (no reader opened) lend nothing.
func TestPickDeleteOnlyNothingToDo(t *testing.T) {
	var v manifest.Version
	v.Levels[0] = []*manifest.FileMetadata{seqs(table(11, "a", "z", 1), 100, 100)} // tombstones unknown
	v.Levels[6] = []*manifest.FileMetadata{seqs(table(1, "b", "c", 10), 1, 2)}
	asked := false
	c, waiting := PickDeleteOnly(&v, func() []base.SeqNum { asked = true; return nil }, nil)
	if c != nil || waiting != (Waiting{}) || asked {
		t.Fatalf("picked %v, waiting %v, snapshots asked %v; want nothing", c, waiting, asked)
	}
}
