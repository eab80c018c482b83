package filter

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
)

// qfModel is the reference for the quotient filter: a multiset of
// fingerprints (the top width bits of each hash). The filter must agree
// with it exactly: MayContainHash(h) == (count[fp(h)] > 0), Len == total.
type qfModel struct {
	width  uint
	count  map[uint64]int
	total  int
	hashes []uint64 // one entry per inserted occurrence, for deletes
}

func newQFModel(width uint) *qfModel {
	return &qfModel{width: width, count: map[uint64]int{}}
}

func (m *qfModel) fp(h uint64) uint64 { return h >> (64 - m.width) }

func (m *qfModel) insert(h uint64) {
	m.count[m.fp(h)]++
	m.total++
	m.hashes = append(m.hashes, h)
}

// deleteAt removes occurrence i of m.hashes.
func (m *qfModel) deleteAt(i int) uint64 {
	h := m.hashes[i]
	m.hashes[i] = m.hashes[len(m.hashes)-1]
	m.hashes = m.hashes[:len(m.hashes)-1]
	m.uncount(m.fp(h))
	return h
}

func (m *qfModel) uncount(fp uint64) {
	m.count[fp]--
	if m.count[fp] == 0 {
		delete(m.count, fp)
	}
	m.total--
}

// removeFP removes one occurrence of fingerprint fp (and one hash carrying it).
func (m *qfModel) removeFP(fp uint64) {
	m.uncount(fp)
	for i, h := range m.hashes {
		if m.fp(h) == fp {
			m.hashes[i] = m.hashes[len(m.hashes)-1]
			m.hashes = m.hashes[:len(m.hashes)-1]
			return
		}
	}
}

// check compares f with the model: every stored and a sample of random
// fingerprints, Len, structural invariants, and the canonical layout (the
// table equals one rebuilt from the model's fingerprints in another order).
func (m *qfModel) check(f *Quotient, rng *rand.Rand) error {
	if err := m.checkCheap(f, rng); err != nil {
		return err
	}
	return m.checkLayout(f, rng)
}

// checkCheap is check without the rebuild.
func (m *qfModel) checkCheap(f *Quotient, rng *rand.Rand) error {
	if f.Len() != m.total {
		return fmt.Errorf("Len %d, model %d", f.Len(), m.total)
	}
	if err := f.validate(); err != nil {
		return fmt.Errorf("invariants: %v", err)
	}
	for fp, c := range m.count {
		h := fp << (64 - m.width)
		if !f.MayContainHash(h) {
			return fmt.Errorf("false negative: fp %#x (count %d)", fp, c)
		}
	}
	for range 64 {
		h := rng.Uint64()
		if got, want := f.MayContainHash(h), m.count[m.fp(h)] > 0; got != want {
			return fmt.Errorf("MayContainHash(%#x) = %v, model %v", h, got, want)
		}
	}
	return nil
}

// checkLayout compares f's encoding with that of a filter rebuilt from the
// model in a random order: the layout of a multiset is unique.
func (m *qfModel) checkLayout(f *Quotient, rng *rand.Rand) error {
	g, _ := NewQuotient(f.QBits(), f.RBits())
	perm := rng.Perm(len(m.hashes))
	for _, i := range perm {
		if err := g.InsertHash(m.hashes[i]); err != nil {
			return fmt.Errorf("rebuild: %v", err)
		}
	}
	a, _ := f.MarshalBinary()
	b, _ := g.MarshalBinary()
	if !bytes.Equal(a, b) {
		return fmt.Errorf("layout differs from a rebuild in another order")
	}
	return nil
}

// TestQuotientModel runs random operation sequences against the multiset
// model on small tables, where clusters wrap around the end often, up to
// and past full load.
func TestQuotientModel(t *testing.T) {
	seeds := 50
	if os.Getenv("MONBAN_LONG") != "" {
		seeds = 5000
	}
	var cov qfCoverage
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		if err := runQuotientModel(seed, &cov); err != nil {
			t.Fatalf("seed %d: %v (rerun: runQuotientModel(%d))", seed, err, seed)
		}
	}
	// The walk must have reached what it claims to test.
	if cov.wrapped < seeds*10 || cov.loaded95 < seeds*5 || cov.full < seeds {
		t.Fatalf("coverage too thin: %+v over %d seeds", cov, seeds)
	}
	t.Logf("steps with a cluster wrapping past the last slot: %d, at load in [95%%, 100%%): %d, full: %d",
		cov.wrapped, cov.loaded95, cov.full)
}

// qfCoverage counts the states a model run visited.
type qfCoverage struct{ wrapped, loaded95, full int }

