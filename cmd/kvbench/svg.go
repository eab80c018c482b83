package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"unicode/utf8"
)

// The -svg charts are written by hand, not with gonum.org/v1/plot: a few
// line charts on a log axis need ~250 lines of SVG, while gonum/plot would
// bring gonum, a font stack and image codecs into the module graph of an
// embeddable storage engine for the sake of one optional flag. The output is
// plain SVG 1.1 that browsers and image viewers render as is. Without a font
// to measure, text widths are estimated (textWidth) on the wide side, and
// the layout is computed from them: the legend is as wide as its longest
// name, and a chart as wide as its title.

const (
	plotW, plotH = 520, 300
	padL, padT   = 80, 64 // y tick labels; title and context line
	padB         = 50     // x tick labels and x label
	legendGap    = 16     // between plot and legend
	legendLine   = 18     // legend row height
	fontSize     = 12
	smallFont    = 10 // the context line
)

var palette = []string{"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"}

type point struct{ x, y float64 }

type series struct {
	name   string
	pts    []point
	dashed bool
	color  string
}

// chart is one panel: x linear (numeric, or categories at 0, 1, …), y log10.
type chart struct {
	title, context, xlabel, ylabel string
	categories                     []string // when set, x values index them
	series                         []series
}

// textWidth estimates the width of s in a sans-serif font of size px: 0.6
// em a rune, 10% more in bold. Helvetica and DejaVu Sans average 0.5 to
// 0.55 em over digits and lower case, so the estimate errs wide.
func textWidth(s string, size float64, bold bool) float64 {
	w := float64(utf8.RuneCountInString(s)) * 0.6 * size
	if bold {
		w *= 1.1
	}
	return w
}

// legendX is where the legend starts, right of the plot.
const legendX = padL + plotW + legendGap

// extent returns the chart's width and height: the legend as wide as its
// longest name, as tall as its rows, and room for the title and context.
func (c chart) extent() (w, h float64) {
	legend := 0.0
	for _, s := range c.series {
		legend = max(legend, 30+textWidth(s.name, fontSize, false))
	}
	w = max(legendX+legend+10, textWidth(c.title, fontSize, true)+20, textWidth(c.context, smallFont, false)+20)
	h = max(padT+plotH+padB, padT+10+legendLine*float64(len(c.series))+padB)
	return w, h
}

