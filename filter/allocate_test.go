package filter

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/monbandb/monban/internal/cpuclock"
)

// TestMinCacheLineFPR: the scan from the builder's probe count finds the
// minimum over every k.
func TestMinCacheLineFPR(t *testing.T) {
	for i := 4; i <= 4*MaxCacheLineBitsPerKey; i += 3 {
		b := float64(i) / 4
		want := math.Inf(1)
		for k := 1; k <= MaxCacheLineProbes; k++ {
			want = min(want, CacheLineFPR(b, k))
		}
		if got := minCacheLineFPR(b); got != want {
			t.Errorf("minCacheLineFPR(%v) = %.6g, min over k is %.6g", b, got, want)
		}
	}
}

// TestFPRCurve: the curve AllocateBitsPerKey optimises is decreasing and
// log-convex, stays as close to the envelope and to the builder's own rate
// as fprCurve's documentation says, and bitsWhereSlope inverts its
// derivative.
func TestFPRCurve(t *testing.T) {
	c := cacheLineCurve()
	if c.x[0] != 1 || c.x[len(c.x)-1] != MaxCacheLineBitsPerKey {
		t.Fatalf("curve spans [%v, %v], want [1, %d]", c.x[0], c.x[len(c.x)-1], MaxCacheLineBitsPerKey)
	}
	for j, s := range c.slope {
		if s >= 0 || (j > 0 && s <= c.slope[j-1]) || (j > 0 && c.top[j] > c.top[j-1]) {
			t.Fatalf("segment %d at %v: slope %v after %v: not decreasing and log-convex", j, c.x[j], s, c.slope[max(j-1, 0)])
		}
	}
	// Worst relative gap to the envelope and to the builder's rate, below
	// 6 bits per key and from 6 up.
	var worstEnv, worstBuilder [2]float64
	for i := 0; i <= 63*32; i++ {
		b := 1 + float64(i)/32
		got, r := c.fpr(b), min(int(b/6), 1)
		worstEnv[r] = max(worstEnv[r], math.Abs(got/minCacheLineFPR(b)-1))
		worstBuilder[r] = max(worstBuilder[r], math.Abs(got/CacheLineFPR(b, cacheLineProbesFor(b))-1))
	}
	t.Logf("curve against the envelope: worst %.2f%% below 6 bits/key, %.2f%% from 6; against the builder: %.2f%%, %.2f%%",
		100*worstEnv[0], 100*worstEnv[1], 100*worstBuilder[0], 100*worstBuilder[1])
	if worstEnv[0] > 0.035 || worstEnv[1] > 0.01 || worstBuilder[0] > 0.04 || worstBuilder[1] > 0.015 {
		t.Errorf("curve too far from the envelope (%v) or the builder (%v)", worstEnv, worstBuilder)
	}

	rng := rand.New(rand.NewPCG(testSeed(t), 3))
	for range 1000 {
		b := 1 + 63*rng.Float64()
		j := c.segment(b)
		u := math.Log(-c.slope[j] * c.fpr(b)) // ln(-dFPR/db) at b
		if got := c.bitsWhereSlope(u); math.Abs(got-b) > 1e-9 {
			t.Fatalf("bitsWhereSlope(ln slope at %v) = %v", b, got)
		}
	}
	if c.bitsWhereSlope(10) != 1 || c.bitsWhereSlope(-100) != MaxCacheLineBitsPerKey {
		t.Errorf("bitsWhereSlope does not clamp to [1, Max]")
	}
	prev := 1.0
	for u := 0.0; u > -25; u -= 0.01 {
		b := c.bitsWhereSlope(u)
		if b < prev {
			t.Fatalf("bitsWhereSlope falls from %v to %v as u falls to %v", prev, b, u)
		}
		prev = b
	}
}

// modelSum is Σ probes[i]·FPR on the curve AllocateProbedBitsPerKey
// optimises, FPR 1 for a run without a filter: the objective it must be
// optimal for. probes nil probes every run.
func modelSum(bits, probes []float64) float64 {
	var s float64
	for i, b := range bits {
		p := 1.0
		if probes != nil {
			p = probes[i]
		}
		if b == 0 {
			s += p
		} else {
			s += p * cacheLineCurve().fpr(b)
		}
	}
	return s
}

