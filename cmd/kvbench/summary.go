package main

import (
	"fmt"
	"slices"
)

// With -repeat N, every workload has N records per bits value (and per
// filters on and off); the summary gives the median of each timing and
// its spread, the min and the max. Timings, not counts: the counts of a
// repeat are those of its own tree (docs/benchmarks.md, "What varies
// between runs").

// spread is a timing over the repeats; nil fields when no repeat measured it.
type spread struct {
	Median *float64 `json:"median"`
	Min    *float64 `json:"min"`
	Max    *float64 `json:"max"`
}

func spreadOf(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	s := slices.Sorted(slices.Values(xs))
	m := len(s) / 2
	med := s[m]
	if len(s)%2 == 0 {
		med = (s[m-1] + s[m]) / 2
	}
	return spread{Median: &med, Min: &s[0], Max: &s[len(s)-1]}
}

// summaryLine is one workload's summary: -json's type "summary".
type summaryLine struct {
	Type      string `json:"type"` // "summary"
	Benchmark string `json:"benchmark"`
	settingLabel
	Filters        bool   `json:"filters"`
	Repeats        int    `json:"repeats"`
	OpsPerSec      spread `json:"ops_per_sec"`
	MicrosPerOp    spread `json:"micros_per_op"`
	CPUMicrosPerOp spread `json:"cpu_micros_per_op"`
}

// groups returns the records of each workload, setting and filters on or
// off, in the order they first ran.
func groups(recs []*record) [][]*record {
	type key struct {
		bench   string
		setting settingLabel
		filters bool
	}
	index := map[key]int{}
	var out [][]*record
	for _, rec := range recs {
		k := key{rec.Benchmark, rec.settingLabel, rec.Filters}
		i, ok := index[k]
		if !ok {
			i = len(out)
			index[k] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], rec)
	}
	return out
}

func newSummaryLine(g []*record) summaryLine {
	var ops, micros, cpu []float64
	for _, rec := range g {
		for _, f := range []struct {
			x   *float64
			dst *[]float64
		}{{rec.OpsPerSec, &ops}, {rec.MicrosPerOp, &micros}, {rec.CPUMicrosPerOp, &cpu}} {
			if f.x != nil {
				*f.dst = append(*f.dst, *f.x)
			}
		}
	}
	return summaryLine{Type: "summary", Benchmark: g[0].Benchmark, settingLabel: g[0].settingLabel, Filters: g[0].Filters,
		Repeats: len(g), OpsPerSec: spreadOf(ops), MicrosPerOp: spreadOf(micros), CPUMicrosPerOp: spreadOf(cpu)}
}

// summary prints, per workload, the median and min-max of its timings
// over the repeats.
func (r *reporter) summary() {
	var lines []summaryLine
	for _, g := range groups(r.results) {
		lines = append(lines, newSummaryLine(g))
	}
	if r.enc != nil {
		for _, l := range lines {
			r.emit(l)
		}
		return
	}
	fmt.Fprintln(r.w, "------------------------------------------------------------------------")
	fmt.Fprintf(r.w, "Repeats: median and min-max of %d runs of each workload\n", r.cfg.repeat)
	// A label line per workload and setting, then a row per figure: a row
	// of every column (a 16-letter workload name, its setting, the figure,
	// three values) did not fit 80 columns.
	const row = "  %-10s%14s%14s%14s\n"
	fmt.Fprintf(r.w, row, "", "median", "min", "max")
	scoped := len(r.cfg.filterScopes) > 1
	for _, l := range lines {
		filters := "on"
		if !l.Filters {
			filters = "off"
		}
		label := l.Benchmark + ": " + l.FilterSizing
		if scoped {
			label += ", " + l.FilterScope
		}
		fmt.Fprintf(r.w, "%s, %d bits, filters %s\n", label, l.BloomBits, filters)
		for _, f := range []struct {
			name string
			prec int
			s    spread
		}{{"ops/sec", 0, l.OpsPerSec}, {"micros/op", 3, l.MicrosPerOp}, {"cpu us/op", 3, l.CPUMicrosPerOp}} {
			fmt.Fprintf(r.w, row, f.name, fixed(f.prec, f.s.Median), fixed(f.prec, f.s.Min), fixed(f.prec, f.s.Max))
		}
	}
}
