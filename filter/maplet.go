package filter

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"unsafe"

	"github.com/monbandb/monban/internal/offheap"
)

// ErrNoRunCode is returned by Insert and Move for a run id the maplet's code
// gives no codeword: it cannot be stored.
var ErrNoRunCode = errors.New("filter: run id has no code in this maplet")

// MapletMaxLoad is the load factor past which Insert doubles the table:
// past it clusters grow long and updates slow down (Quotient, "False
// positives and probes").
const MapletMaxLoad = 0.9

// Maplet maps key hashes to the runs of an LSM tree (an L0 table or a
// level) that may hold the key: one probe answers, for a key, which runs
// to read, so an absent key costs one filter probe at any depth instead of
// one per run (issue 29; SlimDB and Chucky keep one such filter per tree).
// It is a counting quotient filter (Quotient) whose slots hold an entry's
// run as well as its fingerprint.
//
// # Entries
//
// An entry is a (hash, run) pair; the maplet is a multiset of them. A key
// in three runs has three entries; inserting (h, r) twice stores two, and
// Remove takes one back. Lookup(h) returns the set of runs of the entries
// whose stored fingerprints match h.
//
// # How an entry is stored
//
// A maplet reads the top KeyHashBits of a hash h, the value H its key-hash
// set holds (the low bits zeroed), so that a maplet built from tables'
// key-hash sets and one filled from full hashes agree. Its table has any
// number m of slots (a power of two, or a multiple of 64), so that it can
// be sized for the load it should run at rather than to the next power of
// two. The quotient, the canonical slot, is the integer part of H·m/2^64,
// and the fingerprint bits after it are the top bits of the fraction
// (Lemire's multiply-shift: the 128-bit product's high and low words). With
// m = 2^q these are the top q bits of H and the bits that follow them. The
// slot's remainder is PayloadBits() = P bits:
//
//	[code of run: ℓ bits][top P−ℓ bits of the fraction]
//
// The code is a canonical prefix code over run ids (RunCodeLengths): the
// run most entries are in, the last level, gets the shortest code, and
// its entries the longest fingerprints. Prefix-freedom lets a lookup read
// the code off the slot's top bits (one 256-entry table) and then compare
// the P−ℓ fingerprint bits. Within a quotient run, slots are sorted by
// payload (Quotient invariant 2), so entries group by run id.
//
// # False positives
//
// An absent key matches an entry of run r when its quotient and its next
// P−ℓ_r bits equal the entry's: probability 1/m·2^-(P−ℓ_r). Summed over
// the n entries, the expected number of runs a lookup of an absent key
// names falsely, which bounds the chance it names any, is
//
//	E = α · 2^-P · Σ_r s_r·2^ℓ_r,   α = n/m the load, s_r run r's share,
//
// the quotient filter's α·2^-P raised by the code's factor C = Σ s_r·2^ℓ_r
// (expCost). C is what RunCodeLengths minimises; a fixed-width code of w
// bits has C = 2^w, so the code costs log2 C bits of fingerprint per
// entry. For seven runs, L0–L6, with 90% of entries in L6 and each level
// above a tenth of the one below, the code's lengths are 6,6,5,4,3,2,1
// and C = 2.25 (1.17 bits), against 3 bits for fixed-width ids; twenty
// L0 tables of 0.05% each and L1–L6 give C = 3.45 (1.79 bits), against 5.
// MapletFPR computes E, and TestMapletFPR and TestMapletVsPerTable bound
// the measured rate by it.
//
// Grow keeps every entry's fingerprint and so E at a fixed n, as
// Quotient.Grow does: doubling m puts the fraction's top bit into the
// quotient (H·2m/2^64 is twice H·m/2^64), halves α, and P loses a bit. The entries
// after the growth have the same short fingerprints, so E doubles with
// each doubling of n: a maplet should be made for the entries it will
// hold, and rebuilt from the keys' hashes (BuildMaplet) to get the rate
// back.
//
// # Memory
//
// 3+P bits per slot (the quotient filter's three metadata bits), so
// (3+P)/α bits per entry, whatever m is, in one allocation outside the Go heap
// (internal/offheap), which the collector neither scans nor doubles;
// Release gives it back.
//
// # Invariants
//
//  1. The table satisfies Quotient's invariants 1–3, with PayloadBits()
//     as its rbits.
//  2. Every non-empty slot's payload starts with a codeword of the code, and
//     every codeword is at most P−1 bits: each entry keeps at least one
//     fingerprint bit, which Grow moves into the quotient.
//  3. No false negatives: after any sequence of Insert, Remove and Move in
//     which only stored entries are removed or moved, and any Grow,
//     Lookup(h) holds r for every stored entry (h, r).
//  4. Lookup allocates nothing; its answer depends only on the multiset of
//     (fingerprint, run) entries, not on the order they came in.
//
// UnmarshalBinary checks 1 and 2 on decoded bytes.
//
// # Concurrency
//
// Not safe for concurrent use; concurrent Lookups with no writer are safe.
// The zero Maplet has no code and no table: it is only a target for
// UnmarshalBinary.
type Maplet struct {
	qf   Quotient
	code *runCode
	buf  *offheap.Buffer // holds qf.words
	p    uint            // payload bits: qf.rbits
	hmsk uint64          // 2^P − 1
}

