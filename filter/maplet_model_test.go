package filter

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// mapletModel is the reference for a Maplet: the multiset of (hash, run)
// entries, kept as a list. It is exact: a stored entry (h, r) matches a
// query h' when their top q+P−ℓ_r bits agree, the bits the maplet keeps
// (q+P is constant under Grow), so Lookup must equal expect exactly, not
// just include the true runs.
type mapletModel struct {
	width   uint // q+P
	lens    []uint8
	entries []mapletEntry
}

type mapletEntry struct {
	h   uint64
	run int
}

func (m *mapletModel) matches(e mapletEntry, h uint64) bool {
	keep := m.width - uint(m.lens[e.run])
	return e.h>>(64-keep) == h>>(64-keep)
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
	q := 1 + uint(rng.IntN(4))
	p := maxLen + 2 + uint(rng.IntN(4)) // room for a few Grows
	mp, err := NewMaplet(q, p, lens)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { mp.Release() }() // mp is replaced by Grown's copies
	model := &mapletModel{width: q + p, lens: lens}
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
		if q+p != mp.QBits()+mp.PayloadBits() {
			t.Fatalf("step %d: fingerprint width changed to %d+%d", step, mp.QBits(), mp.PayloadBits())
		}
		model.check(t, mp, rng, pool)
	}
	// Any order of the same entries gives the same table (invariant 4),
	// and the bulk build agrees with it.
	hs, rs := make([]uint64, len(model.entries)), make([]uint8, len(model.entries))
	for i, e := range model.entries {
		hs[i], rs[i] = e.h, uint8(e.run)
	}
	b, err := BuildMaplet(mp.QBits(), mp.PayloadBits(), lens, hs, rs)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Release()
	if !slices.Equal(b.qf.words, mp.qf.words) || b.Len() != mp.Len() {
		t.Fatalf("BuildMaplet's table differs from the one built by updates")
	}
	return int(mp.QBits() - q)
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
