package filter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// TestCacheLineProbeTable checks the probe steps against the rule that
// generated them (bestCacheLineProbes): on both sides of every step, at every
// integer setting, and on a 1/8 grid (away from the steps, which are rounded
// to 1e-6). Settings outside 1..MaxCacheLineBitsPerKey, NaN included, are
// clamped.
func TestCacheLineProbeTable(t *testing.T) {
	for i, step := range cacheLineProbeSteps {
		k := i + 2
		if below, above := bestCacheLineProbes(step-1e-5), bestCacheLineProbes(step+1e-5); below != k-1 || above != k {
			t.Errorf("step %d at %v: rule gives %d below and %d above, want %d and %d", i, step, below, above, k-1, k)
		}
	}
	for b := 1; b <= MaxCacheLineBitsPerKey; b++ {
		if got, want := CacheLineProbes(b), bestCacheLineProbes(float64(b)); got != want {
			t.Errorf("CacheLineProbes(%d) = %d, rule gives %d", b, got, want)
		}
	}
	for i := 8; i <= 8*MaxCacheLineBitsPerKey; i++ {
		b := float64(i) / 8
		if got, want := cacheLineProbesFor(b), bestCacheLineProbes(b); got != want {
			t.Errorf("cacheLineProbesFor(%v) = %d, rule gives %d", b, got, want)
		}
	}
	lo, hi := cacheLineProbesFor(1), cacheLineProbesFor(MaxCacheLineBitsPerKey)
	if CacheLineProbes(0) != lo || CacheLineProbes(1000) != hi || cacheLineProbesFor(0.5) != lo ||
		cacheLineProbesFor(math.NaN()) != lo || cacheLineProbesFor(math.Inf(1)) != hi || hi != 20 {
		t.Errorf("out-of-range bits per key are not clamped")
	}
}

// TestFPRFormulas pins the formulas to published figures: the standard
// filter at 10 bits/key, 7 probes is 0.82%; RocksDB gives 0.9535% as the
// cache-line optimum at 10 bits/key, 6 probes (their estimate averages two
// standard formulas; our Poisson sum gives 0.9576%).
func TestFPRFormulas(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"StandardFPR(10, 7)", StandardFPR(10, 7), 0.00819},
		{"CacheLineFPR(10, 6)", CacheLineFPR(10, 6), 0.009576},
		{"CacheLineFPR(1e6, 1)", CacheLineFPR(1e6, 1), 1.0 / 1e6},
	} {
		if math.Abs(c.got-c.want) > 0.005*c.want {
			t.Errorf("%s = %.6g, want %.6g", c.name, c.got, c.want)
		}
	}
	// The cache-line layout is never better than the standard one.
	for b := 1; b <= MaxCacheLineBitsPerKey; b++ {
		cl, std := CacheLineFPR(float64(b), CacheLineProbes(b)), StandardFPR(float64(b), StandardHashes(float64(b)))
		if cl < std*0.999 {
			t.Errorf("%d bits/key: cache-line %.4g below standard %.4g", b, cl, std)
		}
	}
}

// TestCacheLineTable measures the cache-line filter against its own theory
// and a standard filter of the same size against the standard formula, each
// within 10% at 4 standard deviations.
func TestCacheLineTable(t *testing.T) {
	sigmas := tableSigmas(t)
	for _, b := range []int{4, 6, 8, 10, 12, 16, 20} {
		r := MeasureCacheLine(100_000, b, 0.10, sigmas, 1)
		t.Logf("%2d bits/key k=%2d: measured %.4g, theory %.4g; standard k=%2d measured %.4g, formula %.4g; gap %.2fx",
			b, r.Probes, r.Measured, r.Theory, r.StandardHashes, r.StandardMeasured, r.Standard, r.Theory/r.Standard)
		if math.Abs(r.Measured-r.Theory) > 0.10*r.Theory {
			t.Errorf("%d bits/key: cache-line measured %.4g, theory %.4g", b, r.Measured, r.Theory)
		}
		if math.Abs(r.StandardMeasured-r.Standard) > 0.10*r.Standard {
			t.Errorf("%d bits/key: standard measured %.4g, formula %.4g", b, r.StandardMeasured, r.Standard)
		}
	}
}

