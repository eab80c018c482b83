package main

import (
	"time"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
)

// histogram records operation latencies in an HdrHistogram: three
// significant digits at every scale from a nanosecond to an hour, so a
// percentile is within 0.1% of the latency it names (a log-linear bucket
// edge was within 12.5%). One per thread (no locking), merged after; about
// 270 KB each.
type histogram struct{ h *hdr.Histogram }

// histMax is the longest latency recorded as itself; longer ones (a
// stalled op, a suspended laptop) are recorded as histMax.
const histMax = time.Hour

func newHistogram() histogram { return histogram{hdr.New(1, int64(histMax), 3)} }

func (h histogram) add(d time.Duration) {
	// RecordValue fails only outside [1 ns, histMax]: clamp instead.
	_ = h.h.RecordValue(int64(min(max(d, 1), histMax)))
}

func (h histogram) merge(o histogram) { h.h.Merge(o.h) }

func (h histogram) count() int64 { return h.h.TotalCount() }

// percentile returns the p-th percentile (p in 0..100): the largest latency
// that p% of the operations took at most, to three significant digits.
func (h histogram) percentile(p float64) time.Duration {
	return time.Duration(h.h.ValueAtPercentile(p))
}

// max is the longest latency recorded, to three significant digits.
func (h histogram) max() time.Duration { return time.Duration(h.h.Max()) }

// percentiles are the ones -histogram prints, -json carries and the SVG
// draws, with their names; max follows them everywhere.
var percentiles = []struct {
	p    float64
	name string
}{{50, "p50"}, {90, "p90"}, {99, "p99"}, {99.9, "p99.9"}, {99.99, "p99.99"}}
