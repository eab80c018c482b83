package filter

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

// FuzzDecodeKeyHashes: any bytes either decode to a set whose encoding
// they are, byte for byte (a set has one encoding), or fail with
// ErrCorrupt and leave dst as given; never a panic. Seeds are the
// encodings of the model test's shapes, each also cut short, and a set's
// second encoding.
func FuzzDecodeKeyHashes(f *testing.F) {
	for shape := range 8 {
		rng := rand.New(rand.NewPCG(uint64(shape), 30))
		hs := randKeyHashes(rng, shape)
		enc := AppendKeyHashes(nil, hs[:min(len(hs), 60)])
		f.Add(enc)
		f.Add(enc[:len(enc)-1])
	}
	// A set's second encoding, one low bit more than the least size's.
	three, l := []uint64{1 << 38, 1 << 39, 3 << 38}, keyHashLowBits(3)+1
	f.Add(appendEliasFano([]byte{'K', 'H', keyHashVersion, byte(l), 3, 0, 0, 0}, three, l, keyHashUniverse))
	f.Add([]byte("KH"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := DecodeKeyHashes(data, []uint64{42})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			if !slices.Equal(got, []uint64{42}) {
				t.Fatalf("dst changed on error: %d values", len(got))
			}
			return
		}
		if got[0] != 42 {
			t.Fatalf("dst's value overwritten")
		}
		got = got[1:]
		for i, h := range got {
			if h<<KeyHashBits != 0 || i > 0 && h <= got[i-1] {
				t.Fatalf("value %d, %#x: low bits set or not above %#x", i, h, got[max(i-1, 0)])
			}
		}
		if again := AppendKeyHashes(nil, got); !bytes.Equal(again, data) {
			t.Fatalf("decoded %d values whose encoding differs:\n got % x\nwant % x", len(got), again, data)
		}
	})
}
