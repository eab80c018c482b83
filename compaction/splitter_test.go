package compaction

import (
	"fmt"
	"math"
	"testing"

	"github.com/monbandb/monban/internal/manifest"
)

// TestSplitterCutsAtSizeAndGrandparentOverlap: outputs end at the target
// size, and earlier once they have passed more than ten targets' worth of
// grandparent tables.
func TestSplitterCutsAtSizeAndGrandparentOverlap(t *testing.T) {
	s := NewSplitter(math.MaxInt64, nil) // a flush: one table
	for i := range 1000 {
		if s.SplitBefore(fmt.Appendf(nil, "k%04d", i), int64(i)<<40) {
			t.Fatalf("a splitter without a target cut before key %d", i)
		}
	}
	s = NewSplitter(100, nil)
	if s.SplitBefore([]byte("a"), 0) || s.SplitBefore([]byte("b"), 99) || !s.SplitBefore([]byte("c"), 100) {
		t.Fatal("size-only splitter does not cut exactly at the target")
	}
	// Grandparents of 300 bytes each, keys g000..g099: passing four of them
	// (1200 bytes > 10×100) forces a cut although the output is small.
	var gps []*manifest.FileMetadata
	for i := range 100 {
		gps = append(gps, table(uint64(i+1), fmt.Sprintf("g%03d", i), fmt.Sprintf("g%03d~", i), 300))
	}
	s = NewSplitter(100, gps)
	cuts := 0
	for i := range 100 {
		if s.SplitBefore(fmt.Appendf(nil, "g%03d~~", i), 1) {
			cuts++
		}
	}
	// The first key passes nothing yet; then every 4 grandparents passed
	// exceed the bound: 99 passed → 24 cuts.
	if cuts != 24 {
		t.Fatalf("%d cuts over 100 grandparents of 3 targets each; want 24", cuts)
	}
}