// randomProbes is nil (every run probed) for a third of the calls, else a
// probe rate for each run: 1 for some, the rest log-uniform over 0.01..1,
// as levels of few tables leave much of the key range uncovered.
func randomProbes(rng *rand.Rand, n int) []float64 {
	if rng.IntN(3) == 0 {
		return nil
	}
	p := make([]float64, n)
	for i := range p {
		p[i] = 1
		if rng.IntN(3) > 0 {
			p[i] = math.Pow(100, -rng.Float64())
		}
	}
	return p
}

func uniform(n int, avg float64) []float64 {
	u := make([]float64, n)
	for i := range u {
		u[i] = avg
	}
	return u
}

// randomRuns is 1..40 runs in one of three shapes: levels growing by a
// random fanout, L0 tables of similar size above levels, and sizes spread
// log-uniformly over 1..1e9.
func randomRuns(rng *rand.Rand) []float64 {
	runs := make([]float64, 1+rng.IntN(40))
	switch rng.IntN(3) {
	case 0:
		fanout, n := 2+18*rng.Float64(), 1+1e4*rng.Float64()
		for i := range runs {
			runs[i] = math.Round(n)
			n *= fanout
		}
	case 1:
		l0 := rng.IntN(len(runs))
		for i := range runs {
			if i < l0 {
				runs[i] = math.Round(1e5 * (0.5 + rng.Float64()))
			} else {
				runs[i] = math.Round(1e5 * math.Pow(10, float64(i-l0+1)))
			}
		}
	default:
		for i := range runs {
			runs[i] = math.Round(math.Pow(10, 9*rng.Float64()))
		}
	}
	rng.Shuffle(len(runs), func(i, j int) { runs[i], runs[j] = runs[j], runs[i] })
	return runs
}

// TestAllocateBitsPerKey: over random runs, probe rates and budgets from 1
// to 25 bits per key, the allocation keeps within bounds, spends the budget
// (within 1%, or has no filterless run the rest could fund), is never worse
// than uniform, and no small transfer of memory between two runs improves
// it.
func TestAllocateBitsPerKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 4))
	rounds := 300
	if raceEnabled {
		rounds = 60
	}
	for round := range rounds {
		runs := randomRuns(rng)
		avg := 1 + 24*rng.Float64()
		probes := randomProbes(rng, len(runs))
		bits := AllocateProbedBitsPerKey(runs, probes, avg)
		var total, spent, smallestOff float64
		smallestOff = math.Inf(1)
		for i, b := range bits {
			if b != 0 && (b < 1 || b > MaxCacheLineBitsPerKey) {
				t.Fatalf("round %d: run %d of %v entries gets %v bits/key", round, i, runs[i], b)
			}
			if b == 0 {
				smallestOff = min(smallestOff, runs[i])
			}
			total += runs[i]
			spent += runs[i] * b
		}
		if budget := avg * total; math.Abs(spent-budget) > 0.01*budget {
			allMax := true
			for _, b := range bits {
				allMax = allMax && (b == 0 || b == MaxCacheLineBitsPerKey)
			}
			if !allMax || budget-spent >= smallestOff {
				t.Fatalf("round %d: %v at %v bits/key spends %v of %v: %v", round, runs, avg, spent, budget, bits)
			}
		}

		got, uni := modelSum(bits, probes), modelSum(uniform(len(runs), avg), probes)
		if got > uni*(1+1e-9) {
			t.Fatalf("round %d: %v probed %v at %v bits/key: Σ p·FPR %v, uniform %v", round, runs, probes, avg, got, uni)
		}
		// The builder's rate is at most 4% above the curve (which is below
		// the envelope, which is below the builder's rate), so against
		// uniform the filters really built may lose that much, never more.
		if probes == nil {
			if g, u := ExpectedFalsePositives(bits), ExpectedFalsePositives(uniform(len(runs), avg)); g > u*1.04 {
				t.Fatalf("round %d: %v at %v bits/key: builder's Σ FPR %v, uniform %v", round, runs, avg, g, u)
			}
		}

		c := cacheLineCurve()
		for i := range bits {
			for j := range bits {
				if i == j || bits[i] == 0 || bits[j] == 0 {
					continue
				}
				// Move 0.1% of the smaller run's memory from i to j.
				delta := 1e-3 * min(runs[i]*bits[i], runs[j]*bits[j])
				bi, bj := bits[i]-delta/runs[i], bits[j]+delta/runs[j]
				if bi < 1 || bj > MaxCacheLineBitsPerKey {
					continue
				}
				pi, pj := 1.0, 1.0
				if probes != nil {
					pi, pj = probes[i], probes[j]
				}
				if change := pi*(c.fpr(bi)-c.fpr(bits[i])) + pj*(c.fpr(bj)-c.fpr(bits[j])); change < -1e-9*got {
					t.Fatalf("round %d: %v probed %v at %v bits/key: moving memory from run %d to %d changes Σ p·FPR %v by %v",
						round, runs, probes, avg, i, j, got, change)
				}
			}
		}
	}
}