// NewMaplet returns an empty maplet of the given slots with payloadBits
// per slot, and run codes of the lengths lens (lens[r] for run id r, 0 for
// runs it will not store; RunCodeLengths chooses them). slots must be a
// valid MapletSlots size, its log2 (rounded up) and payloadBits at most
// KeyHashBits together (the hash bits a fingerprint may draw on), and every code
// shorter than payloadBits; otherwise the error wraps ErrIncompatible.
func NewMaplet(slots uint64, payloadBits uint, lens []uint8) (*Maplet, error) {
	code, err := newRunCode(lens)
	if err == nil && payloadBits <= code.maxLen {
		err = fmt.Errorf("payload of %d bits leaves no fingerprint bit after a %d-bit code", payloadBits, code.maxLen)
	}
	if err == nil && (!validMapletSlots(slots) || uint(bits.Len64(slots-1))+payloadBits > KeyHashBits) {
		err = fmt.Errorf("slots=%d payloadBits=%d: want slots a power of two or a multiple of 64 in [2, 2^%d], log2(slots)+payloadBits <= %d",
			slots, payloadBits, maxQuotientQBits, KeyHashBits)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: NewMaplet: %v", ErrIncompatible, err)
	}
	m := &Maplet{code: code}
	m.alloc(slots, payloadBits)
	return m, nil
}

// MapletSlots returns the fewest slots a maplet may have that hold n
// entries at a load of at most load (in (0, 1]): a multiple of 64, or
// a power of two below 64, and at most 2^32.
func MapletSlots(n int, load float64) uint64 {
	want := uint64(math.Ceil(float64(n) / load))
	switch {
	case want <= 2:
		return 2
	case want < 64:
		return 1 << bits.Len64(want-1)
	default:
		return min((want+63)&^63, 1<<maxQuotientQBits)
	}
}

func validMapletSlots(slots uint64) bool {
	if slots < 64 {
		return slots >= 2 && slots&(slots-1) == 0
	}
	return slots%64 == 0 && slots <= 1<<maxQuotientQBits
}

// alloc gives m an empty table of the given slots in fresh off-heap
// memory; the caller releases the old one.
func (m *Maplet) alloc(slots uint64, payloadBits uint) {
	n := quotientWords(slots, payloadBits)
	m.buf = offheap.New(int(8 * n))
	words := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(m.buf.Bytes()))), n)
	m.qf.initWords(slots, payloadBits, words)
	m.p, m.hmsk = payloadBits, 1<<payloadBits-1
}

// Release gives the table's memory back. The maplet must not be used
// afterwards.
func (m *Maplet) Release() {
	m.qf.words = nil
	m.buf.Release()
	m.buf = nil
}

