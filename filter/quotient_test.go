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
		if !f.MayContain(k) || f.Len() != i {
			t.Fatalf("after deletes: contains %v len %d, want true %d", f.MayContain(k), f.Len(), i)
		}
		if !f.Delete(k) {
			t.Fatal("delete of present key failed")
		}
	}
	if f.MayContain(k) || f.Delete(k) || f.Len() != 0 {
		t.Fatal("key still present after deleting every occurrence")
	}
	// Zero-length and 1 MiB keys are just keys.
	big := bytes.Repeat([]byte{0xab}, 1<<20)
	for _, key := range [][]byte{nil, {}, big} {
		if err := f.Insert(key); err != nil || !f.MayContain(key) {
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
	if z.MayContain([]byte("x")) || z.Delete([]byte("x")) || z.Insert([]byte("x")) == nil {
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
			if f.MayContainHash(h) {
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

// TestQuotientBulkLarge checks Merge (between different qbits), Subtract and
// Grow on larger tables against filters built by Insert alone: the layouts
// must be byte-identical.
func TestQuotientBulkLarge(t *testing.T) {
	const seed = 21
	rng := rand.New(rand.NewPCG(seed, 6))
	build := func(q, r uint, hs []uint64) *Quotient {
		f, _ := NewQuotient(q, r)
		for _, h := range hs {
			if err := f.InsertHash(h); err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
		return f
	}
	enc := func(f *Quotient) []byte { b, _ := f.MarshalBinary(); return b }
	ha := make([]uint64, 14000)
	hb := make([]uint64, 1500)
	for i := range ha {
		ha[i] = rng.Uint64()
	}
	for i := range hb {
		hb[i] = rng.Uint64() | 0xff<<56 // crowd the top: clusters wrap
	}
	a := build(14, 10, ha)
	b := build(11, 13, hb)
	orig := enc(a)
	if err := a.Merge(b); err != nil {
		t.Fatalf("seed %d: merge: %v", seed, err)
	}
	if !bytes.Equal(enc(a), enc(build(14, 10, append(append([]uint64(nil), ha...), hb...)))) {
		t.Fatalf("seed %d: merge differs from inserting both", seed)
	}
	if err := a.Subtract(b); err != nil || !bytes.Equal(enc(a), orig) {
		t.Fatalf("seed %d: subtract did not undo merge: %v", seed, err)
	}
	if err := a.Grow(); err != nil || !bytes.Equal(enc(a), enc(build(15, 9, ha))) {
		t.Fatalf("seed %d: grow differs from inserting at qbits 15: %v", seed, err)
	}
	if err := b.Merge(a); !errors.Is(err, ErrFull) || !bytes.Equal(enc(b), enc(build(11, 13, hb))) {
		t.Fatalf("seed %d: overfull merge: %v, or b changed", seed, err)
	}
}
