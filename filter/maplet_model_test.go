package filter

import (
	"errors"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

// mapletModel is the reference for a Maplet: the multiset of (hash, run)
// entries, kept as a list. It is exact: a stored entry (h, r) matches a
// query h' when their fingerprints ⌊H·m·2^P/2^64⌋ (H the hash's top
// KeyHashBits, m the slots), less their low ℓ_r bits, agree: the bits the
// maplet keeps (m·2^P is constant under Grow). So Lookup must equal expect
// exactly, not just include the true runs.
type mapletModel struct {
	slots   uint64 // m and P at the start: the fingerprint depends on m·2^P only
	p       uint
	lens    []uint8
	entries []mapletEntry
}

type mapletEntry struct {
	h   uint64
	run int
}

// fingerprint is ⌊H·m·2^P/2^64⌋, which the tests' small m·2^P keep
// within 64 bits.
func (m *mapletModel) fingerprint(h uint64) uint64 {
	hi, lo := bits.Mul64(h>>(64-KeyHashBits)<<(64-KeyHashBits), m.slots)
	return hi<<m.p | lo>>(64-m.p)
}

func (m *mapletModel) matches(e mapletEntry, h uint64) bool {
	l := uint(m.lens[e.run])
	return m.fingerprint(e.h)>>l == m.fingerprint(h)>>l
}

func (m *mapletModel) expect(h uint64) RunSet {
	var s RunSet
	for _, e := range m.entries {
		if m.matches(e, h) {
			s |= 1 << e.run
		}
	}
	return s
}

// trueRuns is the runs whose entries carry h exactly: what no answer may
// leave out.
func (m *mapletModel) trueRuns(h uint64) RunSet {
	var s RunSet
	for _, e := range m.entries {
		if e.h == h {
			s |= 1 << e.run
		}
	}
	return s
}

// removeAt drops entry i.
func (m *mapletModel) removeAt(i int) mapletEntry {
	e := m.entries[i]
	m.entries[i] = m.entries[len(m.entries)-1]
	m.entries = m.entries[:len(m.entries)-1]
	return e
}

// holds reports whether an entry of run r has h's fingerprint: whether
// Remove(h, r) must succeed. It removes that entry from the model when
// take is set (which of equal-fingerprint entries goes does not matter to
// the maplet, which cannot tell them apart).
func (m *mapletModel) holds(h uint64, r int, take bool) bool {
	for i, e := range m.entries {
		if e.run == r && m.matches(e, h) {
			if take {
				m.removeAt(i)
			}
			return true
		}
	}
	return false
}

// check compares every hash the model holds, and fresh ones, with the
// maplet, and the table's invariants.
func (m *mapletModel) check(t *testing.T, mp *Maplet, rng *rand.Rand, pool []uint64) {
	t.Helper()
	if mp.Len() != len(m.entries) {
		t.Fatalf("Len %d, model %d", mp.Len(), len(m.entries))
	}
	if err := mp.validate(); err != nil {
		t.Fatalf("invariants: %v", err)
	}
	probe := func(h uint64) {
		got, want := mp.Lookup(h), m.expect(h)
		if must := m.trueRuns(h); got&must != must {
			t.Fatalf("false negative: Lookup(%#x) = %b misses runs %b", h, got, must&^got)
		}
		if got != want {
			t.Fatalf("Lookup(%#x) = %b, model %b", h, got, want)
		}
	}
	for _, e := range m.entries {
		probe(e.h)
	}
	for range 32 {
		probe(pool[rng.IntN(len(pool))])
		probe(rng.Uint64())
	}
}

// TestMapletModel runs random Insert, Remove, Move, Lookup and Grow
// sequences against the model, on tiny tables and hash spaces so that
// quotients, fingerprints and whole hashes collide, clusters wrap and the
// table grows from a few slots through several doublings.
func TestMapletModel(t *testing.T) {
	codes := [][]uint8{
		{1, 2, 3, 4, 5, 6, 6},    // a 7-run tree's shape
		{3, 3, 3, 3, 3, 3, 3, 3}, // fixed width
		{1, 0, 2, 0, 3, 3},       // run ids without codes
		{2, 2, 2},                // Kraft sum < 1: undecodable prefixes exist
		RunCodeLengths(treeShares(7), MaxRunCodeLen), // what the engine would ask for
	}
	seeds := 40
	if testing.Short() {
		seeds = 8
	}
	grown := 0 // doublings seen: the test must reach Grow's re-split
	for ci, lens := range codes {
		for seed := range seeds {
			t.Run(fmt.Sprintf("code%d/seed%d", ci, seed), func(t *testing.T) {
				grown += runMapletModel(t, lens, uint64(seed))
			})
		}
	}
	t.Logf("%d doublings", grown)
	if grown < seeds {
		t.Fatalf("only %d doublings over %d runs", grown, seeds*len(codes))
	}
}

func treeShares(levels int) []float64 {
	w := make([]float64, levels)
	s := 0.9
	for i := levels - 1; i >= 0; i-- {
		w[i] = s
		s /= 10
	}
	return w
}

// runMapletModel returns the number of times the table doubled.
func runMapletModel(t *testing.T, lens []uint8, seed uint64) int {
	rng := rand.New(rand.NewPCG(seed, 29))
	maxLen := uint(slices.Max(lens))
	slots := []uint64{2, 4, 8, 16, 64, 128, 192, 320}[rng.IntN(8)]
	q := uint(bits.Len64(slots - 1))
	p := maxLen + 2 + uint(rng.IntN(4)) // room for a few Grows
	mp, err := NewMaplet(slots, p, lens)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { mp.Release() }() // mp is replaced by Grown's copies
	model := &mapletModel{slots: slots, p: p, lens: lens}
	var runs []int
	for r, l := range lens {
		if l > 0 {
			runs = append(runs, r)
		}
	}
	// Hashes from a small space: the top hbits vary, the rest are noise
	// below every fingerprint, so equal tops collide at every width.
	hbits := q + p - 1 + uint(rng.IntN(3))
	pool := make([]uint64, 8+rng.IntN(64))
	for i := range pool {
		pool[i] = rng.Uint64N(1<<hbits)<<(64-hbits) | rng.Uint64()>>hbits
	}
	steps := 400
	for step := range steps {
		switch op := rng.IntN(10); {
		case op < 4: // insert, often a duplicate
			h, r := pool[rng.IntN(len(pool))], runs[rng.IntN(len(runs))]
			err := mp.Insert(h, r)
			if errors.Is(err, ErrFull) {
				if mp.Len() < mp.Slots() {
					t.Fatalf("step %d: ErrFull at %d/%d", step, mp.Len(), mp.Slots())
				}
				continue
			}
			if err != nil {
				t.Fatalf("step %d: Insert: %v", step, err)
			}
			model.entries = append(model.entries, mapletEntry{h, r})
		case op < 6 && len(model.entries) > 0: // remove a stored entry
			e := model.removeAt(rng.IntN(len(model.entries)))
			if !mp.Remove(e.h, e.run) {
				t.Fatalf("step %d: Remove(%#x, %d) of a stored entry failed", step, e.h, e.run)
			}
		case op < 7: // remove what may not be there: must agree with the model
			h, r := pool[rng.IntN(len(pool))], runs[rng.IntN(len(runs))]
			if want, got := model.holds(h, r, true), mp.Remove(h, r); got != want {
				t.Fatalf("step %d: Remove(%#x, %d) = %v, model %v", step, h, r, got, want)
			}
		case op < 9 && len(model.entries) > 0: // move a stored entry
			i := rng.IntN(len(model.entries))
			e, to := model.entries[i], runs[rng.IntN(len(runs))]
			if !mp.Move(e.h, e.run, to) {
				t.Fatalf("step %d: Move(%#x, %d, %d) of a stored entry failed", step, e.h, e.run, to)
			}
			model.entries[i].run = to
		case rng.IntN(2) == 0 && mp.canGrow(): // Grown: a copy, m untouched
			before := slices.Clone(mp.qf.words)
			g, err := mp.Grown()
			if err != nil {
				t.Fatalf("step %d: Grown: %v", step, err)
			}
			if !slices.Equal(before, mp.qf.words) {
				t.Fatalf("step %d: Grown changed the maplet it copied", step)
			}
			model.check(t, mp, rng, pool)
			mp.Release()
			mp = g
		default:
			if err := mp.Grow(); err != nil && !errors.Is(err, ErrFull) {
				t.Fatalf("step %d: Grow: %v", step, err)
			}
		}
		if uint64(mp.Slots())<<mp.PayloadBits() != slots<<p {
			t.Fatalf("step %d: fingerprint scale changed to %d·2^%d", step, mp.Slots(), mp.PayloadBits())
		}
		model.check(t, mp, rng, pool)
	}
	// Any order of the same entries gives the same table (invariant 4),
	// and the bulk build agrees with it.
	hs, rs := make([]uint64, len(model.entries)), make([]uint8, len(model.entries))
	for i, e := range model.entries {
		hs[i], rs[i] = e.h, uint8(e.run)
	}
	b, err := BuildMaplet(uint64(mp.Slots()), mp.PayloadBits(), lens, hs, rs)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	if !slices.Equal(b.qf.words, mp.qf.words) || b.Len() != mp.Len() {
		t.Fatalf("BuildMaplet's table differs from the one built by updates")
	}
	return bits.Len64(uint64(mp.Slots())-1) - int(q)
}

// TestMapletMoveKeepsOthers checks the case a compaction makes of Move:
// one key in two runs, moved out of one, keeps its entry in the other.
func TestMapletMoveKeepsOthers(t *testing.T) {
	mp, err := NewMaplet(4, 10, RunCodeLengths(treeShares(4), MaxRunCodeLen))
	if err != nil {
		t.Fatal(err)
	}
	defer mp.Release()
	const h = 0x0123456789abcdef
	for _, r := range []int{0, 2} {
		if err := mp.Insert(h, r); err != nil {
			t.Fatal(err)
		}
	}
	if got := mp.Lookup(h); got != 1<<0|1<<2 {
		t.Fatalf("Lookup = %b, want runs 0 and 2", got)
	}
	if !mp.Move(h, 0, 3) {
		t.Fatal("Move failed")
	}
	if got := mp.Lookup(h); got != 1<<2|1<<3 {
		t.Fatalf("after Move, Lookup = %b, want runs 2 and 3", got)
	}
	if mp.Move(h, 0, 1) {
		t.Fatal("Move of an entry no longer there succeeded")
	}
	if err := mp.Insert(h, 7); !errors.Is(err, ErrNoRunCode) {
		t.Fatalf("Insert into a run without a code: %v", err)
	}
}

// TestMapletLongClustersAcrossTheEnd fills tables whose slots are not a
// power of two up to MapletMaxLoad, with hashes crowded at the table's end, so
// that clusters run past 64 slots and wrap around; then removes and
// inserts at random against the model. Distances along such a cluster
// must be taken modulo the slots, not masked by slots−1 (which only a
// power of two allows).
func TestMapletLongClustersAcrossTheEnd(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 31))
		slots := []uint64{192, 320, 704}[seed%3]
		lens := []uint8{1, 2, 2}
		mp, err := NewMaplet(slots, 8, lens)
		if err != nil {
			t.Fatal(err)
		}
		model := &mapletModel{slots: slots, p: 8, lens: lens}
		var pool []uint64
		for len(pool) < int(0.88*float64(slots)) {
			h := rng.Uint64()
			if rng.IntN(3) > 0 {
				h = ^uint64(0) - rng.Uint64N(1<<58) // the last slots
			}
			r := rng.IntN(3)
			if err := mp.Insert(h, r); err != nil {
				t.Fatal(err)
			}
			model.entries = append(model.entries, mapletEntry{h, r})
			pool = append(pool, h)
		}
		model.check(t, mp, rng, pool)
		for step := range 400 {
			if rng.IntN(2) == 0 && len(model.entries) > 0 {
				e := model.removeAt(rng.IntN(len(model.entries)))
				if !mp.Remove(e.h, e.run) {
					t.Fatalf("seed %d step %d: Remove of a stored entry failed", seed, step)
				}
			} else if float64(mp.Len()+1) <= MapletMaxLoad*float64(slots) {
				h, r := pool[rng.IntN(len(pool))]^rng.Uint64N(1<<40), rng.IntN(3)
				if err := mp.Insert(h, r); err != nil {
					t.Fatal(err)
				}
				model.entries = append(model.entries, mapletEntry{h, r})
			}
			if step%20 == 19 {
				model.check(t, mp, rng, pool)
			}
		}
		if mp.Slots() != int(slots) {
			t.Fatalf("seed %d: the table grew to %d slots; the test wants it full", seed, mp.Slots())
		}
		mp.Release()
	}
}

