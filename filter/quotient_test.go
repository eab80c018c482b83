package filter

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"
)

// qfModel is the reference for the quotient filter: a multiset of
// fingerprints (the top width bits of each hash). The filter must agree
// with it exactly: ContainsHash(h) == (count[fp(h)] > 0), Len == total.
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
		if !f.ContainsHash(h) {
			return fmt.Errorf("false negative: fp %#x (count %d)", fp, c)
		}
	}
	for range 64 {
		h := rng.Uint64()
		if got, want := f.ContainsHash(h), m.count[m.fp(h)] > 0; got != want {
			return fmt.Errorf("ContainsHash(%#x) = %v, model %v", h, got, want)
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
	seeds := 80
	if os.Getenv("MONBAN_LONG") != "" {
		seeds = 5000
	}
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		if err := runQuotientModel(seed); err != nil {
			t.Fatalf("seed %d: %v (rerun: runQuotientModel(%d))", seed, err, seed)
		}
	}
}

func runQuotientModel(seed uint64) error {
	rng := rand.New(rand.NewPCG(seed, 0x9f))
	qbits := 1 + uint(rng.IntN(8))
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
	target := 0.5 + 0.5*rng.Float64() // load the walk drifts toward
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

// TestQuotientFillToFull fills tables of several sizes with distinct keys to
// 100%, checks that the next insert returns ErrFull and leaves the filter
// unchanged and consistent, then empties it again.
func TestQuotientFillToFull(t *testing.T) {
	for _, qbits := range []uint{1, 3, 6, 7, 10, 12} {
		seed := uint64(qbits)
		rng := rand.New(rand.NewPCG(seed, 1))
		f, _ := NewQuotient(qbits, 9)
		m := newQFModel(qbits + 9)
		for f.Len() < f.Slots() {
			h := rng.Uint64()
			if err := f.InsertHash(h); err != nil {
				t.Fatalf("seed %d qbits %d: insert %d of %d: %v", seed, qbits, f.Len(), f.Slots(), err)
			}
			m.insert(h)
		}
		before, _ := f.MarshalBinary()
		if err := f.InsertHash(rng.Uint64()); !errors.Is(err, ErrFull) {
			t.Fatalf("qbits %d: insert into full filter: %v, want ErrFull", qbits, err)
		}
		if err := f.Insert([]byte("one more")); !errors.Is(err, ErrFull) {
			t.Fatalf("qbits %d: Insert into full filter: %v, want ErrFull", qbits, err)
		}
		after, _ := f.MarshalBinary()
		if !bytes.Equal(before, after) {
			t.Fatalf("qbits %d: failed insert changed the filter", qbits)
		}
		if err := m.check(f, rng); err != nil {
			t.Fatalf("seed %d qbits %d: full: %v", seed, qbits, err)
		}
		for len(m.hashes) > 0 {
			h := m.deleteAt(rng.IntN(len(m.hashes)))
			if !f.DeleteHash(h) {
				t.Fatalf("seed %d qbits %d: delete failed at len %d", seed, qbits, f.Len())
			}
		}
		if err := m.check(f, rng); err != nil || f.Len() != 0 {
			t.Fatalf("seed %d qbits %d: emptied: %v, len %d", seed, qbits, err, f.Len())
		}
	}
}

func TestQuotientKeysAndDuplicates(t *testing.T) {
	f, err := NewQuotient(8, 8)
	if err != nil {
		t.Fatal(err)
	}
	k := []byte("apple")
	for range 3 {
		if err := f.Insert(k); err != nil {
			t.Fatal(err)
		}
	}
	for i := 3; i > 0; i-- {
		if !f.Contains(k) || f.Len() != i {
			t.Fatalf("after deletes: contains %v len %d, want true %d", f.Contains(k), f.Len(), i)
		}
		if !f.Delete(k) {
			t.Fatal("delete of present key failed")
		}
	}
	if f.Contains(k) || f.Delete(k) || f.Len() != 0 {
		t.Fatal("key still present after deleting every occurrence")
	}
	// Zero-length and 1 MiB keys are just keys.
	big := bytes.Repeat([]byte{0xab}, 1<<20)
	for _, key := range [][]byte{nil, {}, big} {
		if err := f.Insert(key); err != nil || !f.Contains(key) {
			t.Fatalf("key of %d bytes: %v", len(key), err)
		}
	}
}

func TestQuotientParameters(t *testing.T) {
	for _, p := range [][2]uint{{0, 8}, {33, 8}, {8, 0}, {20, 45}, {32, 33}} {
		if _, err := NewQuotient(p[0], p[1]); !errors.Is(err, ErrIncompatible) {
			t.Errorf("NewQuotient(%d, %d) = %v, want ErrIncompatible", p[0], p[1], err)
		}
	}
	for _, p := range [][2]uint{{1, 1}, {1, 63}, {32, 32}, {6, 58}} {
		if p[0] == 32 {
			continue // 2^32 slots: too much memory for a unit test
		}
		if _, err := NewQuotient(p[0], p[1]); err != nil {
			t.Errorf("NewQuotient(%d, %d) = %v", p[0], p[1], err)
		}
	}
	a, _ := NewQuotient(8, 8)
	b, _ := NewQuotient(8, 9)
	if err := a.Merge(b); !errors.Is(err, ErrIncompatible) {
		t.Errorf("Merge of different widths: %v", err)
	}
	if err := a.Subtract(b); !errors.Is(err, ErrIncompatible) {
		t.Errorf("Subtract of different widths: %v", err)
	}
	c, _ := NewQuotient(8, 1)
	if err := c.Grow(); !errors.Is(err, ErrFull) {
		t.Errorf("Grow to rbits 0: %v", err)
	}
	var z Quotient // the zero value answers without panicking
	if z.Contains([]byte("x")) || z.Delete([]byte("x")) || z.Insert([]byte("x")) == nil {
		t.Error("zero Quotient misbehaves")
	}
}

// TestQuotientWideFingerprints covers remainders that straddle two words
// and the 64-bit fingerprint edge.
func TestQuotientWideFingerprints(t *testing.T) {
	for _, p := range [][2]uint{{1, 63}, {7, 57}, {10, 54}, {6, 37}, {9, 23}, {11, 13}} {
		seed := uint64(p[0]*100 + p[1])
		rng := rand.New(rand.NewPCG(seed, 2))
		f, _ := NewQuotient(p[0], p[1])
		m := newQFModel(p[0] + p[1])
		for f.LoadFactor() < 0.95 {
			h := rng.Uint64()
			if err := f.InsertHash(h); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			m.insert(h)
		}
		if err := m.check(f, rng); err != nil {
			t.Fatalf("seed %d qbits %d rbits %d: %v", seed, p[0], p[1], err)
		}
		for len(m.hashes) > f.Slots()/3 {
			if h := m.deleteAt(rng.IntN(len(m.hashes))); !f.DeleteHash(h) {
				t.Fatalf("seed %d: delete of %#x failed", seed, h)
			}
		}
		if err := m.check(f, rng); err != nil {
			t.Fatalf("seed %d qbits %d rbits %d: after deletes: %v", seed, p[0], p[1], err)
		}
	}
}

// TestQuotientFPRTable measures the FPR at 50/75/90/95% load and bounds it
// within 10% of theory; with 10^6 probes the bound is at least 4.4 standard
// deviations wide. MONBAN_PRINT=1 prints the table kept in the Quotient doc.
func TestQuotientFPRTable(t *testing.T) {
	const seed = 1
	rows, err := MeasureQuotient(16, 8, []float64{0.5, 0.75, 0.9, 0.95}, 1_000_000, seed)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if os.Getenv("MONBAN_PRINT") != "" {
			t.Logf("%.2f  %6d  %.5f       %.5f     %.3f  %.3f     %.2f  %.3f",
				r.Load, r.Keys, r.FPR, r.TheoryFPR, r.FPR/r.TheoryFPR, r.RunScan, r.ClusterSpan, r.OccupiedFrac)
		}
		if math.Abs(r.FPR-r.TheoryFPR) > 0.1*r.TheoryFPR {
			t.Errorf("seed %d load %.2f: FPR %.5f, theory %.5f: off by more than 10%%", seed, r.Load, r.FPR, r.TheoryFPR)
		}
		if want := -math.Expm1(-r.Load); math.Abs(r.OccupiedFrac-want) > 0.01 {
			t.Errorf("seed %d load %.2f: occupied fraction %.4f, theory %.4f", seed, r.Load, r.OccupiedFrac, want)
		}
	}
}