// TestCacheLineOverfill overfills a cache-line filter: its EstimatedFPR
// (mean over lines of fill^k) tracks the measured rate within 10%, and so
// does the Poisson theory at the effective bits per key.
func TestCacheLineOverfill(t *testing.T) {
	for _, r := range MeasureCacheLineOverfill(10_000, 10, []int{1, 2, 3, 5}, QueriesFor(0.01, 0.10, tableSigmas(t)), 1) {
		t.Logf("%dx: measured %.4f fill %.3f estimated %.4f naive %.4f theory %.4f", r.Multiple, r.Measured, r.FillRatio, r.Estimated, r.Naive, r.Theory)
		if math.Abs(r.Estimated-r.Measured) > 0.10*r.Measured || math.Abs(r.Theory-r.Measured) > 0.10*r.Measured {
			t.Errorf("%dx: measured %.4f, estimated %.4f, theory %.4f", r.Multiple, r.Measured, r.Estimated, r.Theory)
		}
	}
}

// TestCacheLineModel: random key sets at every bits/key from 1 to 30, and
// at as many random fractional settings, have no false negatives, through
// both the key and the hash entry points, and a builder is reusable after
// Finish. The line count is the smallest with lines·512 ≥ n·b: at integer
// settings exactly the integer ⌈n·b/512⌉ that version 1 always wrote.
func TestCacheLineModel(t *testing.T) {
	seed := testSeed(t)
	rng := rand.New(rand.NewPCG(seed, 2))
	var settings []float64
	for b := 1; b <= 30; b++ {
		settings = append(settings, float64(b), 1+29*rng.Float64())
	}
	var buf []byte
	for _, b := range settings {
		builder := NewCacheLineBuilder(b)
		for round := range 3 {
			n := rng.IntN(3000)
			if round == 0 {
				n = rng.IntN(4) // tiny filters: zero and one line
			}
			keys := randomKeys(rng, n)
			for _, k := range keys {
				builder.AddKey(k)
				if rng.IntN(4) == 0 {
					builder.AddKey(k) // an adjacent duplicate is one key
				}
			}
			if builder.Len() != n {
				t.Fatalf("%g bits/key: Len() = %d, want %d", b, builder.Len(), n)
			}
			buf = builder.Finish(buf[:0])
			if builder.Len() != 0 {
				t.Fatalf("Finish did not reset the builder")
			}
			f, err := OpenCacheLine(buf)
			if err != nil {
				t.Fatalf("%g bits/key, %d keys: %v", b, n, err)
			}
			bits, lines := float64(n)*b, float64(f.Lines())
			enough := lines*lineBits >= bits && (lines == 0 || (lines-1)*lineBits < bits)
			if b == math.Trunc(b) {
				enough = f.Lines() == (n*int(b)+511)/512
			}
			if !enough || f.Probes() != cacheLineProbesFor(b) || f.Size() != len(buf) {
				t.Fatalf("%g bits/key, %d keys: %d lines, %d probes, size %d; want ⌈%g/512⌉ lines, %d probes, size %d",
					b, n, f.Lines(), f.Probes(), f.Size(), bits, cacheLineProbesFor(b), len(buf))
			}
			for _, k := range keys {
				if !f.MayContain(k) || !f.MayContainHash(Hash(k)) {
					t.Fatalf("%g bits/key, %d keys: false negative for a key of %d bytes", b, n, len(k))
				}
			}
		}
	}
}