func runQuotientModel(seed uint64, cov *qfCoverage) error {
	rng := rand.New(rand.NewPCG(seed, 0x9f))
	qbits := 1 + uint(rng.IntN(8))
	if rng.IntN(2) == 0 {
		qbits = 6 + uint(rng.IntN(3)) // big enough for loads between 95% and 100%
	}
	rbits := 1 + uint(rng.IntN(7))
	f, err := NewQuotient(qbits, rbits)
	if err != nil {
		return err
	}
	m := newQFModel(qbits + rbits)
	// Hashes are drawn from a small pool, so that keys repeat and distinct
	// keys share fingerprints.
	pool := make([]uint64, 1+rng.IntN(4*f.Slots()))
	for i := range pool {
		pool[i] = rng.Uint64()
	}
	target := 0.6 + 0.45*rng.Float64() // load the walk drifts toward (> 1: full)
	if rng.IntN(2) == 0 {
		target = 0.95 + 0.04*rng.Float64()
	}
	// Start near the target load, then walk around it.
	for f.Len() < min(f.Slots(), int(target*float64(f.Slots()))) {
		h := pool[rng.IntN(len(pool))]
		if err := f.InsertHash(h); err != nil {
			return fmt.Errorf("fill to %.3f: %v", target, err)
		}
		m.insert(h)
	}
	if err := m.check(f, rng); err != nil {
		return fmt.Errorf("filled to %.3f (qbits=%d rbits=%d): %v", target, qbits, rbits, err)
	}
	for step := range 300 {
		op := rng.IntN(100)
		switch {
		case op < 50 && f.LoadFactor() < target || op < 5: // insert
			h := pool[rng.IntN(len(pool))]
			err := f.InsertHash(h)
			if m.total == f.Slots() {
				if !errors.Is(err, ErrFull) {
					return fmt.Errorf("step %d: insert into full filter: %v", step, err)
				}
				break
			}
			if err != nil {
				return fmt.Errorf("step %d: insert at load %.3f: %v", step, f.LoadFactor(), err)
			}
			m.insert(h)
		case op < 80: // delete a present key
			if len(m.hashes) == 0 {
				break
			}
			h := m.deleteAt(rng.IntN(len(m.hashes)))
			if !f.DeleteHash(h) {
				return fmt.Errorf("step %d: delete of present %#x failed", step, h)
			}
		case op < 85: // delete an arbitrary hash: removes a colliding fingerprint if any
			h := rng.Uint64()
			want := m.count[m.fp(h)] > 0
			if got := f.DeleteHash(h); got != want {
				return fmt.Errorf("step %d: DeleteHash(%#x) = %v, model %v", step, h, got, want)
			}
			if want {
				m.removeFP(m.fp(h))
			}
		case op < 90: // merge a random filter of the same width, maybe other qbits
			oq := uint(1 + rng.IntN(int(qbits+rbits-1)))
			if oq > 10 {
				oq = 10
			}
			o, _ := NewQuotient(oq, qbits+rbits-oq)
			var added []uint64
			for range rng.IntN(1 + f.Slots()/4) {
				h := pool[rng.IntN(len(pool))]
				if o.InsertHash(h) == nil {
					added = append(added, h)
				}
			}
			err := f.Merge(o)
			if m.total+len(added) > f.Slots() {
				if !errors.Is(err, ErrFull) {
					return fmt.Errorf("step %d: overfull merge: %v", step, err)
				}
				break
			}
			if err != nil {
				return fmt.Errorf("step %d: merge: %v", step, err)
			}
			for _, h := range added {
				m.insert(h)
			}
		case op < 94: // subtract a sub-multiset, or one with a missing occurrence
			o, _ := NewQuotient(f.QBits(), f.RBits())
			var taken []int
			for i := range m.hashes {
				if rng.IntN(3) == 0 {
					taken = append(taken, i)
					_ = o.InsertHash(m.hashes[i])
				}
			}
			bad := rng.IntN(4) == 0
			if bad {
				h := rng.Uint64()
				if m.count[m.fp(h)] > 0 || o.InsertHash(h) != nil {
					bad = false
				}
			}
			err := f.Subtract(o)
			if bad {
				if !errors.Is(err, ErrMissing) {
					return fmt.Errorf("step %d: subtract of missing: %v", step, err)
				}
				break
			}
			if err != nil {
				return fmt.Errorf("step %d: subtract: %v", step, err)
			}
			for k := len(taken) - 1; k >= 0; k-- { // descending: deleteAt swaps from the end
				m.deleteAt(taken[k])
			}
		case op < 96: // grow (up to 2^11 slots, to keep the test fast)
			if f.QBits() >= 11 {
				break
			}
			rb := f.RBits()
			err := f.Grow()
			if rb == 1 && err == nil {
				return fmt.Errorf("step %d: grow to rbits 0 succeeded", step)
			}
			if err != nil && !errors.Is(err, ErrFull) {
				return fmt.Errorf("step %d: grow: %v", step, err)
			}
		case op < 98: // round trip through the encoding
			b, _ := f.MarshalBinary()
			g := &Quotient{}
			if err := g.UnmarshalBinary(b); err != nil {
				return fmt.Errorf("step %d: unmarshal: %v", step, err)
			}
			f = g
		default:
			f = f.Clone()
		}
		if f.Len() > 0 && f.bit(qfShift, 0) {
			cov.wrapped++
		}
		if f.Len() == f.Slots() {
			cov.full++
		} else if f.LoadFactor() >= 0.95 {
			cov.loaded95++
		}
		check := m.checkCheap
		if step%16 == 15 {
			check = m.check
		}
		if err := check(f, rng); err != nil {
			return fmt.Errorf("step %d (qbits=%d rbits=%d load %.3f): %v", step, f.QBits(), f.RBits(), f.LoadFactor(), err)
		}
	}
	return nil
}
