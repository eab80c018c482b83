package filter

import (
	"math"
	"slices"
	"sort"
	"sync"
)

// fprCurve is the cache-line filter's false-positive rate as a smooth,
// convex, decreasing function of bits per key on [1, MaxCacheLineBitsPerKey]:
// the curve AllocateBitsPerKey optimises over.
//
// The rate a builder reaches at b bits per key, CacheLineFPR(b, probes(b)),
// is not smooth: the probe count changes in steps, and at each step the rate
// jumps by up to 1% (the probe rule accepts a k within 1% of the best). Its
// lower envelope, min over k of CacheLineFPR(b, k), is continuous but not
// convex either: where the best k changes, the envelope switches from one
// curve to a steeper one, a small concave kink. A Lagrange multiplier needs a
// convex curve, so this is the envelope sampled every curveStep bits per key
// and replaced by its lower convex hull in (b, ln FPR), interpolated linearly
// in ln FPR between the hull's knots. Log-convex implies convex. The hull
// bridges each kink with a chord, and lies below the envelope there: by up
// to 3.4% near 2 bits per key, where the step from one probe to two makes
// the largest kink, under 1% from 6 bits per key up and under 0.4% from 12.
// Against the builder's rate (up to 1% above the envelope) the curve is
// within 4% below 6 bits per key and 1.5% from 6 up; TestFPRCurve checks
// both bounds on a 1/32 grid.
type fprCurve struct {
	x, y  []float64 // knots: bits per key and ln FPR; x[0] = 1, x[len-1] = MaxCacheLineBitsPerKey
	slope []float64 // slope[j]: d ln FPR/db on [x[j], x[j+1]]; negative, increasing in j
	// top[j] = ln(-slope[j]) + y[j] is ln(-dFPR/db) at the left end of
	// segment j. Along the curve ln(-dFPR/db) falls continuously inside a
	// segment (by slope[j]·Δb) and by a jump at each knot, so top is
	// decreasing: the key to inverting the derivative (bitsWhereSlope).
	top []float64
}

// curveStep is the sampling interval of the envelope in bits per key: at
// 1/16 the bounds above hold, and building the curve costs 1009 envelope
// points of ~3 Poisson sums each (~27 ms, once per process;
// BenchmarkFPRCurve).
const curveStep = 1.0 / 16

// cacheLineCurve is built on first use: the Poisson sums are too slow for
// package initialisation in every program that imports filter.
var cacheLineCurve = sync.OnceValue(newFPRCurve)

func newFPRCurve() *fprCurve {
	n := int(math.Round((MaxCacheLineBitsPerKey-1)/curveStep)) + 1
	c := &fprCurve{}
	for i := range n {
		b := 1 + float64(i)*curveStep
		y := math.Log(minCacheLineFPR(b))
		// Lower convex hull, Andrew's monotone chain: drop the last knot
		// while it lies on or above the chord from the one before it to
		// the new point.
		for m := len(c.x); m >= 2; m-- {
			x0, y0, x1, y1 := c.x[m-2], c.y[m-2], c.x[m-1], c.y[m-1]
			if (y1-y0)*(b-x0) < (y-y0)*(x1-x0) {
				break
			}
			c.x, c.y = c.x[:m-1], c.y[:m-1]
		}
		c.x, c.y = append(c.x, b), append(c.y, y)
	}
	for j := range len(c.x) - 1 {
		s := (c.y[j+1] - c.y[j]) / (c.x[j+1] - c.x[j])
		c.slope = append(c.slope, s)
		c.top = append(c.top, math.Log(-s)+c.y[j])
	}
	return c
}

// segment is the j with x[j] ≤ b ≤ x[j+1], for b within [1, Max].
func (c *fprCurve) segment(b float64) int {
	j, _ := slices.BinarySearch(c.x, b)
	return min(max(j-1, 0), len(c.slope)-1)
}

// fpr is the curve's rate at b bits per key, clamped to [1, Max].
func (c *fprCurve) fpr(b float64) float64 {
	b = clampBitsPerKey(b)
	j := c.segment(b)
	return math.Exp(c.y[j] + c.slope[j]*(b-c.x[j]))
}

// bitsWhereSlope is the b in [1, Max] at which the curve falls by e^u per bit
// per key (-dFPR/db = e^u), or the bound at which it comes nearest: 1 when
// the curve is nowhere that steep, Max when it is everywhere steeper. Where
// the derivative jumps at a knot, every e^u inside the jump is answered by
// that knot. The answer falls continuously as u rises.
func (c *fprCurve) bitsWhereSlope(u float64) float64 {
	// j: the last segment whose left end is at least as steep as e^u.
	j := sort.Search(len(c.top), func(j int) bool { return c.top[j] < u }) - 1
	if j < 0 {
		return 1 // even the first segment is flatter than e^u
	}
	// On segment j, ln(-dFPR/db) = top[j] + slope[j]·(b - x[j]) = u.
	return min(c.x[j]+(u-c.top[j])/c.slope[j], c.x[j+1])
}
