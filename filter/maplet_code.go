package filter

import (
	"fmt"
	"math"
	"slices"
)

// The run-id code of a Maplet: a prefix-free code over run ids, stored in
// front of each entry's fingerprint, so that a short code leaves a long
// fingerprint. Chucky (Dayan and Twitto, SIGMOD 2021) makes the same
// trade in a cuckoo filter: most keys sit in the last run, so giving it
// a 1-bit code leaves most entries almost all of the slot.

// MaxRuns is the number of run ids a Maplet can name: a RunSet is one
// uint64, so a lookup returns its answer without allocating.
const MaxRuns = 64

// MaxRunCodeLen bounds a run's code length: the decoder is one table
// indexed by the top MaxRunCodeLen bits of a slot, 256 entries that stay in
// the L1 cache. 64 runs need at most 6 bits; 8 leaves room for skew.
const MaxRunCodeLen = 8

// RunSet is a set of run ids, bit r for run r.
type RunSet uint64

// Has reports whether run r is in s.
func (s RunSet) Has(r int) bool { return r >= 0 && r < MaxRuns && s>>r&1 != 0 }

// runCode is a canonical prefix code: the codes of runs with equal
// lengths are consecutive, shorter codes first, so lens alone determines
// it (and is all the encoding stores).
type runCode struct {
	lens   [MaxRuns]uint8  // 0: the run has no code and cannot be stored
	codes  [MaxRuns]uint16 // right-aligned codeword of each run
	maxLen uint            // longest code
	// dec maps the top maxLen bits of a slot's payload to its run and
	// code length; run 0xff marks bits no code starts with (Kraft sum < 1).
	dec [1 << MaxRunCodeLen]struct{ run, len uint8 }
}

// newRunCode checks lens (one per run id, 0 for runs without a code) and
// builds the canonical code: at least one run, every length at most
// MaxRunCodeLen, and Σ 2^-len ≤ 1 (Kraft), which is exactly when a prefix
// code with these lengths exists.
func newRunCode(lens []uint8) (*runCode, error) {
	if len(lens) == 0 || len(lens) > MaxRuns {
		return nil, fmt.Errorf("%d run code lengths, want 1..%d", len(lens), MaxRuns)
	}
	c := &runCode{}
	var kraft uint64 // Σ 2^(MaxRunCodeLen-len): at most 2^MaxRunCodeLen
	order := make([]int, 0, len(lens))
	for r, l := range lens {
		if l == 0 {
			continue
		}
		if l > MaxRunCodeLen {
			return nil, fmt.Errorf("run %d: code length %d > %d", r, l, MaxRunCodeLen)
		}
		c.lens[r] = l
		c.maxLen = max(c.maxLen, uint(l))
		kraft += 1 << (MaxRunCodeLen - l)
		order = append(order, r)
	}
	if len(order) == 0 {
		return nil, fmt.Errorf("no run has a code")
	}
	if kraft > 1<<MaxRunCodeLen {
		return nil, fmt.Errorf("code lengths %v break the Kraft inequality (sum %d/%d > 1)", lens, kraft, 1<<MaxRunCodeLen)
	}
	slices.SortStableFunc(order, func(a, b int) int { return int(c.lens[a]) - int(c.lens[b]) })
	for i := range c.dec {
		c.dec[i].run = 0xff
	}
	var code uint64
	prev := uint(c.lens[order[0]])
	for _, r := range order {
		l := uint(c.lens[r])
		code <<= l - prev
		prev = l
		c.codes[r] = uint16(code)
		// Every maxLen-bit string that starts with this code decodes to r.
		lo := code << (c.maxLen - l)
		for i := lo; i < lo+1<<(c.maxLen-l); i++ {
			c.dec[i].run, c.dec[i].len = uint8(r), uint8(l)
		}
		code++
	}
	return c, nil
}

// expCost is Σ w_r·2^len_r / Σ w_r: the factor by which the code raises a
// maplet's false-positive rate over fingerprints that fill the whole slot
// (see Maplet, "False positives").
func expCost(lens []uint8, weights []float64) float64 {
	var sum, tot float64
	for r, w := range weights {
		if w > 0 && r < len(lens) {
			sum += w * math.Exp2(float64(lens[r]))
			tot += w
		}
	}
	if tot == 0 {
		return 1
	}
	return sum / tot
}

// RunCodeLengths returns code lengths, none longer than maxLen, for runs
// whose shares of a maplet's entries are weights (any scale; a run of
// weight ≤ 0 gets a code all the same, among the longest, for it may be
// written to). They minimise Σ w_r·2^len_r, the false-positive factor of
// the code, not Σ w_r·len_r as Huffman's do: an entry with an ℓ-bit code
// keeps a fingerprint ℓ bits shorter, so it matches an absent key 2^ℓ
// times as often, and it is the mean of 2^ℓ that the rate pays. The
// algorithm is Huffman's with one change: two subtrees of weights a and b
// merge into one of weight 2(a+b), since hanging both one level deeper
// doubles what they cost (exponential Huffman; TestRunCodeLengthsOptimal
// checks it against every length vector for small trees). Lengths past
// maxLen (itself capped at MaxRunCodeLen; a maplet needs it below its
// payload bits) are avoided by raising the smallest weights until the code
// fits, which is not always the best capped code (package-merge would
// find it), but costs only runs that are nearly empty. It returns nil when no code fits: more than 2^maxLen runs, or none.
func RunCodeLengths(weights []float64, maxLen int) []uint8 {
	n := len(weights)
	maxLen = min(maxLen, MaxRunCodeLen)
	if n == 0 || n > MaxRuns || maxLen < 1 || n > 1<<maxLen {
		return nil
	}
	if n == 1 {
		return []uint8{1}
	}
	var tot float64
	for _, w := range weights {
		tot += max(w, 0)
	}
	if tot == 0 {
		tot = 1
	}
	for floor := tot * 0x1p-30; ; floor *= 2 {
		lens := expHuffman(weights, floor)
		if int(slices.Max(lens)) <= maxLen {
			return lens
		}
	}
}

// expHuffman is exponential Huffman over max(w, floor). n ≤ 64, so the
// quadratic search for the two lightest subtrees costs nothing.
func expHuffman(weights []float64, floor float64) []uint8 {
	type node struct {
		w      float64
		leaves []int
	}
	nodes := make([]node, len(weights))
	for r, w := range weights {
		nodes[r] = node{max(w, floor), []int{r}}
	}
	lens := make([]uint8, len(weights))
	for len(nodes) > 1 {
		slices.SortFunc(nodes, func(a, b node) int {
			switch {
			case a.w < b.w:
				return -1
			case a.w > b.w:
				return 1
			}
			return a.leaves[0] - b.leaves[0] // deterministic on ties
		})
		a, b := nodes[0], nodes[1]
		for _, r := range a.leaves {
			lens[r]++
		}
		for _, r := range b.leaves {
			lens[r]++
		}
		merged := node{2 * (a.w + b.w), append(append([]int(nil), a.leaves...), b.leaves...)}
		slices.Sort(merged.leaves)
		nodes = append(nodes[2:], merged)
	}
	return lens
}
