package compaction

import (
	"testing"

	"github.com/monbandb/monban/internal/manifest"
)

// TestPickRest: at rest, two or more L0 tables of point entries go, all
// of them, into the base level with the tables there they overlap; one
// table stays, beside any number of tables of range tombstones only, and
// nothing starts beside a running compaction.
func TestPickRest(t *testing.T) {
	o := Options{L0Threshold: 4, LBaseMaxBytes: 64, Multiplier: 10}
	var v manifest.Version
	points := func(f *manifest.FileMetadata) *manifest.FileMetadata {
		f.NumEntries = 10
		return f
	}
	v.Levels[0] = []*manifest.FileMetadata{table(6, "b", "y", 1), points(table(5, "c", "f", 4))}
	v.Levels[6] = []*manifest.FileMetadata{table(1, "a", "b", 30), table(2, "e", "z", 30)}
	if c := PickRest(&v, o, nil); c != nil {
		t.Fatalf("one L0 table of points, one of range tombstones: picked %v, want none", c)
	}
	v.Levels[0] = append(v.Levels[0], points(table(4, "a", "d", 4)))
	if s := o.Score(&v, 0, nil); s >= 1 {
		t.Fatalf("L0 score %.2f: the example must not be due", s)
	}
	c := PickRest(&v, o, nil)
	if c == nil || c.Kind() != KindRest || c.Level != 0 || c.OutputLevel != 6 || len(c.Inputs[0]) != 3 || len(c.Inputs[1]) != 2 {
		t.Fatalf("two L0 tables of points: picked %v, want L0→L6 rest with all three and the 2 L6 tables", c)
	}
	running := Rewrite(6, v.Levels[6][0])
	if c := PickRest(&v, o, []*Compaction{running}); c != nil {
		t.Fatalf("beside %v: picked %v, want none", running, c)
	}
}
