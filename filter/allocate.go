package filter

import (
	"cmp"
	"math"
	"slices"
)

// AllocateBitsPerKey sizes the filters of the runs an absent-key lookup
// probes, one filter per run (each L0 table, each deeper level), for the
// fewest expected false positives in the memory that uniform sizing would
// spend, when every lookup probes every run: AllocateProbedBitsPerKey with
// every probes[i] = 1. The result minimises Σ FPR(bits[i]), the expected
// number of runs answering "maybe" to a key in none of them
// (ExpectedFalsePositives). This is Monkey's allocation (Dayan,
// Athanassoulis and Idreos, "Monkey: Optimal Navigable Key-Value Store",
// SIGMOD 2017) on the cache-line filter's own FPR curve.
func AllocateBitsPerKey(entries []float64, avgBitsPerKey float64) []float64 {
	return AllocateProbedBitsPerKey(entries, nil, avgBitsPerKey)
}

// AllocateProbedBitsPerKey is AllocateBitsPerKey for lookups that probe run
// i's filter with probability probes[i] (nil: 1 for every run). entries[i]
// is run i's key count; the result is its bits per key, with
// Σ entries[i]·bits[i] = avgBitsPerKey·Σ entries[i], which minimises
// Σ probes[i]·FPR(bits[i]), the expected data blocks an absent key reads
// for nothing.
//
// A lookup in an LSM probes a deeper level's filter only when one of the
// level's tables covers the key: a level that covers a fifth of the key
// range costs a fifth of its FPR per lookup, and bits spent on it buy a
// fifth as much as Monkey's objective, which counts every run as probed,
// assumes.
//
// # Derivation
//
// Minimise Σ p_i·F(b_i) subject to Σ n_i·b_i = M. With a multiplier λ,
// every run not at a bound has p_i·F'(b_i) = −λ·n_i: the expected false
// positives a run sheds per bit of memory, −p_i·F'(b_i)/n_i, is the same λ
// for all of them, else moving memory from the run where it buys least to
// the one where it buys most would lower the sum. For the standard formula
// at its best k, F(b) = e^(−c·b) with c = (ln 2)², so F' = −c·F and the
// condition reads F(b_i) = λ·(n_i/p_i)/c: each run's FPR is proportional to
// its density n_i/p_i, its entries per lookup that probes it. With every
// p_i = 1 that is Monkey's rule, FPR in proportion to entries: a run ten
// times larger gets ln 10/c ≈ 4.8 fewer bits per key, and the largest
// level, which holds most of the memory, gives up a little while the small
// ones gain a lot. A run probed by a fifth of the lookups is sized as one
// five times larger.
//
// The cache-line curve falls more slowly as bits grow (crowded lines
// dominate): c(b) = −d ln F/db is ~0.45 at 10 bits per key and ~0.34 at 20.
// The condition becomes c(b_i)·F(b_i) = λ·n_i/p_i, so the FPR of a small,
// well funded run is higher than proportional, and the bits it needs for
// each factor of ten in density grow with b (~5 at 10 bits per key). There
// is no closed form: λ is found by bisection until the budget is spent, and
// each run's b_i by inverting F' on fprCurve, the envelope of CacheLineFPR
// over probe counts made convex (see fprCurve for why the steps in the
// probe count require that). That curve is within 1.5% of the builder's
// rate from 6 bits per key up (4% below), so the allocation is optimal for
// the filters really built to about that much.
//
// # Bounds
//
// Each b_i is 0 or within [1, MaxCacheLineBitsPerKey], the builder's range
// (below 1 bit per key a filter removes little: FPR 0.86 at 0.5, against
// 0.63 at 1 and 1 without). A run given 0 gets no filter
// (FPR 1; build none, as sstable.WriterOptions.BloomBitsPerKey 0 does): the
// optimum when the budget cannot fund every run usefully, e.g. 1 bit per key
// over levels of 10% and 90% is best spent as 10 bits per key on the small
// level and none on the large one (Σ FPR 1.01, against 1.26 uniform). Which
// runs go without is searched among the densest few, the largest few and
// the least probed few. With every p_i equal the three orders are one, and
// exact: if a run has no filter and a larger one has, giving the larger
// one's memory to the smaller run instead is never worse, so the
// filterless runs are the largest few. With unequal p_i that exchange
// holds only when the larger run is also probed no more often; when the
// larger run is probed less, going without costs the smaller run more and
// frees less, so for two runs the one to go without is the larger or the
// less probed. The densest runs free the most memory (n_i·b_i) per false
// positive they add (p_i), the largest the most memory at all, the least
// probed add the fewest; the orders together find the optimum for two
// runs (TestAllocateTwoRunsExhaustive: densest and largest alone missed a
// small, rarely probed run going without so that a large one gets its 1
// bit per key), and beyond two they are a heuristic. It
// matters only at budgets too small to give every run a useful filter
// (about 2 bits per key and below). Each count of filterless runs is tried
// while their Σ p_i is below the best sum found (where the all-filtered sum
// is below every p_i, it is the only solution computed).
//
// Runs with no entries cost nothing at any size and get the maximum; runs
// no lookup probes (p_i ≤ 0) gain nothing from a filter and get none.
//
// The budget is spent to within rounding unless filterless runs remain and
// what is left could not give any of them 1 bit per key. avgBitsPerKey ≥
// MaxCacheLineBitsPerKey gives every run the maximum; avgBitsPerKey ≤ 0 or
// NaN gives none a filter. With one run, or runs of equal size and probe
// rate, the result is uniform: avgBitsPerKey for each (for
// avgBitsPerKey ≥ 1).
//
// Its cost grows with the number of runs: tens of µs of CPU for 32, about
// a tenth of a millisecond for 64 (BenchmarkAllocateBitsPerKey), small
// beside the flush or compaction that calls it once. The first call in a process builds
// the curve, which takes ~30 ms (BenchmarkFPRCurve).
func AllocateProbedBitsPerKey(entries, probes []float64, avgBitsPerKey float64) []float64 {
	bits := make([]float64, len(entries))
	probed := func(i int) float64 {
		if probes == nil {
			return 1
		}
		return probes[i]
	}
	// Runs with entries and probes; lnDensity[i] is ln(n_i/p_i).
	var total float64
	var runs []int
	lnDensity := make([]float64, len(entries))
	for i, n := range entries {
		switch {
		case !(n > 0):
			bits[i] = MaxCacheLineBitsPerKey
		case !(probed(i) > 0):
			total += n // spends none of the budget, which stays the others'
		default:
			total += n
			runs = append(runs, i)
			lnDensity[i] = math.Log(n) - math.Log(probed(i))
		}
	}
	if len(runs) == 0 || !(avgBitsPerKey > 0) {
		return bits
	}
	// The orders in which runs go without a filter: densest first, and
	// with probe rates also largest first and least probed first.
	orders := [][]int{slices.Clone(runs)}
	slices.SortStableFunc(orders[0], func(a, b int) int { return cmp.Compare(lnDensity[b], lnDensity[a]) })
	if probes != nil {
		largest, leastProbed := slices.Clone(runs), slices.Clone(runs)
		slices.SortStableFunc(largest, func(a, b int) int { return cmp.Compare(entries[b], entries[a]) })
		slices.SortStableFunc(leastProbed, func(a, b int) int { return cmp.Compare(probes[a], probes[b]) })
		orders = append(orders, largest, leastProbed)
	}
	budget := min(avgBitsPerKey, MaxCacheLineBitsPerKey) * total

	c := cacheLineCurve()
	best := math.Inf(1)
	trial := make([]float64, len(entries))
	for o, order := range orders {
		rest := 0.0 // entries of the runs with filters
		for _, i := range order {
			rest += entries[i]
		}
		off := 0.0 // Σ p_i of the runs without
		// Every order starts from the same all-filtered solution: the
		// later ones skip it.
		for k := min(o, 1); k <= len(order) && off < best; k++ {
			if k > 0 {
				rest -= entries[order[k-1]]
				off += probed(order[k-1])
			}
			if rest > budget && k < len(order) {
				continue // cannot give every filtered run 1 bit per key
			}
			for _, i := range order[:k] {
				trial[i] = 0
			}
			sum := off
			if k < len(order) {
				sum += c.spend(entries, lnDensity, probed, order[k:], budget, trial)
			}
			if sum < best {
				best = sum
				for _, i := range order {
					bits[i] = trial[i]
				}
			}
		}
	}
	return bits
}

