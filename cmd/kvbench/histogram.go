package main

import (
	"math/bits"
	"time"
)

// histogram records operation latencies in log-linear buckets: exact below
// 16 ns, then 8 buckets per power of two, so a percentile is within 12.5%
// of the true value at any scale. One per thread (no locking), merged after.
type histogram struct {
	counts [histBuckets]uint64
	n      uint64
	max    time.Duration
}

const histBuckets = 16 + 60*8

func histBucket(d time.Duration) int {
	v := uint64(max(d, 0))
	if v < 16 {
		return int(v)
	}
	e := bits.Len64(v) - 1 // 4..63
	mant := (v >> (e - 3)) & 7
	return min(16+(e-4)*8+int(mant), histBuckets-1)
}

// histUpper is the largest latency that lands in bucket b.
func histUpper(b int) time.Duration {
	if b < 16 {
		return time.Duration(b)
	}
	e := (b-16)/8 + 4
	mant := uint64((b-16)%8) + 8
	return time.Duration(((mant + 1) << (e - 3)) - 1)
}

func (h *histogram) add(d time.Duration) {
	h.counts[histBucket(d)]++
	h.n++
	h.max = max(h.max, d)
}

func (h *histogram) merge(o *histogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
	h.n += o.n
	h.max = max(h.max, o.max)
}

// percentile returns the upper bound of the bucket holding the p-th
// percentile (p in 0..100), capped at the largest latency seen.
func (h *histogram) percentile(p float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := uint64(p / 100 * float64(h.n))
	rank = min(max(rank, 1), h.n)
	var seen uint64
	for b, c := range h.counts {
		seen += c
		if seen >= rank {
			return min(histUpper(b), h.max)
		}
	}
	return h.max
}

// percentiles are the ones -histogram prints and the SVG draws.
var percentiles = []float64{50, 95, 99, 99.9}
