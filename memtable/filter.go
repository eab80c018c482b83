package memtable

import (
	"fmt"
	"math/bits"

	"github.com/monbandb/monban/filter"
)

// FingerprintBits is the width (qbits + rbits) of every memtable filter and
// of the mutable level's combined filter. One width for all is what lets
// Merge and Subtract work between them; Grow keeps it (qbits+1, rbits-1).
//
// Why 40: a quotient filter's false-positive rate is about n·2^-width for
// n fingerprints, whatever its qbits. A 64 MiB memtable holds ~500k entries
// (2^19) and the combined filter over a few queued immutables ~2^21, so the
// FPR is 2^-21..2^-19 ≈ 5e-7..2e-6: an absent key practically never costs
// a tree search, and the engine's absent-key proofs (delete elision,
// tombstone dropping) practically never fail here. 32 bits would give
// ~1e-4..5e-4, wider than 40 buys nothing measurable. Each bit of width costs
// one bit per slot: a slot holds rbits = 40-qbits remainder bits plus 3
// metadata bits, so the 2^20-slot filter of a 64 MiB memtable takes
// 23 bits/slot = 2.9 MiB, under 5% of the memtable it describes. Growth
// spends one remainder bit per doubling; at 40 bits a filter can grow to
// 2^32 slots (the filter package's cap) and keep 8 remainder bits.
const FingerprintBits = 40

// maxLoad is the load factor past which a filter grows before the next
// insert or merge. Probe (cluster) length in a quotient filter grows like
// 1/(1-load)^2: ~100 slots at 90%, ~400 at 95%, and insert cost grows with
// it (see the filter package's measured table). 0.9 keeps the worst
// clusters short while wasting at most ~55% of the slots right after a
// growth.
const maxLoad = 0.9

const (
	minQBits = 6  // 64 slots: the smallest filter worth its header
	maxQBits = 30 // first-filter cap; growth may go past it
)

// qbitsFor returns the smallest qbits whose table holds n fingerprints at
// maxLoad.
func qbitsFor(n int) uint {
	slots := uint64(float64(n)/maxLoad) + 1
	q := uint(bits.Len64(slots - 1))
	return min(max(q, minQBits), maxQBits)
}

func newFilter(expected int) *filter.Quotient {
	q := qbitsFor(expected)
	f, err := filter.NewQuotient(q, FingerprintBits-q)
	if err != nil {
		// Every q in [minQBits, maxQBits] with FingerprintBits-q remainder
		// bits is a valid geometry; this can only be a programming error.
		panic(fmt.Sprintf("memtable: filter geometry q=%d r=%d: %v", q, FingerprintBits-q, err))
	}
	return f
}

// fits reports whether f can take extra more fingerprints and stay at or
// under maxLoad.
func fits(f *filter.Quotient, extra int) bool {
	return float64(f.Len()+extra) <= maxLoad*float64(f.Slots())
}