// PayloadBits returns the bits stored per slot besides the three metadata
// bits: a run's code and the fingerprint after it.
func (m *Maplet) PayloadBits() uint { return m.p }

// CodeLen returns the length of run r's code, 0 if it has none.
func (m *Maplet) CodeLen(r int) int {
	if r < 0 || r >= MaxRuns {
		return 0
	}
	return int(m.code.lens[r])
}

// Len returns the number of entries, duplicates counted.
func (m *Maplet) Len() int { return m.qf.n }

// Slots returns the table's capacity.
func (m *Maplet) Slots() int { return int(m.qf.slots) }

// LoadFactor returns Len()/Slots().
func (m *Maplet) LoadFactor() float64 { return m.qf.LoadFactor() }

// SizeBytes returns the memory the maplet holds: its table and its code.
func (m *Maplet) SizeBytes() int { return 8*len(m.qf.words) + int(unsafe.Sizeof(runCode{})) }

// split returns h's quotient and the P fingerprint bits after it.
func (m *Maplet) split(h uint64) (fq, fp uint64) {
	hi, lo := bits.Mul64(h&keyHashMask, m.qf.slots)
	return hi, lo >> (64 - m.p)
}

// payload is what a slot stores for fingerprint bits (from split) in run r.
func (m *Maplet) payload(fp uint64, r int) uint64 {
	l := uint(m.code.lens[r])
	return uint64(m.code.codes[r])<<(m.p-l) | fp>>l
}

// Insert adds the entry (h, run). When the table is past MapletMaxLoad it
// doubles first (Grow); it returns ErrFull, changing nothing, when it can
// neither grow nor take the entry, and an error wrapping ErrNoRunCode for a
// run without a code.
func (m *Maplet) Insert(h uint64, run int) error {
	if m.CodeLen(run) == 0 {
		return fmt.Errorf("%w: run %d", ErrNoRunCode, run)
	}
	if float64(m.qf.n+1) > MapletMaxLoad*float64(m.qf.slots) && m.canGrow() {
		_ = m.Grow() // cannot fail: canGrow
	}
	if uint64(m.qf.n) >= m.qf.slots {
		return fmt.Errorf("%w: Maplet.Insert: %d slots taken and slots=%d payloadBits=%d cannot split", ErrFull, m.qf.n, m.qf.slots, m.p)
	}
	fq, fp := m.split(h)
	m.qf.insert(fq, m.payload(fp, run))
	return nil
}

// Remove takes one entry (h, run) out and reports whether there was one.
// Like Quotient.Delete, removing an entry that was never inserted may take
// out another key's colliding entry of the same run: callers remove only
// what they inserted.
func (m *Maplet) Remove(h uint64, run int) bool {
	if m.CodeLen(run) == 0 {
		return false
	}
	fq, fp := m.split(h)
	return m.qf.deleteFP(fq, m.payload(fp, run))
}

// Move relabels one entry (h, from) as (h, to): what a compaction does to
// each key it carries from an input run to its output run, by the hash it
// computes anyway for the output table's filter. It reports false, and
// changes nothing, when there is no entry (h, from) or to has no code. The
// new entry takes the slot the old one freed, so Move never grows the
// table.
func (m *Maplet) Move(h uint64, from, to int) bool {
	if m.CodeLen(to) == 0 || !m.Remove(h, from) {
		return false
	}
	fq, fp := m.split(h)
	m.qf.insert(fq, m.payload(fp, to))
	return true
}

// Lookup returns the runs that may hold the key of hash h: every run with
// an entry whose fingerprint matches h. A run not in the set certainly
// does not hold the key (invariant 3); a run in it is wrong with the
// probability of "False positives". It reads the quotient's run of slots,
// one or two cache lines in the common case, and allocates nothing.
func (m *Maplet) Lookup(h uint64) RunSet {
	set, _ := m.LookupLines(h)
	return set
}

