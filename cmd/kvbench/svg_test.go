package main

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/monbandb/monban/lsm"
)

// svgDoc is what the tests read back from a chart file.
type svgDoc struct {
	width, height float64 // the viewBox
	texts         []svgText
	polylines     int
	circles       []map[string]int // per chart (top-level group), by stroke colour
}

// svgText is a text element with its position in viewBox coordinates
// (group translations applied) and its estimated box.
type svgText struct {
	s              string
	x0, y0, x1, y1 float64
}

// parseSVG reads the subset of SVG that svg.go writes: groups translated,
// text anchored start, middle or end, rotated by -90° about its own
// anchor point, in the default or a font-size of its own.
func parseSVG(t *testing.T, data []byte) svgDoc {
	t.Helper()
	var doc svgDoc
	dec := xml.NewDecoder(bytes.NewReader(data))
	var dy []float64 // translation of each open group
	var open *xml.StartElement
	var content strings.Builder
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			attr := func(name string) string {
				for _, a := range tok.Attr {
					if a.Name.Local == name {
						return a.Value
					}
				}
				return ""
			}
			switch tok.Name.Local {
			case "svg":
				var x, y float64
				if _, err := fmt.Sscanf(attr("viewBox"), "%g %g %g %g", &x, &y, &doc.width, &doc.height); err != nil || x != 0 || y != 0 {
					t.Fatalf("viewBox %q", attr("viewBox"))
				}
			case "g":
				var ty float64
				if _, err := fmt.Sscanf(attr("transform"), "translate(0,%g)", &ty); err != nil {
					t.Fatalf("group transform %q", attr("transform"))
				}
				dy = append(dy, ty)
				doc.circles = append(doc.circles, map[string]int{})
			case "text":
				open = &tok
				content.Reset()
			case "polyline":
				doc.polylines++
			case "circle":
				doc.circles[len(doc.circles)-1][attr("stroke")]++
			}
		case xml.CharData:
			content.Write(tok)
		case xml.EndElement:
			switch tok.Name.Local {
			case "g":
				dy = dy[:len(dy)-1]
			case "text":
				doc.texts = append(doc.texts, textBox(t, *open, content.String(), dy))
			}
		}
	}
	return doc
}

