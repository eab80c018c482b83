package lsm

import (
	"bytes"
	"slices"
	"sort"

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
	// missing key probes the filter of each L0 table and of each deeper
	// level whose range covers the key, so the data blocks it reads for
	// nothing are the sum of their false-positive rates, each weighted by
	// how often it is probed; the sum is least when each run's rate is in
	// proportion to its entries per probing lookup
	// (filter.AllocateProbedBitsPerKey works it out on the cache-line
	// filter's own curve), which gives the last level, holding most keys,
	// fewer bits per key and the small runs above it more.
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
// the tree. Under FilterSizingPerLevel it is that level's share of the
// allocation over the tree as it will be once the table is in and the
// levels over their targets are compacted down (settle): every L0 table a
// run of its own, each deeper level one run, each probed by the fraction
// of absent-key lookups probeRates estimates.
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
	// The new table's range: a compaction's output spans its inputs; a
	// flush does not report its memtable's, which for keys spread like the
	// stored ones covers them all (nil).
	var added []keySpan
	if leaving != nil {
		lo, hi := leaving.Bounds()
		added = []keySpan{{lo, hi, float64(adding)}}
	}
	// stays adds f to r unless the compaction takes it away.
	stays := func(r *probedRun, f *manifest.FileMetadata) bool {
		if leaving != nil && leaving.Holds(f) {
			return false
		}
		n := float64(f.NumEntries)
		r.entries += n
		r.bytes += float64(f.Size)
		r.spans = append(r.spans, keySpan{f.Smallest.UserKey, f.Largest.UserKey, n})
		if t, release, ok := d.tables.Peek(f.FileNum); ok {
			r.overspent += n * (t.Properties().FilterBitsPerKey - bits)
			release()
		}
		return true
	}
	var runs []probedRun
	for _, f := range v.Levels[0] {
		var r probedRun
		if stays(&r, f) {
			runs = append(runs, r)
		}
	}
	target := len(runs) // a new L0 table is a run of its own
	if level == 0 {
		runs = append(runs, probedRun{spans: added})
	}
	for l := 1; l < NumLevels; l++ {
		r := probedRun{level: l}
		for _, f := range v.Levels[l] {
			stays(&r, f)
		}
		if l == level {
			target = len(runs)
			if added == nil {
				r.spans = nil // covers every key
			} else {
				// The output replaces every table of the level it overlaps:
				// its span goes where theirs were, in key order.
				i, _ := slices.BinarySearchFunc(r.spans, added[0].lo, func(s keySpan, k []byte) int { return bytes.Compare(s.lo, k) })
				r.spans = slices.Insert(r.spans, i, added[0])
			}
		}
		if r.entries > 0 || l == level {
			runs = append(runs, r)
		}
	}
	runs[target].entries += float64(adding)
	rates := probeRates(runs)
	targets, _ := d.compactionOptions().Targets(v)
	settle(runs, targets)

	entries := make([]float64, len(runs))
	var total, overspent float64
	for i, r := range runs {
		entries[i] = r.entries
		total += r.entries
		overspent += r.overspent
	}
	// The correction is bounded so that one table written after a large
	// drift is not starved of its filter.
	budget := min(max(bits-overspent/total, bits/2), 2*bits)
	return filter.AllocateProbedBitsPerKey(entries, rates, budget)[target]
}

// keySpan is a table's user-key range, both ends inclusive, and its
// entries.
type keySpan struct {
	lo, hi  []byte
	entries float64
}

// probedRun is one run of the tree for the allocation: its level, entries
// and bytes, what its filters spend above the budget's bits per key, and
// its tables' spans in key order (disjoint: one L0 table, or a level), nil
// for a run that covers every key.
type probedRun struct {
	level                     int
	entries, bytes, overspent float64
	spans                     []keySpan
}

// settle makes runs the tree that compactions will leave: a level between
// L0 and the last that is over its size target (compaction.Options.Targets)
// is being compacted down to it, so it keeps the target's share of its
// entries and of what its filters overspend, and the rest of its entries go
// to the last level. Sized for the tree as it is, the tables of a level
// written while it was over its target, which the compactions leave there,
// keep a filter made for a level several times larger: at 10M keys
// kvbench's fillrandom closed the DB with 4.1M entries in L5 beside 4.9M
// in L6, and once the compactions after a fill had run, readmissing found
// 1.4M in L5. Levels without a target (above the base level) are left as
// they are.
func settle(runs []probedRun, targets [NumLevels]int64) {
	last := slices.IndexFunc(runs, func(r probedRun) bool { return r.level == NumLevels-1 })
	if last < 0 {
		return
	}
	for i := range runs {
		r := &runs[i]
		if r.level == 0 || r.level == NumLevels-1 || r.bytes == 0 || targets[r.level] == 0 {
			continue
		}
		if keep := float64(targets[r.level]) / r.bytes; keep < 1 {
			runs[last].entries += r.entries * (1 - keep)
			r.entries *= keep
			r.overspent *= keep
		}
	}
}

// probeRates estimates, for each run, the fraction of absent-key lookups
// that probe its filter. A lookup probes a level's filter only when one of
// the level's tables covers the key (docs/read-path.md, step 4): in a 10M-key
// tree, a level of 3 tables above levels of 25, 161 and 930 was probed by
// 17% of the lookups, the next two by 49% and 66%. For keys drawn like the
// stored ones that fraction is the share of the stored keys under the run's
// tables, and the tree's own entries sample it: a run's rate is the share of
// the tree's total entries in tables whose ranges meet the run's (its own
// included, so the rate is never below its share of the entries). Tables
// across the edge of a run's span count in full, which overstates the rate
// by at most a table's share at each edge. A run whose span is nil covers
// every key.
func probeRates(runs []probedRun) []float64 {
	var total float64
	for _, r := range runs {
		total += r.entries
	}
	rates := make([]float64, len(runs))
	for i, r := range runs {
		if r.spans == nil {
			rates[i] = 1
			continue
		}
		var met float64
		for _, other := range runs {
			if other.spans == nil {
				met += other.entries // its range is unknown: assume it meets r's
				continue
			}
			for _, s := range other.spans {
				if meets(r.spans, s) {
					met += s.entries
				}
			}
		}
		rates[i] = min(met/total, 1)
	}
	return rates
}

// meets reports whether s overlaps one of spans, which are in key order and
// disjoint.
func meets(spans []keySpan, s keySpan) bool {
	// The first span ending at or after s begins is the only candidate.
	i := sort.Search(len(spans), func(i int) bool { return bytes.Compare(spans[i].hi, s.lo) >= 0 })
	return i < len(spans) && bytes.Compare(spans[i].lo, s.hi) <= 0
}
