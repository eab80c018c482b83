package filter

import (
	"errors"
	"fmt"
)

// Sentinel errors of the quotient filter. Test for them with errors.Is.
var (
	// ErrFull is returned by Insert when every slot is taken, by Merge
	// when the union would not fit, and by Grow when the remainder would
	// shrink to zero bits (the filter is full for good).
	ErrFull = errors.New("filter: quotient filter full")
	// ErrIncompatible is returned by NewQuotient for unusable parameters
	// and by Merge and Subtract when the two filters' fingerprints
	// (qbits+rbits) differ in width: such fingerprints cannot be compared.
	ErrIncompatible = errors.New("filter: incompatible quotient filter parameters")
	// ErrMissing is returned by Subtract when the subtrahend holds a
	// fingerprint occurrence the filter does not.
	ErrMissing = errors.New("filter: fingerprint to subtract not present")
)

// Supported parameter ranges. maxQuotientQBits caps memory at 2^32 slots;
// the fingerprint (qbits+rbits) is taken from one 64-bit hash, so it cannot
// be wider than 64 bits.
const (
	maxQuotientQBits = 32
	maxQuotientFP    = 64
)

// Quotient is a counting quotient filter: an approximate multiset of 64-bit
// key hashes that, unlike a Bloom filter, supports deleting, merging,
// subtracting and growing. The mutable level of the LSM tracks its keys in
// one (docs/design.md, "The filters and their three jobs", job 2).
//
// # How a hash is stored
//
// The fingerprint of a hash h is its top qbits+rbits bits. Its top qbits are
// the quotient, the slot the fingerprint belongs in (its canonical slot);
// the next rbits are the remainder, the only part stored. All fingerprints
// with the same quotient form a run, kept sorted by remainder; runs of
// consecutive quotients that push into each other form a cluster, which may
// wrap around the end of the table. Because the fingerprint is a prefix of
// the hash, Grow and Merge between different qbits are a pure re-split of
// fingerprints: quotient' = fp >> rbits', remainder' = fp & (2^rbits' - 1).
//
// # Layout and why
//
// Each slot carries the classic three metadata bits (Bender et al., "Don't
// thrash: how to cache your hash on flash"): is_occupied (some fingerprint
// has this slot as its canonical slot), is_continuation (this slot continues
// the run of the slot before), is_shifted (the fingerprint here is not in its
// canonical slot). The rank-and-select layout of the counting quotient filter
// (Pandey et al.) is faster at very high load but needs per-block offsets and
// overflow slots instead of wrap-around; the three bits keep the code close
// to the seeds and the paper a reader will find, and we recover most of the
// speed by storing them the way the rank-and-select filter does: slots are
// grouped in blocks of 64, and each block is 3+rbits uint64 words — one word
// per metadata bit, then the 64 packed remainders. Finding a run (walk back
// to the cluster start, count occupied quotients, skip that many runs) is
// then word-parallel: popcount and select over 64 slots at a time, and a
// lookup touches one or two cache lines in the common case.
//
// Counting: a key inserted k times occupies k slots holding equal
// remainders, next to each other in the sorted run. Delete removes one of
// them. This is the multiset quotient filter of the paper; the counting
// quotient filter's variable-length counters save space for very frequent
// keys, which a memtable (one entry per key version) does not have.
//
// # Invariants
//
//  1. A slot is empty exactly when its is_occupied and is_shifted bits are
//     both 0; an empty slot has is_continuation 0 and remainder 0 (so the
//     encoding of a multiset is canonical).
//  2. Runs appear in the table in cyclic quotient order; within a run,
//     remainders are non-decreasing; a run starts at or after its canonical
//     slot (cyclically), and every slot from the canonical slot to the run's
//     end is non-empty.
//  3. Len() equals the number of non-empty slots and never exceeds Slots():
//     every slot can be used (inserts succeed up to 100% load, ever slower
//     past 90%; TestQuotientFillToFull), and Insert into a full filter
//     returns ErrFull, changing nothing, instead of degrading.
//  4. No sequence of Insert and Delete of inserted keys gives a false
//     negative.
//
// UnmarshalBinary checks 1-3 on decoded bytes, so they hold for every
// Quotient however it was made.
//
// # False positives and probes
//
// An absent key is reported present when its fingerprint equals a stored
// one. With n distinct random fingerprints of qbits+rbits bits,
// FPR = 1 - (1 - 2^-(q+r))^n ≈ 1 - exp(-α·2^-rbits) ≈ α·2^-rbits, where
// α = n/2^qbits is the load factor. Measured by MeasureQuotient (qbits=16,
// rbits=8, 10^6 absent 9-byte keys per row, seed 1), printed by
// `MONBAN_PRINT=1 go test -run TestQuotientFPRTable -v ./filter/`, which
// also bounds every FPR within 10% of theory (at least 4.4σ wide):
//
//	load  keys   FPR      theory   ratio  run-scan  cluster-span  occupied (1-e^-α)
//	0.50  32768  0.00192  0.00195  0.984  0.46       0.74         0.395 (0.393)
//	0.75  49152  0.00296  0.00293  1.011  0.67       3.49         0.528 (0.528)
//	0.90  58982  0.00354  0.00351  1.009  0.79      25.96         0.594 (0.593)
//	0.95  62259  0.00364  0.00370  0.981  0.83      92.27         0.613 (0.613)
//
// "run-scan" is remainders compared per absent-key lookup (0 when the
// quotient is unoccupied, which "occupied" measures); "cluster-span" is the
// slots from the cluster start to the last slot compared, what a
// slot-by-slot implementation would walk (ours reads them 64 at a time, so
// 92 slots are 2-3 words). Clusters grow as in linear probing, where a miss
// scans ½(1 + 1/(1-α)²) slots to the end of its cluster (50 at 90% load,
// 200 at 95%; our span is shorter, as it stops at the run and costs 0 for
// an unoccupied quotient). Past 90% load clusters get long, which is why
// updates get slower there: they move a cluster's tail by one slot.
//
// # Speed
//
// No operation allocates. A lookup in a filter that fits in the CPU cache
// costs tens of nanoseconds; one that does not costs about a cache and TLB
// miss. Updates near full load pay for moving cluster tails. BenchmarkQuotient
// measures them; docs/benchmarks.md, "The quotient filter", has a run.
//
// # Concurrency
//
// A Quotient is not safe for concurrent use: callers lock. MayContain does not
// modify the filter, so concurrent MayContain calls with no writer are safe.
type Quotient struct {
	qbits, rbits uint   // qbits: log2(slots), which split uses; a Maplet's table, of any size, leaves it 0
	slots        uint64 // 2^qbits, or a Maplet's multiple of 64
	nblocks      uint64 // ceil(slots/64)
	stride       uint64 // words per block: 3 metadata words + rbits remainder words
	rmask        uint64 // 2^rbits - 1
	lastValid    uint64 // bits of the last block that are real slots
	n            int    // occurrences stored
	words        []uint64
}

