package main

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// The -svg charts are written by hand, not with gonum.org/v1/plot: two
// line charts on a log axis need ~200 lines of SVG, while gonum/plot would
// bring gonum, a font stack and image codecs into the module graph of an
// embeddable storage engine for the sake of one optional flag. The output is
// plain SVG 1.1 that browsers and image viewers render as is.

const (
	chartW, chartH = 720, 400
	padL, padR     = 80, 190
	padT, padB     = 40, 50
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
	title, xlabel, ylabel string
	categories            []string // when set, x values index them
	series                []series
}

// writeSVG draws the bits-per-key chart and the latency chart.
func writeSVG(w io.Writer, recs []*record, bits []int) error {
	charts := []chart{blockReadsChart(recs, bits), latencyChart(recs, bits)}
	var b bytes.Buffer
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", chartW, chartH*len(charts))
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	for i, c := range charts {
		fmt.Fprintf(&b, `<g transform="translate(0,%d)">`+"\n", i*chartH)
		c.draw(&b)
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg>\n")
	_, err := w.Write(b.Bytes())
	return err
}

// blockReadsChart: data blocks touched per missing-key Get against bits per
// key. Theory, per run, is the tables whose key range covered the key (the
// filter probes per Get; without filters, the blocks read, one per covering
// table) times the cache-line FPR at the run's bits. It is computed per
// run because each bits value has its own rebuilt tree, caught at its own
// point of compaction.
func blockReadsChart(recs []*record, bits []int) chart {
	c := chart{title: "readmissing: data-block reads per lookup of an absent key",
		xlabel: "Bloom bits per key", ylabel: "data blocks read per Get (log)"}
	th := series{name: "theory: tables × cache-line FPR", color: palette[2], dashed: true}
	on := series{name: "measured, filters on", color: palette[0]}
	off := series{name: "measured, filters ignored", color: palette[1]}
	for _, r := range recs {
		if r.Benchmark != "readmissing" || r.Reads == nil {
			continue
		}
		p := point{float64(r.BloomBits), blocksPerOp(r)}
		if !r.Filters {
			off.pts = append(off.pts, p)
			continue
		}
		on.pts = append(on.pts, p)
		cover := p.y
		if r.BloomBits > 0 {
			cover = perOp(r.Reads.FilterProbes, r.Ops)
		}
		th.pts = append(th.pts, point{p.x, cover * theoryFPR(r.BloomBits)})
	}
	c.series = append(c.series, th, on, off)
	return c
}

// latencyChart: Get/Delete latency percentiles of every read and delete
// workload at one bits-per-key value (10 if swept, else the last).
func latencyChart(recs []*record, bits []int) chart {
	at := bits[len(bits)-1]
	if slices.Contains(bits, 10) {
		at = 10
	}
	c := chart{title: fmt.Sprintf("latency percentiles at %d bits per key", at), xlabel: "percentile",
		ylabel: "microseconds (log)", categories: []string{"p50", "p95", "p99", "p99.9"}}
	for _, r := range recs {
		if r.BloomBits != at || r.Reads == nil || r.LatencyUs == nil {
			continue
		}
		name := r.Benchmark
		s := series{name: name, color: palette[len(c.series)%len(palette)]}
		if !r.Filters {
			s.name += " (filters off)"
			s.dashed = true
		}
		l := r.LatencyUs
		for i, v := range []float64{l.P50, l.P95, l.P99, l.P999} {
			s.pts = append(s.pts, point{float64(i), v})
		}
		c.series = append(c.series, s)
	}
	return c
}

func (c chart) draw(b *bytes.Buffer) {
	pw, ph := float64(chartW-padL-padR), float64(chartH-padT-padB)
	text(b, chartW/2-padR/2, 22, "middle", "bold", c.title)
	text(b, padL+int(pw)/2, chartH-10, "middle", "", c.xlabel)
	fmt.Fprintf(b, `<text x="16" y="%d" text-anchor="middle" transform="rotate(-90 16 %d)">%s</text>`+"\n", padT+int(ph)/2, padT+int(ph)/2, esc(c.ylabel))
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
		text(b, padL+int(pw)/2, padT+int(ph)/2, "middle", "", "no data: run the workload to chart it")
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
		text(b, padL-6, int(y)+4, "end", "", fmt.Sprintf("%g", math.Pow(10, e)))
	}
	if c.categories != nil {
		for i, name := range c.categories {
			text(b, int(X(float64(i))), padT+int(ph)+18, "middle", "", name)
		}
	} else {
		for _, x := range uniqueSorted(xs) {
			text(b, int(X(x)), padT+int(ph)+18, "middle", "", fmt.Sprintf("%g", x))
		}
	}
	for i, s := range c.series {
		var path []string
		for _, p := range s.pts {
			path = append(path, fmt.Sprintf("%.1f,%.1f", X(p.x), Y(p.y)))
		}
		dash := ""
		if s.dashed {
			dash = ` stroke-dasharray="6,4"`
		}
		if len(path) > 0 {
			fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(path, " "), s.color, dash)
		}
		if !s.dashed || c.categories != nil {
			for _, p := range s.pts {
				fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>`+"\n", X(p.x), Y(p.y), s.color)
			}
		}
		ly := padT + 10 + 18*i
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>`+"\n", chartW-padR+10, ly, chartW-padR+34, ly, s.color, dash)
		text(b, chartW-padR+40, ly+4, "start", "", s.name)
	}
}

func text(b *bytes.Buffer, x, y int, anchor, weight, s string) {
	if weight != "" {
		weight = fmt.Sprintf(` font-weight="%s"`, weight)
	}
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="%s"%s>%s</text>`+"\n", x, y, anchor, weight, esc(s))
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