// TestAllocateTwoRunsExhaustive: for two runs, with or without probe rates,
// a scan over every split of the budget (including no filter for either
// run) finds nothing better.
func TestAllocateTwoRunsExhaustive(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed(t), 5))
	for range 40 {
		runs := []float64{math.Pow(10, 6*rng.Float64()), math.Pow(10, 6*rng.Float64())}
		avg := 0.5 + 24.5*rng.Float64()
		probes := randomProbes(rng, 2)
		got := modelSum(AllocateProbedBitsPerKey(runs, probes, avg), probes)
		budget := avg * (runs[0] + runs[1])
		best := math.Inf(1)
		for b0 := 0.0; b0 <= MaxCacheLineBitsPerKey; b0 += 1.0 / 64 {
			if b0 > 0 && b0 < 1 {
				continue
			}
			b1 := min((budget-runs[0]*b0)/runs[1], MaxCacheLineBitsPerKey)
			switch {
			case b1 < 0:
				continue
			case b1 < 1:
				b1 = 0 // too little left for a filter
			}
			best = min(best, modelSum([]float64{b0, b1}, probes))
		}
		if got > best*(1+1e-9) {
			t.Errorf("%v probed %v at %v bits/key: allocation Σ p·FPR %v, scan finds %v", runs, probes, avg, got, best)
		}
	}
}

// TestAllocateProbedBeatsUnweighted: where some runs are probed by only
// part of the lookups, the weighted allocation expects fewer false
// positives per lookup than Monkey's, which counts every run as probed.
// The first case is a 10M-key tree kvbench measured (levels of 3, 25, 161
// and 930 tables, no L0; the probe rates its readmissing counted); the
// rest are random.
func TestAllocateProbedBeatsUnweighted(t *testing.T) {
	measured := []float64{27111, 218117, 1361325, 8447546}
	probes := []float64{0.167, 0.488, 0.664, 1}
	for _, avg := range []float64{8, 12} {
		wb, mb := AllocateProbedBitsPerKey(measured, probes, avg), AllocateBitsPerKey(measured, avg)
		w, m := modelSum(wb, probes), modelSum(mb, probes)
		if w >= m {
			t.Errorf("measured tree at %v bits/key: weighted Σ p·FPR %.5f, unweighted %.5f", avg, w, m)
		}
		t.Logf("measured tree at %v bits/key: Σ p·FPR %.5f weighted %.2f, %.5f unweighted %.2f, %.5f uniform",
			avg, w, wb, m, mb, modelSum(uniform(len(measured), avg), probes))
	}
	rng := rand.New(rand.NewPCG(testSeed(t), 6))
	for round := range 200 {
		runs := randomRuns(rng)
		probes := randomProbes(rng, len(runs))
		if probes == nil {
			continue
		}
		// From 2 bits per key every run can have a useful filter, where
		// the allocation is exact.
		avg := 2 + 23*rng.Float64()
		w := modelSum(AllocateProbedBitsPerKey(runs, probes, avg), probes)
		if m := modelSum(AllocateBitsPerKey(runs, avg), probes); w > m*(1+1e-9) {
			t.Fatalf("round %d: %v probed %v at %v bits/key: weighted Σ p·FPR %v, unweighted %v", round, runs, probes, avg, w, m)
		}
	}
}

