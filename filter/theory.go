package filter

import "math"

// The false-positive formulas every table in this package is checked
// against. They take bits per key and probe counts, not filters, so the tests,
// kvbench and the probe-count table in cacheline_probes.go all use the same
// arithmetic.

// StandardFPR is the false-positive rate of a standard Bloom filter with
// bitsPerKey bits per inserted key and k probes per key: (1 - e^(-k/b))^k.
// It is the classical approximation; for the filter sizes measured here it
// agrees with the exact expectation to well under 1%.
func StandardFPR(bitsPerKey float64, k int) float64 {
	if bitsPerKey <= 0 || k < 1 {
		return 1
	}
	return math.Pow(-math.Expm1(-float64(k)/bitsPerKey), float64(k))
}

// StandardHashes is the k that minimises StandardFPR at bitsPerKey,
// round(b·ln 2), and at least 1.
func StandardHashes(bitsPerKey float64) int {
	return max(1, int(math.Round(bitsPerKey*math.Ln2)))
}

// CacheLineFPR is the false-positive rate of a cache-line Bloom filter with
// bitsPerKey bits per key and k probes per key, all inside one 512-bit line.
//
// Keys land in lines at random, so the number of keys j in the line a query
// reaches is Poisson with mean λ = 512/bitsPerKey, and that line is a small
// standard Bloom filter of 512 bits holding j keys:
//
//	FPR = Σ_j  e^(-λ)·λ^j/j!  ·  (1 - (1 - 1/512)^(j·k))^k
//
// The sum is worse than StandardFPR at the same bits per key because the
// per-line FPR is convex in j: crowded lines lose more than sparse lines
// gain. (RocksDB approximates the sum by averaging the standard formula at
// one standard deviation either side of λ; the sum itself is cheap enough.)
func CacheLineFPR(bitsPerKey float64, k int) float64 {
	if bitsPerKey <= 0 || k < 1 {
		return 1
	}
	const m = lineBits
	lambda := m / bitsPerKey
	// The Poisson mass beyond λ + 12√λ + 30 is below 1e-30: far under any
	// rate we can measure.
	jmax := int(lambda + 12*math.Sqrt(lambda) + 30)
	logMiss := math.Log1p(-1.0 / m) // ln(1 - 1/m): one probe missing a given bit
	logLambda := math.Log(lambda)
	var sum float64
	for j := 0; j <= jmax; j++ {
		lg, _ := math.Lgamma(float64(j + 1))
		pj := math.Exp(-lambda + float64(j)*logLambda - lg)
		set := -math.Expm1(float64(j*k) * logMiss) // 1 - (1-1/m)^(jk): a given bit is set
		sum += pj * math.Pow(set, float64(k))
	}
	return sum
}

// bestCacheLineProbes is the smallest k whose CacheLineFPR at bitsPerKey is
// within 1% of the minimum over k in 1..MaxCacheLineProbes. The FPR curve is
// flat near its minimum, and every probe costs time on both Add and query, so
// a probe that buys less than 1% is not worth it. This rule reproduces
// RocksDB's empirically tuned FastLocalBloom choices (6 probes at 10 bits per
// key, 9 at 16) at all but two settings from 1 to 25 bits per key. It is slow
// (a Poisson sum per k) and exists to generate and check cacheLineProbeSteps.
func bestCacheLineProbes(bitsPerKey float64) int {
	var fpr [MaxCacheLineProbes + 1]float64
	lowest := math.Inf(1)
	for k := 1; k <= MaxCacheLineProbes; k++ {
		fpr[k] = CacheLineFPR(bitsPerKey, k)
		lowest = min(lowest, fpr[k])
	}
	for k := 1; ; k++ {
		if fpr[k] <= lowest*1.01 {
			return k
		}
	}
}

// minCacheLineFPR is the lower envelope of CacheLineFPR over probe counts at
// bitsPerKey: the rate of the best k. It scans k upward from the builder's
// choice, which is never above the best (it is the smallest k within 1% of
// it), and stops when the rate rises again: CacheLineFPR is unimodal in k
// (TestMinCacheLineFPR checks against all k). About three Poisson sums.
func minCacheLineFPR(bitsPerKey float64) float64 {
	k := cacheLineProbesFor(bitsPerKey)
	best := CacheLineFPR(bitsPerKey, k)
	for k++; k <= MaxCacheLineProbes; k++ {
		f := CacheLineFPR(bitsPerKey, k)
		if f >= best {
			break
		}
		best = f
	}
	return best
}
