package filter

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Measurements behind the tables in README.md: the tests bound them and
// `kvbench filters` prints them, from this one code path. Keys are
// deterministic in (seed, i); inserted and absent keys differ in their first
// byte, so every query key is truly absent and every "maybe" is a false
// positive.

// QueriesFor is how many absent keys must be queried so that a rate of p is
// measured to within rel (relative) at sigmas standard deviations:
// sigmas²·(1-p) / (rel²·p). At p = 1e-4, rel = 10%, 4σ it is 1.6·10⁷.
func QueriesFor(p, rel, sigmas float64) int {
	return int(math.Ceil(sigmas * sigmas * (1 - p) / (rel * rel * p)))
}

// testKey makes the i-th key of a set: kind 'k' for inserted, 'a' for absent.
type testKey [17]byte

func (b *testKey) hash(kind byte, seed, i uint64) uint64 {
	b[0] = kind
	binary.BigEndian.PutUint64(b[1:9], seed)
	return b.next(i)
}

// next is the hash of key i of the set hash last named: only the counter
// changes, which keeps the measuring loop cheap under the race detector.
func (b *testKey) next(i uint64) uint64 {
	binary.BigEndian.PutUint64(b[9:17], i)
	return Hash(b[:])
}

// falsePositives queries absent keys [0, queries) of seed against mayContain.
func falsePositives(mayContain func(uint64) bool, queries int, seed uint64) float64 {
	if queries <= 0 {
		return 0
	}
	var k testKey
	k.hash('a', seed, 0)
	fp := 0
	for i := range queries {
		if mayContain(k.next(uint64(i))) {
			fp++
		}
	}
	return float64(fp) / float64(queries)
}

// DesignRow is one row of the design table: a standard Bloom filter sized by
// NewBloom(N, P) and filled with exactly N keys.
type DesignRow struct {
	N          int
	P          float64 // design rate
	BitsPerKey float64 // m/N
	Hashes     int     // k
	Queries    int     // absent keys queried
	Measured   float64
	Theory     float64 // StandardFPR(BitsPerKey, Hashes)
}

// MeasureBloomDesign builds NewBloom(n, p), adds n keys and measures its
// false-positive rate over queries absent keys.
func MeasureBloomDesign(n int, p float64, queries int, seed uint64) (DesignRow, error) {
	f, err := NewBloom(n, p)
	if err != nil {
		return DesignRow{}, err
	}
	var k testKey
	for i := range n {
		f.AddHash(k.hash('k', seed, uint64(i)))
	}
	bpk := float64(f.Bits()) / float64(n)
	return DesignRow{
		N: n, P: p, BitsPerKey: bpk, Hashes: f.Hashes(), Queries: queries,
		Measured: falsePositives(f.MayContainHash, queries, seed),
		Theory:   StandardFPR(bpk, f.Hashes()),
	}, nil
}

// OverfillRow is one row of an overfill table: a filter designed for N keys
// holding Multiple·N.
type OverfillRow struct {
	Multiple  int
	Added     int
	Queries   int
	Measured  float64
	FillRatio float64
	Estimated float64 // the filter's own EstimatedFPR
	Theory    float64 // the formula at the effective bits per key (m/Added)
}

// MeasureBloomOverfill builds NewBloom(n, p) and keeps adding keys; at each
// multiple of n (ascending) it measures the rate over queries absent keys.
func MeasureBloomOverfill(n int, p float64, multiples []int, queries int, seed uint64) ([]OverfillRow, error) {
	f, err := NewBloom(n, p)
	if err != nil {
		return nil, err
	}
	var k testKey
	var rows []OverfillRow
	for _, mult := range multiples {
		if mult < 1 || mult*n < f.Added() {
			return nil, fmt.Errorf("%w: overfill multiples must be ascending and >= 1, got %v", ErrInvalidParameter, multiples)
		}
		for i := f.Added(); i < mult*n; i++ {
			f.AddHash(k.hash('k', seed, uint64(i)))
		}
		rows = append(rows, OverfillRow{
			Multiple: mult, Added: f.Added(), Queries: queries,
			Measured:  falsePositives(f.MayContainHash, queries, seed),
			FillRatio: f.FillRatio(), Estimated: f.EstimatedFPR(),
			Theory: StandardFPR(float64(f.Bits())/float64(f.Added()), f.Hashes()),
		})
	}
	return rows, nil
}