// LookupLines is Lookup, also returning the 64-byte lines of the table
// the lookup read: those from the first word it read to the last. The
// table starts on a line, so these are the cache lines it touched; it
// would step over one only where a run starts two blocks or more past its
// quotient, whose blocks in between it reads one word of. kvbench reports
// them as the tree-wide filter's memory accesses per lookup.
func (m *Maplet) LookupLines(h uint64) (RunSet, int) {
	f := &m.qf
	if f.n == 0 {
		return 0, 0
	}
	fq, fp := m.split(h)
	if !f.bit(qfOcc, fq) {
		return 0, 1
	}
	var set RunSet
	p, top := m.p, m.p-m.code.maxLen
	cs, k := f.clusterStart(fq)
	for i := f.selectFree(qfCont, cs, k); ; {
		v := f.rem(i)
		d := m.code.dec[v>>top]
		fpBits := p - uint(d.len)
		if v&(1<<fpBits-1) == fp>>d.len {
			set |= 1 << d.run
		}
		last := i
		i = f.next(i)
		if !f.bit(qfCont, i) {
			return set, f.linesRead(cs, last)
		}
	}
}

// canGrow reports whether Grow would succeed.
func (m *Maplet) canGrow() bool {
	return m.p-1 > m.code.maxLen && 2*m.qf.slots <= 1<<maxQuotientQBits
}

// Grow doubles the slots: each entry's top fingerprint bit becomes the
// last quotient bit, so the payload is one bit shorter and every
// fingerprint is kept (see "False positives"). It returns an error
// wrapping ErrFull, and m is unchanged, when the longest code would leave
// an entry no fingerprint bit or the slots would pass 2^32. Time is linear in
// the slots; the new table is a new allocation and the old one is
// released.
func (m *Maplet) Grow() error {
	g, err := m.Grown()
	if err != nil {
		return err
	}
	m.buf.Release()
	*m = *g
	return nil
}

// Grown is Grow into a new maplet, leaving m as it was, so that lookups
// may go on in m while the copy is made (a pass over every slot) and the
// caller then swaps the two. Errors are Grow's, with nothing allocated.
func (m *Maplet) Grown() (*Maplet, error) {
	p := m.p
	if !m.canGrow() {
		return nil, fmt.Errorf("%w: Maplet.Grow: cannot split slots=%d payloadBits=%d (longest code %d)", ErrFull, m.qf.slots, p, m.code.maxLen)
	}
	g := &Maplet{code: m.code}
	g.alloc(2*m.qf.slots, p-1)
	b := &qfBuilder{f: &g.qf}
	// The cursor yields q<<P|payload in ascending order. An entry of quotient
	// q goes to 2q or 2q+1 by its top fingerprint bit; taking the 2q ones
	// of each quotient first, then the 2q+1 ones, keeps the builder's input
	// ascending, and each half keeps its order, for its payloads lost only
	// a bit that was equal among them.
	var hi []uint64
	flush := func() {
		for _, fp := range hi {
			b.add(fp)
		}
		hi = hi[:0]
	}
	c := m.qf.cursor()
	curQ := ^uint64(0)
	for fp, ok := c.next(); ok; fp, ok = c.next() {
		fq, v := fp>>p, fp&(1<<p-1)
		if fq != curQ {
			flush()
			curQ = fq
		}
		d := m.code.dec[v>>(p-m.code.maxLen)]
		l := uint(d.len)
		fpBits := p - l
		bit := v >> (fpBits - 1) & 1
		nv := v>>fpBits<<(fpBits-1) | v&(1<<(fpBits-1)-1)
		nfp := (fq<<1|bit)<<(p-1) | nv
		if bit == 0 {
			b.add(nfp)
		} else {
			hi = append(hi, nfp)
		}
	}
	flush()
	return g, nil
}

// MapletFPR is E of Maplet's "False positives": the expected number of runs
// a lookup of an absent key names falsely, in a maplet at load factor load
// with payloadBits per slot and code lengths lens, whose entries are in
// the runs in proportion to weights. It bounds the chance a lookup names
// any run falsely.
func MapletFPR(load float64, payloadBits uint, lens []uint8, weights []float64) float64 {
	return load * math.Exp2(-float64(payloadBits)) * expCost(lens, weights)
}
