package main

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
)

// pooled is one read workload at one bits value, over its repeats: counts
// summed, so rates are over every op of every repeat, and micros/op the
// median of the repeats.
type pooled struct {
	bench                          string
	bits                           int
	ops, blocks, offOps, offBlocks uint64
	probes, negatives, fps         uint64
	micros                         spread
	filterBytes                    int64 // the first repeat's
	levels                         []pooledLevel
}

type pooledLevel struct {
	level                          int
	blocks, probes, negatives, fps uint64
	theory                         float64 // the first repeat's
}

// pool pools the filters-on records on of one group, with off their
// filters-off twins (nil without the comparison).
func pool(on, off []*record) pooled {
	p := pooled{bench: on[0].Benchmark, bits: on[0].BloomBits, filterBytes: on[0].Reads.FilterBytes}
	var micros []float64
	for _, rec := range on {
		rd := rec.Reads
		p.ops += uint64(rec.Ops)
		p.blocks += rd.blocks
		p.probes += rd.FilterProbes
		p.negatives += rd.FilterNegatives
		p.fps += rd.FalsePositives
		if rec.MicrosPerOp != nil {
			micros = append(micros, *rec.MicrosPerOp)
		}
		for _, l := range rd.Levels {
			i := slices.IndexFunc(p.levels, func(pl pooledLevel) bool { return pl.level == l.Level })
			if i < 0 {
				i = len(p.levels)
				p.levels = append(p.levels, pooledLevel{level: l.Level, theory: l.TheoryFPR})
			}
			pl := &p.levels[i]
			pl.blocks += l.BlocksRead + l.CacheHits
			pl.probes += l.Probes
			pl.negatives += l.Negatives
			pl.fps += l.FalsePositives
		}
	}
	slices.SortFunc(p.levels, func(a, b pooledLevel) int { return a.level - b.level })
	for _, rec := range off {
		p.offOps += uint64(rec.Ops)
		p.offBlocks += rec.Reads.blocks
	}
	p.micros = spreadOf(micros)
	return p
}

// sweep prints a row per read workload and bits-per-key value, and under
// it a row per level.
func (r *reporter) sweep() {
	fmt.Fprintln(r.w, strings.Repeat("-", 72))
	fmt.Fprintln(r.w, "Bloom sweep: a row per workload and bits per key (DB rebuilt per value, the same operations each time), then a row per level")
	if r.cfg.repeat > 1 {
		fmt.Fprintf(r.w, "Counts pooled over the %d repeats; us/op their median\n", r.cfg.repeat)
	}
	// Short headers and padding 1 keep nine columns in 80.
	fmt.Fprintln(r.w, "blocks, off: data-block reads per op with filters on, ignored; probes: table filter probes per op; filters: filter memory at the start")
	tw := tabwriter.NewWriter(r.w, 0, 0, 1, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "benchmark\tbits\tus/op\tfilters\tblocks\toff\tprobes\tFPR%\ttheory%\t")
	gs := groups(r.results)
	for _, g := range gs {
		if !g[0].Filters || g[0].Reads == nil || g[0].Deletes != nil {
			continue
		}
		var off []*record
		if i := slices.IndexFunc(gs, func(o []*record) bool {
			return !o[0].Filters && o[0].Benchmark == g[0].Benchmark && o[0].BloomBits == g[0].BloomBits
		}); i >= 0 {
			off = gs[i]
		}
		p := pool(g, off)
		ops := int64(p.ops)
		offBlocks := "-"
		if off != nil {
			offBlocks = fixed(4, perOp(p.offBlocks, int64(p.offOps)))
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.4f\t\n", p.bench, p.bits, fixed(2, p.micros.Median),
			size(p.filterBytes), fixed(4, perOp(p.blocks, ops)), offBlocks, fixed(3, perOp(p.probes, ops)),
			pct(ratio(p.fps, p.negatives+p.fps)), 100*theoryFPR(float64(p.bits)))
		for _, l := range p.levels {
			fmt.Fprintf(tw, "L%d\t\t\t\t%s\t\t%s\t%s\t%.4f\t\n", l.level, fixed(4, perOp(l.blocks, ops)),
				fixed(3, perOp(l.probes, ops)), pct(ratio(l.fps, l.negatives+l.fps)), 100*l.theory)
		}
	}
	tw.Flush()
}
