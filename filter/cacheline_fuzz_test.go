package filter

import (
	"bytes"
	"errors"
	"testing"
)

// cacheLineSeeds are valid encodings for the fuzz corpora: no keys, one key,
// and a few hundred keys at low, default and high bits per key.
func cacheLineSeeds() [][]byte {
	var seeds [][]byte
	for _, c := range []struct {
		n   int
		bpk float64
	}{{0, 10}, {1, 10}, {2, 1}, {300, 10}, {300, 30}, {50, 64}, {300, 7.3}} {
		b := NewCacheLineBuilder(c.bpk)
		for i := range c.n {
			b.AddKey([]byte{byte(i), byte(i >> 8)})
		}
		seeds = append(seeds, b.Finish(nil))
	}
	return seeds
}

// FuzzOpenCacheLine: any bytes either open into a filter whose geometry
// matches its length exactly and whose queries do not panic, or fail with
// ErrCorrupt and the always-"maybe" zero value.
func FuzzOpenCacheLine(f *testing.F) {
	for _, s := range cacheLineSeeds() {
		f.Add(s)
	}
	f.Add([]byte("CL"))
	f.Add([]byte{0, 0, 0, 0, 6, 1, 'C', 'L'})
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := OpenCacheLine(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			if !c.MayContainHash(0) || c.Probes() != 0 {
				t.Fatalf("failed open returned a non-zero CacheLine")
			}
			return
		}
		if c.Size() != len(data) || c.Lines()*lineBytes+cacheLineTrailerLen != len(data) {
			t.Fatalf("opened %d bytes as %d lines, size %d", len(data), c.Lines(), c.Size())
		}
		if c.Probes() < 1 || c.Probes() > MaxCacheLineProbes {
			t.Fatalf("opened with %d probes", c.Probes())
		}
		for i := range uint64(64) {
			c.MayContainHash(i * 0x9e3779b97f4a7c15)
		}
		c.MayContain(data)
		if fill := c.FillRatio(); fill < 0 || fill > 1 {
			t.Fatalf("fill ratio %v", fill)
		}
	})
}

// FuzzCacheLineRoundTrip: keys cut from the input at 0x00 bytes, built at
// any bits per key (fractional, out of range, NaN: the builder clamps), are
// all found after Finish and Open.
func FuzzCacheLineRoundTrip(f *testing.F) {
	f.Add(10.0, []byte("apple\x00banana\x00cherry"))
	f.Add(1.0, []byte("\x00\x00x"))
	f.Add(64.0, bytes.Repeat([]byte("k\x00"), 100))
	f.Add(2.5, bytes.Repeat([]byte("k\x00"), 100))
	f.Add(-1.0, []byte("a\x00b"))
	f.Fuzz(func(t *testing.T, bpk float64, blob []byte) {
		keys := bytes.Split(blob, []byte{0})
		b := NewCacheLineBuilder(bpk)
		for _, k := range keys {
			b.AddKey(k)
		}
		c, err := OpenCacheLine(b.Finish([]byte("prefix"))[len("prefix"):])
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if !c.MayContain(k) {
				t.Fatalf("false negative for %q at %v bits/key", k, bpk)
			}
		}
	})
}