// NewQuotient returns an empty filter of 2^qbits slots whose fingerprints are
// qbits+rbits bits wide. qbits must be in [1, 32], rbits at least 1, and
// qbits+rbits at most 64; otherwise the error wraps ErrIncompatible.
func NewQuotient(qbits, rbits uint) (*Quotient, error) {
	if qbits < 1 || qbits > maxQuotientQBits || rbits < 1 || qbits+rbits > maxQuotientFP {
		return nil, fmt.Errorf("%w: NewQuotient(qbits=%d, rbits=%d): want 1 <= qbits <= %d, rbits >= 1, qbits+rbits <= %d",
			ErrIncompatible, qbits, rbits, maxQuotientQBits, maxQuotientFP)
	}
	f := &Quotient{}
	f.init(qbits, rbits)
	return f, nil
}

// init sets the geometry and allocates zeroed words. Callers have checked
// the parameters.
func (f *Quotient) init(qbits, rbits uint) {
	f.initWords(1<<qbits, rbits, make([]uint64, quotientWords(1<<qbits, rbits)))
	f.qbits = qbits
}

// quotientWords is the length of the table of a filter of the given slots
// and rbits-bit remainders.
func quotientWords(slots uint64, rbits uint) uint64 {
	return (slots + 63) / 64 * (3 + uint64(rbits))
}

// initWords sets the geometry of a table of slots (a power of two, or a
// multiple of 64: only a table's last block may have fewer than 64 slots,
// and only when it is the only one) over zeroed words the caller
// allocated (a Maplet's lie outside the Go heap), of length
// quotientWords(slots, rbits). It leaves qbits 0: init sets it.
func (f *Quotient) initWords(slots uint64, rbits uint, words []uint64) {
	f.qbits, f.rbits = 0, rbits
	f.slots = slots
	f.nblocks = (f.slots + 63) / 64
	f.stride = 3 + uint64(rbits)
	f.rmask = 1<<rbits - 1
	f.lastValid = ^uint64(0)
	if f.slots < 64 {
		f.lastValid = 1<<f.slots - 1
	}
	f.n = 0
	f.words = words
}

// QBits returns the number of quotient bits: the filter has 2^QBits slots.
func (f *Quotient) QBits() uint { return f.qbits }

// RBits returns the number of remainder bits stored per slot.
func (f *Quotient) RBits() uint { return f.rbits }

// Slots returns the number of slots, 2^QBits, which is also the capacity.
func (f *Quotient) Slots() int { return int(f.slots) }

// Len returns the number of occurrences stored, duplicates counted.
func (f *Quotient) Len() int { return f.n }

// LoadFactor returns Len()/Slots().
func (f *Quotient) LoadFactor() float64 {
	if f.slots == 0 {
		return 0
	}
	return float64(f.n) / float64(f.slots)
}

// SizeBytes returns the memory the filter holds, for memory accounting.
func (f *Quotient) SizeBytes() int { return 8*len(f.words) + 96 }

// Clone returns an independent copy of f.
func (f *Quotient) Clone() *Quotient {
	c := *f
	c.words = append([]uint64(nil), f.words...)
	return &c
}

// split returns the quotient and remainder of hash h: the top qbits, then
// the next rbits.
func (f *Quotient) split(h uint64) (fq, fr uint64) {
	fp := h >> (64 - f.qbits - f.rbits)
	return fp >> f.rbits, fp & f.rmask
}
