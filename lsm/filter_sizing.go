package lsm

import (
	"github.com/monbandb/monban/compaction"
	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/manifest"
)

// FilterSizing chooses how many bits per key each table's Bloom filter
// gets (Options.FilterSizing).
type FilterSizing int

const (
	// FilterSizingUniform gives every table BloomBitsPerKey.
	FilterSizingUniform FilterSizing = iota
	// FilterSizingPerLevel spends the same memory, BloomBitsPerKey bits for
	// every entry of the tree, where it buys the fewest false positives
	// (Monkey: Dayan, Athanassoulis and Idreos, SIGMOD 2017). A read of a
	// missing key probes one filter per L0 table and one per deeper level,
	// so the data blocks it reads for nothing are the sum of their
	// false-positive rates; the sum is least when each run's rate is in
	// proportion to its entries (filter.AllocateBitsPerKey works it out on
	// the cache-line filter's own curve), which gives the last level,
	// holding most keys, fewer bits per key and the small runs above it
	// more.
	FilterSizingPerLevel
)

func (s FilterSizing) String() string {
	switch s {
	case FilterSizingUniform:
		return "uniform"
	case FilterSizingPerLevel:
		return "per_level"
	}
	return "FilterSizing(?)"
}

// filterBitsPerKey is the density of the filter of a table written into
// level, holding about adding entries, while the inputs of leaving (the
// compaction writing it; nil for a flush) go away and v holds the rest of
// the tree. Under
// FilterSizingPerLevel it is that level's share of the allocation over the
// tree as it will be once the table is in: every L0 table a run of its
// own, each deeper level one run.
//
// The choice is made once, when the table is written: a table keeps its
// filter when the tree around it changes, and a compaction that moves it
// down a level unchanged (a trivial move) takes its denser filter along.
// So the tables in place are over or under their share of the budget,
// and the allocation for a new table spends what remains: the budget
// less what the others spend above BloomBitsPerKey per entry. A tree that
// grew from one level (whose tables all got BloomBitsPerKey) to two,
// before any compaction rewrote the first, would otherwise spend more
// than the budget for as long as that first level lasts.
func (d *DB) filterBitsPerKey(v *manifest.Version, level int, adding uint64, leaving *compaction.Compaction) float64 {
	bits := float64(d.opts.bloomBits())
	if d.opts.FilterSizing != FilterSizingPerLevel || bits == 0 {
		return bits
	}
	var runs []float64
	total, overspent := float64(adding), 0.0
	stays := func(f *manifest.FileMetadata) bool {
		if leaving != nil && leaving.Holds(f) {
			return false
		}
		n := float64(f.NumEntries)
		total += n
		if r, release, ok := d.tables.Peek(f.FileNum); ok {
			overspent += n * (r.Properties().FilterBitsPerKey - bits)
			release()
		}
		return true
	}
	for _, f := range v.Levels[0] {
		if stays(f) {
			runs = append(runs, float64(f.NumEntries))
		}
	}
	target := len(runs) // a new L0 table is a run of its own
	if level == 0 {
		runs = append(runs, 0)
	}
	for l := 1; l < NumLevels; l++ {
		var n float64
		for _, f := range v.Levels[l] {
			if stays(f) {
				n += float64(f.NumEntries)
			}
		}
		if l == level {
			target = len(runs)
		}
		if n > 0 || l == level {
			runs = append(runs, n)
		}
	}
	runs[target] += float64(adding)
	// The correction is bounded so that one table written after a large
	// drift is not starved of its filter.
	budget := min(max(bits-overspent/total, bits/2), 2*bits)
	return filter.AllocateBitsPerKey(runs, budget)[target]
}