func TestCacheLineZeroAndEmpty(t *testing.T) {
	var zero CacheLine
	if !zero.MayContain([]byte("k")) || !zero.MayContainHash(0) || zero.EstimatedFPR() != 1 || zero.Size() != 0 {
		t.Errorf("zero CacheLine must answer maybe (EstimatedFPR %v)", zero.EstimatedFPR())
	}
	enc := NewCacheLineBuilder(10).Finish(nil)
	empty, err := OpenCacheLine(enc)
	if err != nil {
		t.Fatal(err)
	}
	if empty.Lines() != 0 || empty.MayContain([]byte("k")) || empty.EstimatedFPR() != 0 || len(enc) != cacheLineTrailerLen {
		t.Errorf("empty filter: %d lines, %d bytes, estimate %v; want 0 lines, a bare trailer, no maybes",
			empty.Lines(), len(enc), empty.EstimatedFPR())
	}
}

// TestCacheLineFinishAppends: Finish keeps dst's bytes and clears stale
// capacity before setting bits.
func TestCacheLineFinishAppends(t *testing.T) {
	b := NewCacheLineBuilder(10)
	b.AddKey([]byte("a"))
	want := b.Finish(nil)

	dirty := bytes.Repeat([]byte{0xff}, 200)
	b.AddKey([]byte("a"))
	got := b.Finish(append(dirty[:3:200], "pre"...)[:3])
	if string(got[:3]) != "\xff\xff\xff" || !bytes.Equal(got[3:], want) {
		t.Errorf("Finish into dirty capacity:\n got %x\nwant ffffff%x", got, want)
	}
}

func TestOpenCacheLineCorrupt(t *testing.T) {
	b := NewCacheLineBuilder(10)
	for i := range 200 {
		b.AddHash(uint64(i) * 0x9e3779b97f4a7c15)
	}
	good := b.Finish(nil)
	mutate := func(f func(d []byte) []byte) []byte { return f(bytes.Clone(good)) }
	n := len(good)
	cases := map[string][]byte{
		"empty":         nil,
		"short":         good[n-7:],
		"body only":     good[:n-8],
		"truncated":     good[1:],
		"extra byte":    append(bytes.Clone(good), 0),
		"bad tag":       mutate(func(d []byte) []byte { d[n-1] = 'X'; return d }),
		"version 2":     mutate(func(d []byte) []byte { d[n-3] = 2; return d }),
		"zero probes":   mutate(func(d []byte) []byte { d[n-4] = 0; return d }),
		"31 probes":     mutate(func(d []byte) []byte { d[n-4] = MaxCacheLineProbes + 1; return d }),
		"lines+1":       mutate(func(d []byte) []byte { binary.LittleEndian.PutUint32(d[n-8:], uint32((n-8)/64+1)); return d }),
		"lines maxu32":  mutate(func(d []byte) []byte { binary.LittleEndian.PutUint32(d[n-8:], math.MaxUint32); return d }),
		"trailer alone": mutate(func(d []byte) []byte { return d[n-8:] }),
	}
	for name, data := range cases {
		f, err := OpenCacheLine(data)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", name, err)
		}
		if !f.MayContainHash(1) {
			t.Errorf("%s: the CacheLine returned with an error must be the zero value", name)
		}
	}
}

// TestMeasureEdges: the measuring helpers take degenerate arguments without
// panicking, and reject what they cannot measure.
func TestMeasureEdges(t *testing.T) {
	if r := MeasureCacheLine(0, 10, 0.10, 4, 1); r.Measured != 0 || r.StandardMeasured != 0 {
		t.Errorf("no keys: measured %v / %v false positives, want 0", r.Measured, r.StandardMeasured)
	}
	if _, err := MeasureBloomOverfill(100, 0.01, []int{2, 1}, 10, 1); !errors.Is(err, ErrInvalidParameter) {
		t.Errorf("descending multiples: err = %v, want ErrInvalidParameter", err)
	}
	if _, err := MeasureBloomDesign(0, 0.01, 10, 1); !errors.Is(err, ErrInvalidParameter) {
		t.Errorf("n = 0: err = %v, want ErrInvalidParameter", err)
	}
	if got := QueriesFor(0.0001, 0.10, 4); got < 15_990_000 || got > 16_000_000 {
		t.Errorf("QueriesFor(1e-4, 10%%, 4σ) = %d, want ~1.6e7", got)
	}
}