// writeSVG draws the charts of a run: block reads per absent-key lookup
// against bits per key, and latency percentiles. Each carries the run's
// context from h.
func writeSVG(w io.Writer, h header, recs []*record) error {
	context := fmt.Sprintf("%d entries, bloom bits %s; filter sizing %s; filter scope %s; %s; %s", h.Num, bitsList(h.BloomBits),
		strings.Join(h.FilterSizing, ","), strings.Join(h.FilterScope, ","), h.Date, h.machine())
	charts := []chart{blockReadsChart(recs, h), latencyChart(recs, h)}
	width, height := 0.0, 0.0
	for i := range charts {
		charts[i].context = context
		cw, ch := charts[i].extent()
		width, height = max(width, cw), height+ch
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f" font-family="sans-serif" font-size="%d">`+"\n",
		width, height, width, height, fontSize)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	top := 0.0
	for _, c := range charts {
		fmt.Fprintf(&b, `<g transform="translate(0,%.0f)">`+"\n", top)
		c.draw(&b, width)
		b.WriteString("</g>\n")
		_, ch := c.extent()
		top += ch
	}
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// sizingColors are the colours of the block-reads chart's sizings, in the
// order they ran, and bestColors those of the best sizing on each one's
// trees; red is the filters-ignored series'.
var (
	sizingColors = []string{palette[0], palette[2], palette[3]}
	bestColors   = []string{palette[4], palette[5], palette[6]}
)

// blockReadsChart: data blocks touched per missing-key Get against bits per
// key, counts pooled over the repeats, a series per filter sizing (and
// scope, when several ran), and
// beside each, dashed, what its filters promised: Stats.ExpectedFalsePositives
// of the tree the workload started on (without filters, one block per
// table covering the key); and, dashed in a colour of its own, what the
// best sizing of those trees' filter memory would have promised for the
// probes measured (sameTree.Best): how far any sizing could go. Runs with
// the filters ignored read the same blocks whatever the sizing and scope:
// they are pooled into one series.
func blockReadsChart(recs []*record, h header) chart {
	c := chart{title: "readmissing: data-block reads per lookup of an absent key",
		xlabel: "Bloom bits per key", ylabel: "data blocks read per Get (log)"}
	measured, promised, best := map[string]*series{}, map[string]*series{}, map[string]*series{}
	var order []string // series names in the order they ran
	var offBits []int
	offBlocks, offOps := map[int]uint64{}, map[int]uint64{}
	for _, g := range groups(recs) {
		if g[0].Benchmark != "readmissing" {
			continue
		}
		p := pool(g, nil)
		if !g[0].Filters {
			if _, ok := offOps[p.BloomBits]; !ok {
				offBits = append(offBits, p.BloomBits)
			}
			offBlocks[p.BloomBits] += p.blocks
			offOps[p.BloomBits] += p.ops
			continue
		}
		y := perOp(p.blocks, int64(p.ops))
		if y == nil {
			continue
		}
		// A series is a sizing's (the best sizing's is named after it), and
		// a scope's when several ran.
		name := p.FilterSizing
		if len(h.FilterScope) > 1 {
			name += ", " + p.FilterScope
		}
		if measured[name] == nil {
			color := sizingColors[len(order)%len(sizingColors)]
			bestColor := bestColors[len(order)%len(bestColors)]
			order = append(order, name)
			measured[name] = &series{name: name + ": measured, filters on", color: color}
			promised[name] = &series{name: name + ": promised (Stats.ExpectedFalsePositives)", color: color, dashed: true}
			best[name] = &series{name: name + "'s trees: the best sizing of their filter memory", color: bestColor, dashed: true}
		}
		x := float64(p.BloomBits)
		measured[name].pts = append(measured[name].pts, point{x, *y})
		e, b := p.promise()
		if e != nil {
			promised[name].pts = append(promised[name].pts, point{x, *e})
		}
		if b != nil {
			best[name].pts = append(best[name].pts, point{x, *b})
		}
	}
	for _, sz := range order {
		c.series = append(c.series, *measured[sz], *promised[sz])
		if len(best[sz].pts) > 0 {
			c.series = append(c.series, *best[sz])
		}
	}
	off := series{name: "measured, filters ignored (every sizing)", color: palette[1]}
	for _, bits := range offBits {
		if y := perOp(offBlocks[bits], int64(offOps[bits])); y != nil {
			off.pts = append(off.pts, point{float64(bits), *y})
		}
	}
	if len(off.pts) > 0 { // -compare=false runs no workload with the filters ignored
		c.series = append(c.series, off)
	}
	return c
}

// latencyChart: Get/Delete latency percentiles of every read and delete
// workload at one bits-per-key value (10 if swept, else the last), each the
// median over the repeats; a series per sizing and scope when several ran.
func latencyChart(recs []*record, h header) chart {
	at := h.BloomBits[len(h.BloomBits)-1]
	if slices.Contains(h.BloomBits, 10) {
		at = 10
	}
	c := chart{title: fmt.Sprintf("latency percentiles at %d bits per key", at),
		xlabel: "percentile", ylabel: "microseconds (log)"}
	keys := []string{}
	for _, pc := range percentiles {
		c.categories = append(c.categories, pc.name)
		keys = append(keys, snake(pc.name))
	}
	c.categories, keys = append(c.categories, "max"), append(keys, "max")
	for _, g := range groups(recs) {
		if g[0].BloomBits != at || g[0].Reads == nil {
			continue
		}
		s := series{name: g[0].Benchmark, color: palette[len(c.series)%len(palette)]}
		if len(h.FilterSizing) > 1 {
			s.name += ", " + g[0].FilterSizing
		}
		if len(h.FilterScope) > 1 {
			s.name += ", " + g[0].FilterScope
		}
		if g[0].Batches != nil {
			s.name += " per batch"
		}
		if !g[0].Filters {
			s.name += " (filters off)"
			s.dashed = true
		}
		for i, k := range keys {
			var vs []float64
			for _, rec := range g {
				if v, ok := rec.LatencyUs[k]; ok {
					vs = append(vs, v)
				}
			}
			if m := spreadOf(vs).Median; m != nil {
				s.pts = append(s.pts, point{float64(i), *m})
			}
		}
		c.series = append(c.series, s)
	}
	return c
}

func (c chart) draw(b *bytes.Buffer, width float64) {
	pw, ph := float64(plotW), float64(plotH)
	text(b, width/2, 22, "middle", fontSize, true, c.title)
	text(b, width/2, 40, "middle", smallFont, false, c.context)
	text(b, padL+pw/2, padT+ph+40, "middle", fontSize, false, c.xlabel)
	fmt.Fprintf(b, `<text x="16" y="%.0f" text-anchor="middle" transform="rotate(-90 16 %.0f)">%s</text>`+"\n", padT+ph/2, padT+ph/2, esc(c.ylabel))
	var xs, ys []float64
	for _, s := range c.series {
		for _, p := range s.pts {
			xs = append(xs, p.x)
			if p.y > 0 {
				ys = append(ys, p.y)
			}
		}
	}
	if len(xs) == 0 || len(ys) == 0 {
		text(b, padL+pw/2, padT+ph/2, "middle", fontSize, false, "no data: run the workload to chart it")
		return
	}
	xmin, xmax := slices.Min(xs), slices.Max(xs)
	if c.categories != nil {
		xmin, xmax = -0.5, float64(len(c.categories))-0.5
	} else if xmin == xmax {
		xmin, xmax = xmin-1, xmax+1
	}
	ymin, ymax := math.Floor(math.Log10(slices.Min(ys))), math.Ceil(math.Log10(slices.Max(ys)))
	if ymin == ymax {
		ymax++
	}
	X := func(x float64) float64 { return padL + (x-xmin)/(xmax-xmin)*pw }
	Y := func(y float64) float64 {
		ly := ymin // zero is drawn on the bottom edge
		if y > 0 {
			ly = math.Log10(y)
		}
		return padT + (ymax-ly)/(ymax-ymin)*ph
	}
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%.0f" height="%.0f" fill="none" stroke="#333"/>`+"\n", padL, padT, pw, ph)
	for e := ymin; e <= ymax; e++ {
		y := Y(math.Pow(10, e))
		fmt.Fprintf(b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", padL, y, padL+pw, y)
		text(b, padL-6, y+4, "end", fontSize, false, fmt.Sprintf("%g", math.Pow(10, e)))
	}
	if c.categories != nil {
		for i, name := range c.categories {
			text(b, X(float64(i)), padT+ph+18, "middle", fontSize, false, name)
		}
	} else {
		for _, x := range uniqueSorted(xs) {
			text(b, X(x), padT+ph+18, "middle", fontSize, false, fmt.Sprintf("%g", x))
		}
	}
	for i, s := range c.series {
		var path []string
		for _, p := range s.pts {
			path = append(path, fmt.Sprintf("%.1f,%.1f", X(p.x), Y(p.y)))
		}
		dash, fill := "", s.color
		if s.dashed {
			dash, fill = ` stroke-dasharray="6,4"`, "white"
		}
		if len(path) > 1 {
			fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(path, " "), s.color, dash)
		}
		// Every point has a marker, hollow on a dashed series: a series
		// of one point has no line to show it.
		for _, p := range s.pts {
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s" stroke="%s" stroke-width="1.5"/>`+"\n", X(p.x), Y(p.y), fill, s.color)
		}
		ly := padT + 10 + legendLine*float64(i)
		fmt.Fprintf(b, `<line x1="%d" y1="%.0f" x2="%d" y2="%.0f" stroke="%s" stroke-width="2"%s/>`+"\n", legendX, ly, legendX+24, ly, s.color, dash)
		text(b, legendX+30, ly+4, "start", fontSize, false, s.name)
	}
}

func text(b *bytes.Buffer, x, y float64, anchor string, size int, bold bool, s string) {
	attrs := ""
	if size != fontSize {
		attrs += fmt.Sprintf(` font-size="%d"`, size)
	}
	if bold {
		attrs += ` font-weight="bold"`
	}
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" text-anchor="%s"%s>%s</text>`+"\n", x, y, anchor, attrs, esc(s))
}

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func uniqueSorted(xs []float64) []float64 {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}
