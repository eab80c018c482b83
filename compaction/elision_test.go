package compaction

import (
	"slices"
	"testing"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/manifest"
)

// TestPickElisionOnly: of the last level's tables, one holding tombstones
// (point, or range when known) is rewritten alone once every open snapshot
// is at or above its sequence numbers, its range tombstones' included, the
// one with most tombstones first; a snapshot below them makes it wait
// (Waiting says where); a table without tombstones, one in a running
// compaction, and tombstones above the last level are never picked.
func TestPickElisionOnly(t *testing.T) {
	points := func(f *manifest.FileMetadata, n uint64) *manifest.FileMetadata {
		f.NumEntries, f.NumDeletions = 10+n, n
		return f
	}
	build := func() *manifest.Version {
		var v manifest.Version
		v.Levels[5] = []*manifest.FileMetadata{points(seqs(table(10, "a", "z", 100), 1, 100), 50)}
		// A table's SmallestSeq and LargestSeq count its point entries
		// only: table 7's span, at 80, is newer than all of them.
		spanAbove := seqs(tombs(points(table(7, "m", "n", 10), 9), "m", "n", 80), 61, 62)
		v.Levels[6] = []*manifest.FileMetadata{
			seqs(table(1, "a", "b", 10), 1, 10),             // no tombstone
			points(seqs(table(2, "c", "d", 10), 11, 20), 3), // three
			tombs(table(3, "e", "f", 10), "e", "f", 30),     // one span, seq 30, no point entry
			points(seqs(table(4, "g", "h", 10), 41, 50), 7), // seven
			seqs(table(5, "i", "j", 10), 60, 70),            // spans unknown, no point tombstone
			spanAbove,                                       // nine and a span: ten
		}
		return &v
	}
	cases := []struct {
		name    string
		snaps   []base.SeqNum
		running []int // file numbers held by a running compaction
		want    uint64
		waiting Waiting
	}{
		{name: "no snapshot: most tombstones", want: 7},
		{name: "busy", running: []int{7}, want: 4},
		{name: "a snapshot below two", snaps: []base.SeqNum{45}, want: 2, waiting: Waiting{0, 80}},
		{name: "at a table's span, not below", snaps: []base.SeqNum{80}, want: 7},
		{name: "between a table's points and its span", snaps: []base.SeqNum{70}, want: 4, waiting: Waiting{0, 80}},
		{name: "below every table", snaps: []base.SeqNum{0}, want: 0, waiting: Waiting{0, 80}},
		{name: "the oldest decides", snaps: []base.SeqNum{20, 90}, want: 2, waiting: Waiting{0, 80}},
		{name: "below all", snaps: []base.SeqNum{15, 45, 29, 70}, want: 0, waiting: Waiting{0, 80}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := build()
			var running []*Compaction
			for _, num := range c.running {
				for _, f := range v.Levels[6] {
					if f.FileNum == uint64(num) {
						running = append(running, Rewrite(6, f))
					}
				}
			}
			snaps := append([]base.SeqNum(nil), c.snaps...)
			slices.Sort(snaps)
			got, waiting := PickElisionOnly(v, snapshotsAt(snaps...), running)
			var num uint64
			if got != nil {
				if got.Level != 6 || got.OutputLevel != 6 || len(got.Inputs[0]) != 1 || len(got.Inputs[1]) != 0 {
					t.Fatalf("picked %v: want one last-level table rewritten alone", got)
				}
				num = got.Inputs[0][0].FileNum
			}
			if num != c.want || waiting != c.waiting {
				t.Fatalf("picked table %d, waiting %v; want %d, %v", num, waiting, c.want, c.waiting)
			}
		})
	}
	var empty manifest.Version
	if c, w := PickElisionOnly(&empty, noSnapshots, nil); c != nil || w != (Waiting{}) {
		t.Fatalf("an empty tree: %v, %v", c, w)
	}
}
