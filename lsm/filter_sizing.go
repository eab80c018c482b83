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
// less what the others (L0's excepted, see settle) spend beyond their
// runs' shares. A tree that grew from one level (whose tables all got
// BloomBitsPerKey) to two, before any compaction rewrote the first, would
// otherwise spend more than the budget for as long as that first level
// lasts.
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
			r.known += n
			r.spent += n * t.Properties().FilterBitsPerKey
			release()
		}
		return true
	}
	// L0's runs newest first, a new L0 table the newest of all.
	var runs []probedRun
	target := 0
	if level == 0 {
		runs = append(runs, probedRun{spans: added})
	}
	for _, f := range v.Levels[0] {
		var r probedRun
		if stays(&r, f) {
			runs = append(runs, r)
		}
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
	// The rates are the tree's as it is: which tables of a level over its
	// target the compactions will leave is not known.
	rates := probeRates(runs)
	targets, _ := d.compactionOptions().Targets(v)
	settle(runs, targets, d.opts.L0CompactionThreshold-1)

	entries := make([]float64, len(runs))
	var total float64
	for i, r := range runs {
		entries[i] = r.entries
		total += r.entries
	}
	// What the tables in place spend beyond their runs' shares. Measured
	// from BloomBitsPerKey instead, a tree at its optimum would count the
	// target's own saving as a debt: a table written into the last level,
	// whose share b is below BloomBitsPerKey, would get less than b by
	// (adding/total)·(BloomBitsPerKey − b), and one written above it more,
	// moving memory from the last level up with every compaction.
	shares := filter.AllocateProbedBitsPerKey(entries, rates, bits)
	var overspent float64
	for i, r := range runs {
		overspent += r.spent - r.known*shares[i]
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
// and bytes; the entries of its tables whose filters are known (open) and
// the filter bits those spend; and its tables' spans in key order
// (disjoint: one L0 table, or a level), nil for a run that covers every
// key.
type probedRun struct {
	level          int
	entries, bytes float64
	known, spent   float64
	spans          []keySpan
}

// settle makes runs the tree that compactions will leave: L0 holding at
// most l0Max tables, the newest (runs' first), and every level between L0
// and the last within its size target (compaction.Options.Targets). A
// level over its target keeps the target's share of its entries and of its
// filters' spending; the entries L0 and the levels give up go to the last
// level. Sized for the tree as it is, tables written while it was out of
// shape keep a filter made for another tree: at 10M keys kvbench's
// fillrandom closed the DB with 4.1M entries in L5 beside 4.9M in L6, and
// once the compactions after a fill had run, readmissing found 1.4M in L5;
// during a 1M-key fill, L0 held up to 17 tables, each a run that took a
// share of the memory from the last level's tables written meanwhile
// (10.8 bits per key of a 12-bit budget), which outlast them. Levels
// without a target (above the base level) are left as they are.
//
// L0's tables go into the base level within a few flushes, and their
// dense filters with them, so what they spend is left out: counted, it
// came out of the tables written meanwhile, which last. At 200k keys,
// where an L0 table holds about 3% of the tree, per-level sizing spent 3%
// to 6% less filter memory than uniform with it counted (kvbench
// -filter_sizing uniform,per_level -bloom_bits 5,8,10,12 -num 200000).
func settle(runs []probedRun, targets [NumLevels]int64, l0Max int) {
	last := slices.IndexFunc(runs, func(r probedRun) bool { return r.level == NumLevels-1 })
	l0 := 0
	for i := range runs {
		r := &runs[i]
		switch {
		case r.level == 0:
			r.known, r.spent = 0, 0
			if l0++; l0 > l0Max && last >= 0 {
				runs[last].entries += r.entries
				r.entries = 0
			}
		case last >= 0 && r.level < NumLevels-1 && r.bytes > 0 && targets[r.level] > 0:
			if keep := float64(targets[r.level]) / r.bytes; keep < 1 {
				runs[last].entries += r.entries * (1 - keep)
				r.entries *= keep
				r.known *= keep
				r.spent *= keep
			}
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
