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
// n fingerprints, whatever its qbits. A 64 MiB memtable of 16-byte keys and
// 100-byte values holds ~355k entries (bench64), ~2^18.5, and the combined
// filter over a few queued immutables ~2^20, so the FPR is about
// 2^-21.5..2^-20 ≈ 3e-7..1e-6: an absent key practically never costs a tree
// search, and the engine's absent-key proofs (delete elision, tombstone
// dropping) practically never fail here. 32 bits would give ~1e-4..2.5e-4;
// wider than 40 buys nothing measurable. Each bit of width costs one bit
// per slot: a slot holds rbits = 40-qbits remainder bits plus 3 metadata
// bits, so the 2^19-slot filter of that memtable takes 24 bits/slot =
// 1.5 MiB, ~2% of the memtable it describes. Growth spends one remainder
// bit per doubling; at 40 bits a filter can grow to 2^32 slots (the filter
// package's cap) and keep 8 remainder bits.
const FingerprintBits = 40

// maxLoad is the load factor past which a filter grows before the next
// insert or merge. A quotient filter's clusters lengthen like 1/(1-load)^2
// and an insert shifts a cluster's tail: insert cost doubles from 0.85 to
// 0.90 while probes stay cheap (BenchmarkFilterLoad; the table is in
// docs/benchmarks.md, "The memtable filter's load factor"). A filter lives
// between 0.425 and 0.85 after growths, and the memory given up is a few
// percent of a memtable.
const maxLoad = 0.85

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
