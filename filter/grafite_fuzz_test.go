package filter

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"
)

// grafiteSeeds are valid encodings for the fuzz corpora: no values, one,
// values at both ends of the universe, and a few thousand at low, default
// and high bits per key.
func grafiteSeeds() [][]byte {
	var seeds [][]byte
	for _, c := range []struct {
		n, bits  int
		rangeLen uint64
	}{{0, 10, 32}, {1, 10, 1}, {2, 3, 32}, {300, 16, 32}, {3000, 10, 8}, {600, 40, 1 << 20}} {
		b := NewGrafiteBuilder(c.bits, c.rangeLen, uint64(c.n))
		for i := range c.n {
			b.Add(uint64(i) * 0x9e3779b97f4a7c15)
		}
		if c.n == 2 {
			b.Add(math.MaxUint64)
		}
		seeds = append(seeds, b.Finish(nil))
	}
	return seeds
}

// FuzzOpenGrafite: any bytes either open into a filter whose queries do
// not panic, or fail with ErrCorrupt and the always-"maybe" zero value.
func FuzzOpenGrafite(f *testing.F) {
	for _, s := range grafiteSeeds() {
		f.Add(s, uint64(0), uint64(40))
	}
	f.Add([]byte("GF"), uint64(1), uint64(1))
	f.Fuzz(func(t *testing.T, data []byte, lo, n uint64) {
		g, err := OpenGrafite(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			if !g.MayContainRange(lo, lo+n) {
				t.Fatalf("failed open returned a filter that rules out")
			}
			return
		}
		for i := range uint64(64) {
			x := lo + i*0x9e3779b97f4a7c15
			g.MayContainRange(x, x+n)
			g.MayContainRange(x, math.MaxUint64)
		}
		g.MayContainKeys(data, nil)
	})
}

// FuzzGrafite builds a filter of the values in data (8 bytes each, big
// endian) and checks every one against ranges around it: no false
// negative, whatever the values, bits per key, range length and seed.
func FuzzGrafite(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 10, uint64(32), uint64(1), uint64(5))
	f.Add([]byte("0123456789abcdef01234567"), 3, uint64(1), uint64(0), uint64(100))
	f.Add([]byte{}, 16, uint64(8), uint64(7), uint64(0))
	f.Fuzz(func(t *testing.T, data []byte, bitsPerKey int, rangeLen, seed, width uint64) {
		b := NewGrafiteBuilder(bitsPerKey, rangeLen, seed)
		var xs []uint64
		for ; len(data) >= 8; data = data[8:] {
			xs = append(xs, binary.BigEndian.Uint64(data))
			b.Add(xs[len(xs)-1])
		}
		g, err := OpenGrafite(b.Finish(nil))
		if err != nil {
			t.Fatalf("open what the builder wrote: %v", err)
		}
		if len(xs) == 0 && g.MayContainRange(0, math.MaxUint64) {
			t.Fatalf("a filter of no values says maybe")
		}
		for _, x := range xs {
			lo := x - min(x, width)
			hi := x + min(math.MaxUint64-x, width)
			if !g.MayContainRange(x, x) || !g.MayContainRange(lo, x) || !g.MayContainRange(x, hi) || !g.MayContainRange(lo, hi) {
				t.Fatalf("value %d ruled out (width %d, L %d, B %d)", x, width, rangeLen, bitsPerKey)
			}
		}
	})
}
