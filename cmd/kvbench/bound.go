package main

import (
	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/lsm"
)

// sameTree is what two sizings of one tree's filter memory promise a
// workload of missing keys, on the tree the workload ran on and its
// measured probes: every table at the tree's average bits per key
// (uniform sizing), and the allocation with the fewest expected false
// positives (filter.AllocateProbedBitsPerKey, over the probe rates the
// workload measured); and, between them, what the tree's own filters
// promise those probes. Each is Σ over runs of probes per op times the
// run's FPR, at the tree's filter memory; every L0 table is a run, taken
// as an equal share of L0's entries and probes, and each deeper level is
// one. Unlike Stats.ExpectedFalsePositives, which counts a probe of every
// level, these weigh each level by the probes it had: a level whose
// tables cover part of the key range is probed by part of the lookups.
//
// Two sizings cannot be compared by separate runs alone: compaction
// timing gives their trees different shapes: at 1M keys and 12 bits per
// key, a uniform run that ended its fill with three L0 tables at rest was
// promised 0.0163 data blocks per missing key on its tree, against 0.0093
// on a tree without them. Beside a per-level run, Uniform is what uniform sizing
// would have read on the same tree, and Best says how much any sizing of
// that memory could have saved.
type sameTree struct {
	BitsPerKey float64 `json:"bits_per_key"` // the tree's average
	Uniform    float64 `json:"uniform"`      // blocks per op promised
	Filters    float64 `json:"filters"`      // by the tree's own filters
	Best       float64 `json:"best"`         // blocks per op promised
}

// sameTreeFrom computes sameTree for ops missing-key reads from the
// filter figures of start and the probes of d, the Stats difference over
// the workload. It returns nil when no table's filter was measured.
func sameTreeFrom(start, d lsm.Stats, ops int64) *sameTree {
	if ops <= 0 || start.Total.FilterEntries == 0 {
		return nil
	}
	s := &sameTree{}
	var entries, probes []float64
	for level, l := range start.Levels {
		n, p := float64(l.FilterEntries), float64(d.Levels[level].FilterProbes)/float64(ops)
		if n == 0 || p == 0 {
			continue
		}
		s.Filters += p * l.TheoryFPR
		runs := 1
		if level == 0 {
			runs = l.Files
		}
		for range runs {
			entries = append(entries, n/float64(runs))
			probes = append(probes, p/float64(runs))
		}
	}
	if len(entries) == 0 {
		return nil
	}
	s.BitsPerKey = start.Total.FilterBitsPerKey
	uniform := filter.ExpectedFalsePositives([]float64{s.BitsPerKey})
	for i, b := range filter.AllocateProbedBitsPerKey(entries, probes, s.BitsPerKey) {
		s.Uniform += probes[i] * uniform
		s.Best += probes[i] * filter.ExpectedFalsePositives([]float64{b})
	}
	return s
}
