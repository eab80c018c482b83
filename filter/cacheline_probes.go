package filter

// Cache-line geometry and the probe count chosen for each bits-per-key
// setting. docs/format.md, "Cache-line Bloom filter", is the byte-level
// description; these constants are what it refers to.

const (
	// lineBytes is the size of one line: the x86-64 cache line, so a query
	// touches exactly one line of memory (one cache miss on a large filter).
	lineBytes = 64
	// lineBits is the number of bits in a line; a probe is a 9-bit index.
	lineBits = lineBytes * 8

	// MaxCacheLineBitsPerKey is the largest bits-per-key setting; larger
	// requests are clamped to it. At 64 bits per key the cache-line filter's
	// FPR is ~1e-8, and more bits buy almost nothing because the crowded
	// lines dominate (see CacheLineFPR).
	MaxCacheLineBitsPerKey = 64
	// MaxCacheLineProbes is the largest probe count a version-1 encoding may
	// carry; OpenCacheLine rejects more. The builder never uses more than
	// CacheLineProbes(MaxCacheLineBitsPerKey) (20).
	MaxCacheLineProbes = 30
)

// cacheLineProbeSteps[k-2] is the bits per key at which the probe count
// steps from k-1 to k: CacheLineProbes(b) is 1 plus the number of steps at or
// below b. Each is where the rule (bestCacheLineProbes: the smallest k whose
// CacheLineFPR is within 1% of the best k) changes its answer, found by
// bisection on the rule and rounded to 1e-6. The rule's answer never
// decreases as bits per key grow, so one step per probe count describes it:
// TestCacheLineProbeTable checks the rule on both sides of every step, at
// every integer setting and on a 1/8 grid from 1 to 64.
//
// Note how the probe count falls below the standard filter's round(b·ln 2)
// as b grows (9 instead of 11 at 16 bits per key): extra probes into an
// already crowded line set bits that the line's other keys mostly set
// already.
var cacheLineProbeSteps = [...]float64{
	2.130033, 3.661956, 5.209926, 6.807592, 8.479270, // 2..6 probes
	10.248652, 12.140807, 14.183151, 16.406209, 18.844405, // 7..11
	21.536924, 24.528728, 27.871747, 31.626301, 35.862801, // 12..16
	40.663792, 46.126426, 52.365453, 59.516854, // 17..20
}

// CacheLineProbes is the number of probes per key the cache-line filter uses
// at bitsPerKey (clamped to 1..MaxCacheLineBitsPerKey). It keeps an int
// parameter for its callers; the builder takes fractional settings, whose
// probe count is cacheLineProbesFor.
func CacheLineProbes(bitsPerKey int) int {
	return cacheLineProbesFor(float64(bitsPerKey))
}

// cacheLineProbesFor is the probe count at a fractional bitsPerKey (clamped
// to 1..MaxCacheLineBitsPerKey).
func cacheLineProbesFor(bitsPerKey float64) int {
	b := clampBitsPerKey(bitsPerKey)
	k := 1
	for _, step := range cacheLineProbeSteps {
		if b >= step {
			k++
		}
	}
	return k
}

// clampBitsPerKey limits a bits-per-key setting to the range the builder
// accepts, 1..MaxCacheLineBitsPerKey; NaN becomes 1.
func clampBitsPerKey(b float64) float64 {
	if !(b >= 1) {
		return 1
	}
	return min(b, MaxCacheLineBitsPerKey)
}