// spend sets bits[i] for the runs in runs (each with entries[i] > 0 and
// probed(i) > 0, lnDensity[i] the logarithm of their ratio) so that they
// spend budget between them, at least 1 and at most Max bits per key each,
// with the least Σ probed(i)·FPR on the curve, and returns that sum.
func (c *fprCurve) spend(entries, lnDensity []float64, probed func(int) float64, runs []int, budget float64, bits []float64) float64 {
	// At multiplier λ each run takes the b where the curve falls by λ·n/p
	// per bit per key: b(ln λ + ln n/p) by bitsWhereSlope. Memory spent falls
	// continuously as λ rises; bisect ln λ over a range that takes every run
	// from the maximum to 1 bit per key.
	minLn, maxLn := math.Inf(1), math.Inf(-1)
	for _, i := range runs {
		minLn, maxLn = min(minLn, lnDensity[i]), max(maxLn, lnDensity[i])
	}
	last := len(c.top) - 1
	lo := c.top[last] + c.slope[last]*(c.x[last+1]-c.x[last]) - maxLn - 1 // every run at Max
	hi := c.top[0] - minLn + 1                                            // every run at 1
	set := func(lnLambda float64) (memory float64) {
		for _, i := range runs {
			bits[i] = c.bitsWhereSlope(lnLambda + lnDensity[i])
			memory += entries[i] * bits[i]
		}
		return memory
	}
	// 64 halvings narrow the range (tens of units of ln λ) past float64's
	// resolution, so the budget is met to rounding.
	for range 64 {
		mid := (lo + hi) / 2
		if set(mid) > budget {
			lo = mid // spending too much: raise λ
		} else {
			hi = mid
		}
	}
	set(hi) // the side that does not overspend
	var sum float64
	for _, i := range runs {
		sum += probed(i) * c.fpr(bits[i])
	}
	return sum
}

// ExpectedFalsePositives is the expected number of filters answering
// "maybe" to a key in none of the runs, when run i's filter is built at
// bitsPerKey[i]: Σ CacheLineFPR at each setting with the builder's probe
// count, counting 1 for a run without a filter (bitsPerKey[i] ≤ 0) and
// clamping settings as the builder does. It is the quantity
// AllocateBitsPerKey minimises (on fprCurve, its convex stand-in for the
// builder's rate), for reporting; it costs a Poisson sum per run
// (microseconds each).
func ExpectedFalsePositives(bitsPerKey []float64) float64 {
	var sum float64
	for _, b := range bitsPerKey {
		if !(b > 0) {
			sum++
			continue
		}
		b = clampBitsPerKey(b)
		sum += CacheLineFPR(b, cacheLineProbesFor(b))
	}
	return sum
}
