package filter

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestRunCodeLengthsOptimal checks exponential Huffman against every
// length vector (lengths 1..n, Kraft sum ≤ 1) for random weights of 2 to 6
// runs: none has a smaller Σ w·2^ℓ.
func TestRunCodeLengthsOptimal(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 29))
	for trial := range 300 {
		n := 2 + trial%5
		w := make([]float64, n)
		for i := range w {
			w[i] = math.Exp(4 * rng.Float64() * rng.Float64() * 3) // skewed, sometimes very
		}
		got := expCost(RunCodeLengths(w, MaxRunCodeLen), w)
		best := math.Inf(1)
		lens := make([]uint8, n)
		var walk func(i int, kraft float64)
		walk = func(i int, kraft float64) {
			if i == n {
				best = min(best, expCost(lens, w))
				return
			}
			for l := 1; l <= n; l++ {
				if k := kraft + math.Exp2(-float64(l)); k <= 1+1e-12 {
					lens[i] = uint8(l)
					walk(i+1, k)
				}
			}
		}
		walk(0, 0)
		if got > best*(1+1e-9) {
			t.Fatalf("weights %v: code costs %v, best %v", w, got, best)
		}
	}
}

// TestRunCode checks that the canonical code is prefix-free and decodes
// every codeword, and that lengths breaking the Kraft inequality or too
// long are refused.
func TestRunCode(t *testing.T) {
	for _, lens := range [][]uint8{
		RunCodeLengths(treeShares(7), MaxRunCodeLen),
		RunCodeLengths(make([]float64, MaxRuns), MaxRunCodeLen),
		RunCodeLengths(append(treeShares(6), 0.001, 0.001, 0.001, 0.001), 4),
		{1, 0, 2, 0, 3, 3},
		{MaxRunCodeLen},
	} {
		c, err := newRunCode(lens)
		if err != nil {
			t.Fatalf("%v: %v", lens, err)
		}
		for r, l := range lens {
			if l == 0 {
				continue
			}
			for s, k := range lens {
				if s == r || k == 0 || k < l {
					continue
				}
				if uint64(c.codes[s])>>(k-l) == uint64(c.codes[r]) {
					t.Fatalf("%v: code of run %d is a prefix of run %d's", lens, r, s)
				}
			}
			d := c.dec[uint64(c.codes[r])<<(c.maxLen-uint(l))]
			if int(d.run) != r || d.len != l {
				t.Fatalf("%v: run %d decodes as run %d length %d", lens, r, d.run, d.len)
			}
		}
	}
	if lens := RunCodeLengths(lsmShares(10), 4); slices.Max(lens) > 4 {
		t.Fatalf("lengths %v past the cap of 4", lens)
	}
	if lens := RunCodeLengths(lsmShares(10), 3); lens != nil {
		t.Fatalf("10 runs in 3-bit codes: %v", lens)
	}
	for _, lens := range [][]uint8{{1, 1, 1}, {MaxRunCodeLen + 1}, {0, 0}, {}} {
		if _, err := newRunCode(lens); err == nil {
			t.Fatalf("%v accepted", lens)
		}
	}
	// The tree of the docs: L0 and L1–L6, 90% of entries in L6.
	w := treeShares(7)
	lens := RunCodeLengths(w, MaxRunCodeLen)
	if lens[6] != 1 || expCost(lens, w) > 2.4 {
		t.Fatalf("7-level tree: lengths %v, factor %.3f", lens, expCost(lens, w))
	}
}