// TestMapletReadsTopKeyHashBits: a maplet reads only a hash's top
// KeyHashBits, what a table's key-hash set keeps, so an entry filed from a
// full hash is found by its key-hash value and the other way round. It
// takes a table whose slots and payload use all 40 bits and are not a
// power of two, where the product's top bits would depend on the low bits
// of the hash through carries if they were read.
func TestMapletReadsTopKeyHashBits(t *testing.T) {
	mp, err := NewMaplet(1<<20+64, 19, []uint8{1, 1})
	if err != nil {
		t.Fatal(err)
	}
	defer mp.Release()
	rng := rand.New(rand.NewPCG(7, 40))
	const low = 1<<(64-KeyHashBits) - 1
	hs := make([]uint64, 2000)
	for i := range hs {
		hs[i] = rng.Uint64()
		if err := mp.Insert(hs[i]&^low, i%2); err != nil { // key-hash set values
			t.Fatal(err)
		}
	}
	for i, h := range hs {
		if !mp.Lookup(h).Has(i % 2) {
			t.Fatalf("entry %d filed from its top bits is not found by its full hash %#x", i, h)
		}
		if !mp.Remove(h|low, i%2) {
			t.Fatalf("entry %d filed from its top bits is not removed by a hash with other low bits", i)
		}
	}
	if mp.Len() != 0 {
		t.Fatalf("%d entries left", mp.Len())
	}
}
