package main

import (
	"math"
	"math/rand/v2"
)

// ycsbZipfTheta is YCSB's ZipfianGenerator.ZIPFIAN_CONSTANT: item i of n is
// drawn with probability proportional to 1/(i+1)^0.99.
const ycsbZipfTheta = 0.99

// zipfian draws indexes 0..n-1 the way YCSB's ScrambledZipfianGenerator
// does: a Zipf rank by the method of Gray et al., "Quickly generating
// billion-record synthetic databases" (SIGMOD 1994), as in YCSB's
// ZipfianGenerator, then hashed onto the index space so that the hot keys
// are not the first ones fill wrote. One difference: YCSB draws the rank
// over a fixed 10^10 items (so zeta need not be recomputed as records are
// inserted); here it is over the n filled keys, which fill fixes before
// the phase. math/rand/v2's Zipf cannot stand in: it needs an exponent
// above 1, and YCSB's is 0.99.
//
// A zipfian is read-only after newZipfian, so workers share one; each
// brings its own *rand.Rand.
type zipfian struct {
	n            uint64
	zetan, alpha float64
	eta, half    float64 // half is 1 + 0.5^theta, the cumulative weight of ranks 0 and 1
	scramble     uint64
}

// newZipfian precomputes zeta(n, theta), a sum of n terms (tens of
// milliseconds per million keys), once per process.
func newZipfian(n uint64, seed uint64) *zipfian {
	const theta = ycsbZipfTheta
	zetan := zeta(n, theta)
	return &zipfian{
		n:        n,
		zetan:    zetan,
		alpha:    1 / (1 - theta),
		eta:      (1 - math.Pow(2/float64(n), 1-theta)) / (1 - zeta(2, theta)/zetan),
		half:     1 + math.Pow(0.5, theta),
		scramble: mix64(seed ^ 0x7a697066),
	}
}

func zeta(n uint64, theta float64) float64 {
	var sum float64
	for i := uint64(1); i <= n; i++ {
		sum += 1 / math.Pow(float64(i), theta)
	}
	return sum
}

// rank draws a Zipf rank in 0..n-1, 0 the most frequent.
func (z *zipfian) rank(r *rand.Rand) uint64 {
	uz := r.Float64() * z.zetan
	switch {
	case uz < 1:
		return 0
	case uz < z.half:
		return 1
	}
	u := uz / z.zetan
	return min(uint64(float64(z.n)*math.Pow(z.eta*u-z.eta+1, z.alpha)), z.n-1)
}

// next draws an index. Like YCSB's scrambled generator it hashes the rank
// modulo n, which is not a bijection: a few ranks share an index, as there.
func (z *zipfian) next(r *rand.Rand) uint64 {
	return mix64(z.rank(r)^z.scramble) % z.n
}
