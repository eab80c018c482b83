package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/monbandb/monban/lsm"
)

// pooled is one read workload at one setting, over its repeats: counts
// summed, so rates are over every op of every repeat. The filter figures of
// the tree (memory, a level's bits and theory, the tree-wide filter's size)
// are the first repeat's: every repeat builds its tree from the same
// operations.
type pooled struct {
	bench string
	settingLabel
	ops, blocks, offOps, offBlocks uint64
	probes, negatives, fps         uint64
	// promised sums the repeats' Stats.ExpectedFalsePositives times their
	// ops, over promisedOps: the blocks per op the filters promise; best
	// and bestOps likewise what the best sizing of each tree's filter
	// memory would (sameTree.Best).
	promised, best       float64
	promisedOps, bestOps uint64
	filterBytes          int64
	levels               []pooledLevel
	// treeBytes and treeBits are the tree-wide filter's memory and bits
	// per entry (nil without one).
	treeBytes int64
	treeBits  *float64
}

type pooledLevel struct {
	level                          int
	blocks, probes, negatives, fps uint64
	bits, theory                   *float64
	filterBytes                    int64
}

// pool pools the filters-on records on of one group, with off their
// filters-off twins (nil without the comparison).
func pool(on, off []*record) pooled {
	first := on[0].Reads
	p := pooled{bench: on[0].Benchmark, settingLabel: on[0].settingLabel, filterBytes: first.FilterBytes,
		treeBytes: first.TreeFilterBytes, treeBits: first.TreeFilterBitsPerEntry}
	for _, rec := range on {
		rd := rec.Reads
		p.ops += uint64(rec.Ops)
		p.blocks += rd.blocks
		p.probes += rd.FilterProbes
		p.negatives += rd.FilterNegatives
		p.fps += rd.FalsePositives
		if e := rd.ExpectedFalsePositives; e != nil {
			p.promised += *e * float64(rec.Ops)
			p.promisedOps += uint64(rec.Ops)
			if st := rd.SameTree; st != nil {
				p.best += st.Best * float64(rec.Ops)
				p.bestOps += uint64(rec.Ops)
			}
		}
		for _, l := range rd.Levels {
			i := slices.IndexFunc(p.levels, func(pl pooledLevel) bool { return pl.level == l.Level })
			if i < 0 {
				i = len(p.levels)
				p.levels = append(p.levels, pooledLevel{level: l.Level, bits: l.BitsPerKey, theory: l.TheoryFPR, filterBytes: l.FilterBytes})
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
	return p
}

// promise is the blocks per op the filters promised, nil for a workload
// of present keys; best is the best sizing's promise on the same trees.
func (p pooled) promise() (promised, best *float64) {
	if p.promisedOps > 0 {
		promised = ptr(p.promised / float64(p.promisedOps))
	}
	if p.bestOps > 0 {
		best = ptr(p.best / float64(p.bestOps))
	}
	return promised, best
}

// theory is the FPR the levels' filters promise the probes that measured
// FPR (those not answered by a true positive): each level's theory
// weighted by its share of them. nil when no probe measured one.
func (p pooled) theory() *float64 {
	var sum float64
	var n uint64
	for _, l := range p.levels {
		if m := l.negatives + l.fps; m > 0 && l.theory != nil {
			sum += *l.theory * float64(m)
			n += m
		}
	}
	if n == 0 {
		return nil
	}
	return ptr(sum / float64(n))
}

// sweep prints a row per read workload and setting, and under it a row
// per level.
func (r *reporter) sweep() {
	fmt.Fprintln(r.w, strings.Repeat("-", 72))
	fmt.Fprintln(r.w, "Bloom sweep: a line naming the workload (and the filter scope, when several ran), then a row per setting (bits per key and filter sizing; the DB rebuilt per setting, the same operations each time), under it a row per level, and under the tree scope one for the tree-wide filter")
	if r.cfg.repeat > 1 {
		fmt.Fprintf(r.w, "Counts pooled over the %d repeats\n", r.cfg.repeat)
	}
	// Short headers and padding 1 keep nine columns in 80.
	fmt.Fprintln(r.w, "bits: the setting, a level's bits per key, the tree-wide filter's bits per entry; filters: Bloom filter memory at the start, the tree-wide filter's; blocks, off: data-block reads per op with filters on, ignored; promise: the blocks per op the table filters promise missing keys (Stats.ExpectedFalsePositives); theory%: per level, and over the levels weighted by the probes that measure FPR")
	// The workload's name goes on a line of its own above its rows, not in
	// a column: beside a 16-letter name and the widest figures, nine
	// columns did not fit 80. The rows are laid out together, so that
	// every column lines up across workloads.
	var rows bytes.Buffer
	labels := map[int]string{} // row index: the workload name above it
	nrows := 0
	row := func(format string, a ...any) {
		fmt.Fprintf(&rows, format, a...)
		nrows++
	}
	row("sizing\tbits\tfilters\tblocks\tpromise\toff\tFPR%%\ttheory%%\t\n")
	prev := ""
	gs := groups(r.results)
	for _, g := range gs {
		if !g[0].Filters || g[0].Reads == nil || g[0].Deletes != nil {
			continue
		}
		var off []*record
		if i := slices.IndexFunc(gs, func(o []*record) bool {
			return !o[0].Filters && o[0].Benchmark == g[0].Benchmark && o[0].settingLabel == g[0].settingLabel
		}); i >= 0 {
			off = gs[i]
		}
		p := pool(g, off)
		ops := int64(p.ops)
		offBlocks := "-"
		if off != nil {
			offBlocks = fixed(4, perOp(p.offBlocks, int64(p.offOps)))
		}
		promise := "-"
		if e, _ := p.promise(); e != nil {
			promise = fixed(4, e)
		}
		label := p.bench
		if len(r.cfg.filterScopes) > 1 {
			label += ", " + p.FilterScope + " scope"
		}
		if label != prev {
			labels[nrows], prev = label, label
		}
		row("%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", p.FilterSizing, p.BloomBits, size(p.filterBytes),
			fixed(4, perOp(p.blocks, ops)), promise, offBlocks, pct(ratio(p.fps, p.negatives+p.fps)), pct(p.theory()))
		for _, l := range p.levels {
			row("L%d\t%s\t%s\t%s\t\t\t%s\t%s\t\n", l.level, fixed(2, l.bits), size(l.filterBytes),
				fixed(4, perOp(l.blocks, ops)), pct(ratio(l.fps, l.negatives+l.fps)), pct(l.theory))
		}
		if p.FilterScope == scopeName(lsm.TreeWide) {
			row("tree-wide\t%s\t%s\t\t\t\t\t\t\n", fixed(2, p.treeBits), size(p.treeBytes))
		}
	}
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 1, ' ', tabwriter.AlignRight)
	tw.Write(rows.Bytes())
	tw.Flush()
	i := 0
	for line := range strings.Lines(table.String()) {
		if label, ok := labels[i]; ok {
			fmt.Fprintln(r.w, label)
		}
		fmt.Fprint(r.w, line)
		i++
	}
}