// textBox estimates where a text element's glyphs fall: textWidth wide
// from its anchor, from an ascent of one font size above the baseline to
// a descent of a quarter below.
func textBox(t *testing.T, el xml.StartElement, s string, dy []float64) svgText {
	t.Helper()
	attrs := map[string]string{"font-size": strconv.Itoa(fontSize)}
	for _, a := range el.Attr {
		attrs[a.Name.Local] = a.Value
	}
	num := func(name string) float64 {
		v, err := strconv.ParseFloat(attrs[name], 64)
		if err != nil {
			t.Fatalf("text %q: %s=%q", s, name, attrs[name])
		}
		return v
	}
	x, y, size := num("x"), num("y"), num("font-size")
	for _, d := range dy {
		y += d
	}
	w := textWidth(s, size, attrs["font-weight"] == "bold")
	var a0 float64 // start of the text along its baseline, from the anchor
	switch attrs["text-anchor"] {
	case "start":
	case "middle":
		a0 = -w / 2
	case "end":
		a0 = -w
	default:
		t.Fatalf("text %q: anchor %q", s, attrs["text-anchor"])
	}
	box := svgText{s: s, x0: x + a0, x1: x + a0 + w, y0: y - size, y1: y + size/4}
	if tr := attrs["transform"]; tr != "" {
		var cx, cy float64
		if _, err := fmt.Sscanf(tr, "rotate(-90 %g %g)", &cx, &cy); err != nil || cx != x || cy+sum(dy) != y {
			t.Fatalf("text %q: transform %q", s, tr)
		}
		// Turned a quarter left about (x, y): the baseline runs upwards.
		box = svgText{s: s, x0: x - size, x1: x + size/4, y0: y - a0 - w, y1: y - a0}
	}
	return box
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// checkTextInside fails for every text whose estimated box leaves the
// viewBox.
func checkTextInside(t *testing.T, doc svgDoc) {
	t.Helper()
	if len(doc.texts) == 0 {
		t.Fatal("no text")
	}
	for _, tx := range doc.texts {
		if tx.x0 < 0 || tx.y0 < 0 || tx.x1 > doc.width || tx.y1 > doc.height {
			t.Errorf("text %q spans (%.0f,%.0f)-(%.0f,%.0f), outside the %.0fx%.0f viewBox",
				tx.s, tx.x0, tx.y0, tx.x1, tx.y1, doc.width, doc.height)
		}
	}
}

// TestSVG: the charts of a sweep over -filter_sizing and -bloom_bits are
// well-formed SVG whose text all lies inside the picture, with the run's
// context on each chart; the block-reads chart has, per sizing, a point
// measured and one promised at each bits value, one of the best sizing
// at each but 0 (no filter memory to size), and one filters-ignored point
// per value.
func TestSVG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "chart.svg")
	code, stdout, stderr := runArgs(t, append(append([]string{}, tiny...),
		"-bloom_bits", "0,4,10", "-filter_sizing", "uniform,per_level", "-benchmarks", "fillrandom,readmissing,readrandom",
		"-svg", path)...)
	if code != 0 {
		t.Fatalf("run = %d, stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stdout, "Bloom sweep") {
		t.Errorf("no sweep table:\n%s", stdout)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := parseSVG(t, data)
	checkTextInside(t, doc)
	if doc.polylines < 4 {
		t.Errorf("%d polylines", doc.polylines)
	}
	contexts := 0
	for _, tx := range doc.texts {
		if strings.HasPrefix(tx.s, "400 entries, bloom bits 0,4,10; filter sizing uniform,per_level; ") && strings.Contains(tx.s, "GOMAXPROCS") {
			contexts++
		}
	}
	if contexts != 2 {
		t.Errorf("%d charts carry the run's context, want 2", contexts)
	}
	for color, want := range map[string]int{sizingColors[0]: 6, sizingColors[1]: 6, bestColors[0]: 2, bestColors[1]: 2, palette[1]: 3} {
		if doc.circles[0][color] != want {
			t.Errorf("block-reads chart: %d markers in %s, want %d", doc.circles[0][color], color, want)
		}
	}
	for _, name := range []string{"uniform: measured, filters on", "per_level: promised (Stats.ExpectedFalsePositives)",
		"uniform's trees: the best sizing of their filter memory"} {
		if !slices.ContainsFunc(doc.texts, func(tx svgText) bool { return tx.s == name }) {
			t.Errorf("no legend %q", name)
		}
	}
}

// TestSVGOnePointAndLongLegend: at a single bits value every series has
// one point, drawn as a marker; a long series name widens the picture
// rather than running off its edge.
func TestSVGOnePointAndLongLegend(t *testing.T) {
	h := newHeader(&config{num: 10, bloomBits: []int{10}, filterSizings: []lsm.FilterSizing{lsm.FilterSizingUniform}}, "/tmp/db")
	lat := map[string]float64{"p50": 1, "p90": 2, "p99": 3, "p99_9": 4, "p99_99": 5, "max": 6}
	rm := func(filters bool, blocks uint64) *record {
		rec := &record{Benchmark: "readmissing", settingLabel: settingLabel{BloomBits: 10, FilterSizing: "uniform"}, Filters: filters, Ops: 100,
			LatencyUs: lat, Reads: &reads{FilterProbes: 200, blocks: blocks}}
		if filters {
			rec.Reads.ExpectedFalsePositives = ptr(0.02)
		}
		return rec
	}
	long := &record{Benchmark: strings.Repeat("a-very-long-workload-name-", 4), settingLabel: settingLabel{BloomBits: 10, FilterSizing: "uniform"},
		Filters: true, Ops: 1, LatencyUs: lat, Reads: &reads{}}
	var b bytes.Buffer
	if err := writeSVG(&b, h, []*record{rm(true, 2), rm(false, 270), long}); err != nil {
		t.Fatal(err)
	}
	doc := parseSVG(t, b.Bytes())
	checkTextInside(t, doc)
	// The block-reads chart: uniform measured and promised (dashed) in its
	// colour, filters off in red, a point each.
	for color, want := range map[string]int{sizingColors[0]: 2, palette[1]: 1} {
		if doc.circles[0][color] != want {
			t.Errorf("block-reads chart: %d markers in %s, want %d", doc.circles[0][color], color, want)
		}
	}
}
