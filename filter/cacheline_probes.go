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
	// cacheLineProbes[MaxCacheLineBitsPerKey] (20).
	MaxCacheLineProbes = 30
)

// cacheLineProbes[b] is the probe count for b bits per key: the smallest k
// whose CacheLineFPR is within 1% of the best k (bestCacheLineProbes, which
// TestCacheLineProbeTable checks this table against). Index 0 is unused.
//
// Note how it falls below the standard filter's round(b·ln 2) as b grows (9
// instead of 11 at 16 bits per key): extra probes into an already crowded
// line set bits that the line's other keys mostly set already.
var cacheLineProbes = [MaxCacheLineBitsPerKey + 1]uint8{
	0,
	1, 1, 2, 3, 3, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, // 1..16
	10, 10, 11, 11, 11, 12, 12, 12, 13, 13, 13, 14, 14, 14, 14, 15, // 17..32
	15, 15, 15, 16, 16, 16, 16, 16, 17, 17, 17, 17, 17, 17, 18, 18, // 33..48
	18, 18, 18, 18, 19, 19, 19, 19, 19, 19, 19, 20, 20, 20, 20, 20, // 49..64
}

// CacheLineProbes is the number of probes per key the cache-line filter uses
// at bitsPerKey (clamped to 1..MaxCacheLineBitsPerKey).
func CacheLineProbes(bitsPerKey int) int {
	return int(cacheLineProbes[clampBitsPerKey(bitsPerKey)])
}

func clampBitsPerKey(b int) int {
	return min(max(b, 1), MaxCacheLineBitsPerKey)
}