func TestAllocateEdges(t *testing.T) {
	if got := AllocateBitsPerKey(nil, 10); len(got) != 0 {
		t.Errorf("no runs: %v", got)
	}
	for _, c := range []struct {
		avg, want float64
	}{{1, 1}, {2.5, 2.5}, {10, 10}, {64, 64}, {100, MaxCacheLineBitsPerKey}, {0.5, 0}, {0, 0}, {-1, 0}, {math.NaN(), 0}} {
		if got := AllocateBitsPerKey([]float64{12345}, c.avg); math.Abs(got[0]-c.want) > 1e-9 {
			t.Errorf("one run at %v bits/key: %v, want %v", c.avg, got[0], c.want)
		}
	}
	for _, avg := range []float64{1, 3.7, 10, 25} {
		for _, b := range AllocateBitsPerKey([]float64{5e6, 5e6, 5e6, 5e6, 5e6}, avg) {
			if math.Abs(b-avg) > 1e-9 {
				t.Errorf("equal runs at %v bits/key: %v", avg, b)
			}
		}
	}
	// Runs without entries cost nothing, get the maximum, and leave the
	// others' allocation as it is without them.
	with := AllocateBitsPerKey([]float64{0, 1e5, 0, 9e5, -3}, 10)
	without := AllocateBitsPerKey([]float64{1e5, 9e5}, 10)
	if with[0] != MaxCacheLineBitsPerKey || with[2] != MaxCacheLineBitsPerKey || with[4] != MaxCacheLineBitsPerKey ||
		with[1] != without[0] || with[3] != without[1] {
		t.Errorf("empty runs: %v, without them %v", with, without)
	}
	if got := AllocateBitsPerKey([]float64{0, 0}, 10); got[0] != MaxCacheLineBitsPerKey || got[1] != MaxCacheLineBitsPerKey {
		t.Errorf("only empty runs: %v", got)
	}
	if got := ExpectedFalsePositives([]float64{0, -1, 10, 0.5}); math.Abs(got-(2+CacheLineFPR(10, 6)+CacheLineFPR(1, 1))) > 1e-12 {
		t.Errorf("ExpectedFalsePositives counts %v", got)
	}
}

// BenchmarkAllocateBitsPerKey: the cost per call for a tree of L0 tables
// above levels growing tenfold, at 10 bits per key (the curve is built
// before the timer starts); cpu-ns/op is the thread's CPU time, which other
// load on a shared machine does not inflate.
func BenchmarkAllocateBitsPerKey(b *testing.B) {
	cacheLineCurve()
	for _, shape := range []struct {
		name      string
		l0, level int
	}{{"runs=4", 0, 4}, {"runs=8", 4, 4}, {"runs=16", 10, 6}, {"runs=32", 25, 7}, {"runs=64", 57, 7}} {
		var runs []float64
		for range shape.l0 {
			runs = append(runs, 2e5)
		}
		for i := range shape.level {
			runs = append(runs, 2e6*math.Pow(10, float64(i)))
		}
		b.Run(shape.name, func(b *testing.B) {
			b.ReportAllocs()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			start := cpuclock.Thread()
			for b.Loop() {
				AllocateBitsPerKey(runs, 10)
			}
			b.ReportMetric(float64((cpuclock.Thread()-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkFPRCurve is the one-off cost of the first AllocateBitsPerKey in a
// process.
func BenchmarkFPRCurve(b *testing.B) {
	for b.Loop() {
		newFPRCurve()
	}
}
