package compaction

import (
	"bytes"
	"math"

	"github.com/monbandb/monban/internal/manifest"
)

// maxGrandparentOverlapFactor bounds how many target sizes of the level
// below the output (the grandparents) one output table may overlap. A
// table overlapping more would make its own later compaction rewrite that
// much (LevelDB uses the same factor of 10).
const maxGrandparentOverlapFactor = 10

// Splitter decides where a compaction cuts its output tables: at the
// target size, or earlier where the table being written has come to
// overlap too many bytes of the grandparents. Cuts fall only between user
// keys: a level's tables must not share one (manifest invariant 2).
type Splitter struct {
	target, maxOverlap int64
	grandparents       []*manifest.FileMetadata // sorted, disjoint
	next               int                      // first grandparent not yet passed
	overlap            int64                    // grandparent bytes passed by the current output
	started            bool
}

// NewSplitter returns a splitter for outputs of target bytes over the
// given grandparents (nil: split by size only).
func NewSplitter(target int64, grandparents []*manifest.FileMetadata) *Splitter {
	maxOverlap := int64(math.MaxInt64)
	if target < math.MaxInt64/maxGrandparentOverlapFactor {
		maxOverlap = maxGrandparentOverlapFactor * target
	}
	return &Splitter{target: target, maxOverlap: maxOverlap, grandparents: grandparents}
}

// SplitBefore is called with each new user key the output reaches and the
// size of the table being written (0 before the first); it reports whether
// that table must end before ukey.
func (s *Splitter) SplitBefore(ukey []byte, written int64) bool {
	for s.next < len(s.grandparents) && bytes.Compare(ukey, s.grandparents[s.next].Largest.UserKey) > 0 {
		if s.started {
			s.overlap += int64(s.grandparents[s.next].Size)
		}
		s.next++
	}
	s.started = true
	if written > 0 && (written >= s.target || s.overlap > s.maxOverlap) {
		s.overlap = 0
		return true
	}
	return false
}