// CacheLineRow compares the cache-line filter with the standard layout at
// the same bits per key, each with its own best probe count.
type CacheLineRow struct {
	N          int
	BitsPerKey int
	Probes     int // the cache-line filter's k (CacheLineProbes)
	Queries    int
	Measured   float64 // cache-line filter
	Theory     float64 // CacheLineFPR(BitsPerKey, Probes)
	// The standard layout with N·BitsPerKey bits and StandardHashes(BitsPerKey)
	// probes: the formula, and a filter measured on the same keys.
	StandardHashes   int
	StandardQueries  int
	Standard         float64
	StandardMeasured float64
}

// MeasureCacheLine builds a cache-line filter and a standard filter of the
// same size from n keys and measures each over enough absent keys
// (QueriesFor its theoretical rate, rel, sigmas) to pin its rate to ±rel.
func MeasureCacheLine(n, bitsPerKey int, rel, sigmas float64, seed uint64) CacheLineRow {
	bitsPerKey = int(clampBitsPerKey(float64(bitsPerKey)))
	b := NewCacheLineBuilder(float64(bitsPerKey))
	kStd := StandardHashes(float64(bitsPerKey))
	std := newBloomBits(uint64(n*bitsPerKey), kStd)
	var k testKey
	for i := range n {
		h := k.hash('k', seed, uint64(i))
		b.AddHash(h)
		std.AddHash(h)
	}
	f, err := OpenCacheLine(b.Finish(nil))
	if err != nil {
		panic(err) // the encoder and decoder disagree: a bug, not input
	}
	r := CacheLineRow{
		N: n, BitsPerKey: bitsPerKey, Probes: f.Probes(),
		Theory:         CacheLineFPR(float64(bitsPerKey), f.Probes()),
		StandardHashes: kStd, Standard: StandardFPR(float64(bitsPerKey), kStd),
	}
	r.Queries = QueriesFor(r.Theory, rel, sigmas)
	r.StandardQueries = QueriesFor(r.Standard, rel, sigmas)
	r.Measured = falsePositives(f.MayContainHash, r.Queries, seed)
	r.StandardMeasured = falsePositives(std.MayContainHash, r.StandardQueries, seed)
	return r
}

// CacheLineOverfillRow is an overfill row for the cache-line filter.
type CacheLineOverfillRow struct {
	OverfillRow
	// Naive is FillRatio^k, the standard filter's estimate, which the
	// uneven line loads make too optimistic.
	Naive float64
}

// MeasureCacheLineOverfill sizes a cache-line filter for n keys at
// bitsPerKey and encodes Multiple·n keys into those lines, for each multiple.
// Theory is CacheLineFPR at the effective bits per key.
func MeasureCacheLineOverfill(n, bitsPerKey int, multiples []int, queries int, seed uint64) []CacheLineOverfillRow {
	bitsPerKey = int(clampBitsPerKey(float64(bitsPerKey)))
	lines := uint64(max(1, (n*bitsPerKey+lineBits-1)/lineBits))
	probes := CacheLineProbes(bitsPerKey)
	var k testKey
	var hashes []uint64
	var rows []CacheLineOverfillRow
	for _, mult := range multiples {
		for i := len(hashes); i < mult*n; i++ {
			hashes = append(hashes, k.hash('k', seed, uint64(i)))
		}
		f, err := OpenCacheLine(appendCacheLine(nil, lines, probes, hashes))
		if err != nil {
			panic(err)
		}
		fill := f.FillRatio()
		rows = append(rows, CacheLineOverfillRow{
			OverfillRow: OverfillRow{
				Multiple: mult, Added: len(hashes), Queries: queries,
				Measured:  falsePositives(f.MayContainHash, queries, seed),
				FillRatio: fill, Estimated: f.EstimatedFPR(),
				Theory: CacheLineFPR(float64(lines*lineBits)/float64(len(hashes)), probes),
			},
			Naive: math.Pow(fill, float64(probes)),
		})
	}
	return rows
}