// TestQuotientGrowFPR checks the Grow doc: fingerprints are unchanged by
// Grow, so the very same absent keys are false positives before and after.
func TestQuotientGrowFPR(t *testing.T) {
	const seed = 7
	rng := rand.New(rand.NewPCG(seed, 5))
	f, _ := NewQuotient(12, 10)
	for f.LoadFactor() < 0.9 {
		if err := f.InsertHash(rng.Uint64()); err != nil {
			t.Fatal(err)
		}
	}
	absent := make([]uint64, 200_000)
	for i := range absent {
		absent[i] = rng.Uint64()
	}
	count := func() (fp int) {
		for _, h := range absent {
			if f.ContainsHash(h) {
				fp++
			}
		}
		return fp
	}
	before := count()
	for f.RBits() > 1 {
		if err := f.Grow(); err != nil {
			t.Fatal(err)
		}
		if after := count(); after != before {
			t.Fatalf("seed %d: grow to qbits %d: %d false positives, %d before", seed, f.QBits(), after, before)
		}
	}
	if want := QuotientTheoryFPR(f.Len(), 22) * float64(len(absent)); math.Abs(float64(before)-want) > 5*math.Sqrt(want) {
		t.Fatalf("seed %d: %d false positives, theory %.1f", seed, before, want)
	}
}

func TestQuotientSelect64(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 0))
	for range 20000 {
		x := rng.Uint64() & rng.Uint64()
		if rng.IntN(4) == 0 {
			x = ^uint64(0)
		}
		k := 0
		for i := range 64 {
			if x>>i&1 != 0 {
				if got := qfSelect64(x, k); got != i {
					t.Fatalf("qfSelect64(%#x, %d) = %d, want %d", x, k, got, i)
				}
				k++
			}
		}
	}
}

// The worked example of docs/format.md, "Quotient filter": 4 slots, 4-bit
// remainders; fingerprints (quotient, remainder) (1,3), (1,9), (2,5) and
// (3,a), the last of which wraps around to slot 0.
func ExampleQuotient_MarshalBinary() {
	f, _ := NewQuotient(2, 4)
	for _, fp := range []uint64{0x13, 0x19, 0x25, 0x3a} { // quotient<<4 | remainder
		_ = f.InsertHash(fp << (64 - 6))
	}
	b, _ := f.MarshalBinary()
	for i := 0; i < len(b); i += 16 {
		fmt.Printf("%x\n", b[i:min(i+16, len(b))])
	}
	// Output:
	// 4d425146010204000400000000000000
	// 0e000000000000000400000000000000
	// 0d000000000000003a59000000000000
	// 00000000000000000000000000000000
	// 0000000000000000d3dd2ad9
}
