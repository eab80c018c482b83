package main

import (
	"math"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/lsm"
)

// uniformTree is Stats at the start of a workload on a tree whose tables
// all have bits per key: three L0 tables of 10,000 entries, L5 with
// 100,000 and L6 with 1,000,000; and the Stats difference of ops lookups
// that probed every L0 table, L5 for l5Probes of them and L6 for all.
func uniformTree(bits float64, ops, l5Probes int64) (start, d lsm.Stats) {
	fpr := filter.ExpectedFalsePositives([]float64{bits})
	set := func(level, files int, entries uint64, probes int64) {
		start.Levels[level] = lsm.LevelStats{Files: files, FilterEntries: entries, FilterBitsPerKey: bits, TheoryFPR: fpr}
		start.Total.FilterEntries += entries
		d.Levels[level].FilterProbes = uint64(probes)
	}
	set(0, 3, 30_000, 3*ops)
	set(5, 4, 100_000, l5Probes)
	set(6, 40, 1_000_000, ops)
	start.Total.FilterBitsPerKey = bits
	return start, d
}

func TestSameTreeOfAUniformTree(t *testing.T) {
	const ops = 100_000
	start, d := uniformTree(10, ops, ops/5)
	st := sameTreeFrom(start, d, ops)
	if st == nil {
		t.Fatal("sameTreeFrom = nil for a tree with filters")
	}
	fpr := filter.ExpectedFalsePositives([]float64{10})
	if want := (3 + 0.2 + 1) * fpr; math.Abs(st.Uniform-want) > 1e-9*want {
		t.Errorf("Uniform = %g, want probes per op × FPR = %g", st.Uniform, want)
	}
	if math.Abs(st.Filters-st.Uniform) > 1e-9*st.Uniform {
		t.Errorf("a uniform tree's own filters promise %g, uniform sizing %g: want equal", st.Filters, st.Uniform)
	}
	// The L0 tables, small and probed by every lookup, and L5, probed by a
	// fifth, are worth more bits than the last level: the best sizing
	// saves a good part of the uniform promise.
	if !(st.Best < 0.8*st.Uniform) {
		t.Errorf("Best = %g, want below 0.8 × Uniform (%g)", st.Best, st.Uniform)
	}
}

func TestSameTreeOfOneRunIsUniform(t *testing.T) {
	const ops = 1000
	var start, d lsm.Stats
	start.Levels[6] = lsm.LevelStats{Files: 10, FilterEntries: 50_000, FilterBitsPerKey: 8, TheoryFPR: filter.ExpectedFalsePositives([]float64{8})}
	start.Total.FilterEntries, start.Total.FilterBitsPerKey = 50_000, 8
	d.Levels[6].FilterProbes = ops
	st := sameTreeFrom(start, d, ops)
	if st == nil || math.Abs(st.Best-st.Uniform) > 1e-9*st.Uniform {
		t.Errorf("one run: sameTree = %+v, want Best = Uniform: there is nothing to move memory between", st)
	}
}

func TestSameTreeWithoutFilters(t *testing.T) {
	var start, d lsm.Stats
	if st := sameTreeFrom(start, d, 100); st != nil {
		t.Errorf("no table measured: sameTree = %+v, want nil", st)
	}
	start, d = uniformTree(10, 100, 20)
	if st := sameTreeFrom(start, d, 0); st != nil {
		t.Errorf("no op: sameTree = %+v, want nil", st)
	}
}
