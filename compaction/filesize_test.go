package compaction

import (
	"math"
	"testing"

	"github.com/monbandb/monban/internal/manifest"
)

// TestFileSizeGrowsBelowTheBase: outputs into the base level, L0 and a
// level above the base are TargetFileSize; each level below the base
// multiplies it; a multiplier of 1 (or unset) keeps one size, and a huge
// target does not overflow.
func TestFileSizeGrowsBelowTheBase(t *testing.T) {
	for _, tc := range []struct {
		lastSize uint64
		target   int64
		mult     int
		want     [manifest.NumLevels]int64
	}{
		{0, 100, 2, [7]int64{100, 100, 100, 100, 100, 100, 100}},     // base L6
		{6500, 100, 2, [7]int64{100, 100, 100, 100, 200, 400, 800}},  // base L3
		{6500, 100, 3, [7]int64{100, 100, 100, 100, 300, 900, 2700}}, // base L3
		{6500, 100, 1, [7]int64{100, 100, 100, 100, 100, 100, 100}},  // one size
		{6500, 100, 0, [7]int64{100, 100, 100, 100, 100, 100, 100}},  // unset: one size
		{6500, math.MaxInt64 / 3, 2, [7]int64{math.MaxInt64 / 3, math.MaxInt64 / 3, math.MaxInt64 / 3, math.MaxInt64 / 3, math.MaxInt64 / 3 * 2, math.MaxInt64 / 3 * 2, math.MaxInt64 / 3 * 2}},
	} {
		o := Options{L0Threshold: 4, LBaseMaxBytes: 64, Multiplier: 10, TargetFileSize: tc.target, FileSizeMultiplier: tc.mult}
		var v manifest.Version
		if tc.lastSize > 0 {
			v.Levels[6] = []*manifest.FileMetadata{table(1, "a", "z", tc.lastSize)}
		}
		var got [manifest.NumLevels]int64
		for l := range got {
			got[l] = o.FileSize(&v, l)
		}
		if got != tc.want {
			t.Errorf("last level %d bytes, target %d, multiplier %d: sizes %v, want %v", tc.lastSize, tc.target, tc.mult, got, tc.want)
		}
	}
}
