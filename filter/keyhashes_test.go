package filter

import (
	"errors"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

// keyHashModel is what a key-hash set of hashes decodes to: the top
// KeyHashBits bits of each, in place, sorted, each once.
func keyHashModel(hashes []uint64) []uint64 {
	out := make([]uint64, len(hashes))
	for i, h := range hashes {
		out[i] = h &^ (1<<(64-KeyHashBits) - 1)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// randKeyHashes draws one of the shapes a set must survive: empty, one
// hash, uniform hashes, duplicates (versions of a key), hashes that differ
// only below the kept bits, the extreme values, and clusters dense enough
// to put hundreds of values in one bucket and leave hundreds of buckets
// empty (runs longer than a sample).
func randKeyHashes(rng *rand.Rand, shape int) []uint64 {
	n := rng.IntN(20000) + 1
	var hs []uint64
	switch shape {
	case 0: // empty
	case 1: // one
		hs = append(hs, rng.Uint64())
	case 2: // duplicates
		pool := make([]uint64, rng.IntN(300)+1)
		for i := range pool {
			pool[i] = rng.Uint64()
		}
		for range n {
			hs = append(hs, pool[rng.IntN(len(pool))])
		}
	case 3: // equal in the top 40 bits, different below
		for range n {
			top := rng.Uint64N(64) << (64 - KeyHashBits)
			hs = append(hs, top|rng.Uint64N(1<<(64-KeyHashBits)))
		}
	case 4: // the extremes of the universe, and their neighbours
		for _, v := range []uint64{0, 1, 2, 1<<KeyHashBits - 2, 1<<KeyHashBits - 1, 1 << (KeyHashBits - 1)} {
			hs = append(hs, v<<(64-KeyHashBits)|rng.Uint64N(1<<(64-KeyHashBits)))
		}
		hs = append(hs, ^uint64(0), 0)
	case 5: // clusters
		for range rng.IntN(4) + 1 {
			base, width := rng.Uint64(), uint64(1)<<(24+rng.IntN(30))
			for range n / 4 {
				hs = append(hs, base+rng.Uint64N(width))
			}
		}
	default: // uniform
		for range n {
			hs = append(hs, rng.Uint64())
		}
	}
	rng.Shuffle(len(hs), func(i, j int) { hs[i], hs[j] = hs[j], hs[i] })
	return hs
}

// TestKeyHashesModel: every set decodes to its model, after whatever dst
// held, in the length the layout implies; the encoding does not depend on
// the order or the repeats of the hashes, and leaves them unchanged.
func TestKeyHashesModel(t *testing.T) {
	seeds := 300
	if testing.Short() || raceEnabled {
		seeds = 60
	}
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 29))
		hs := randKeyHashes(rng, int(seed%8))
		orig := slices.Clone(hs)
		want := keyHashModel(hs)
		enc := AppendKeyHashes([]byte("prefix"), hs)
		if string(enc[:6]) != "prefix" || !slices.Equal(hs, orig) {
			t.Fatalf("seed %d: dst's bytes or the hashes changed", seed)
		}
		enc = enc[6:]
		l := keyHashLowBits(uint64(len(want)))
		low, high, sample, _ := efLayout(uint64(len(want)), l, keyHashUniverse)
		if uint64(len(enc)) != keyHashHeaderLen+low+high+sample {
			t.Fatalf("seed %d: %d values in %d bytes, the layout says %d", seed, len(want), len(enc), keyHashHeaderLen+low+high+sample)
		}
		got, err := DecodeKeyHashes(enc, []uint64{7})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if got[0] != 7 || !slices.Equal(got[1:], want) {
			t.Fatalf("seed %d: decoded %d values, want %d (dst kept: %t)", seed, len(got)-1, len(want), got[0] == 7)
		}
		rng.Shuffle(len(hs), func(i, j int) { hs[i], hs[j] = hs[j], hs[i] })
		if again := AppendKeyHashes(nil, append(hs, hs[:len(hs)/2]...)); string(again) != string(enc) {
			t.Fatalf("seed %d: the same set, shuffled and repeated, encodes differently", seed)
		}
	}
}

// TestKeyHashLowBits: l gives the least size of every l the decoder
// could take, and about log2(2^40/m); at 50,000 values, 2 + l bits and a
// little for the samples.
func TestKeyHashLowBits(t *testing.T) {
	size := func(m uint64, l uint) uint64 {
		low, high, sample, _ := efLayout(m, l, keyHashUniverse)
		return low + high + sample
	}
	for _, m := range []uint64{0, 1, 2, 3, 10, 63, 64, 65, 1000, 50_000, 1 << 20, 3 << 20, 1 << 31} {
		l := keyHashLowBits(m)
		for k := uint(keyHashMinLowBits); k <= KeyHashBits; k++ {
			if size(m, k) < size(m, l) || size(m, k) == size(m, l) && k < l {
				t.Errorf("m=%d: l=%d takes %d bytes, l=%d %d", m, l, size(m, l), k, size(m, k))
			}
		}
	}
	if l := keyHashLowBits(50_000); l != 24 {
		t.Errorf("50,000 values: l = %d, want 24 (2^40/50,000 ≈ 2^24.4)", l)
	}
	if bits := float64(8*size(50_000, 24)) / 50_000; bits > 26.5 {
		t.Errorf("50,000 values take %.2f bits each", bits)
	}
}

// TestDecodeKeyHashesCorrupt: each way bytes can be wrong fails with
// ErrCorrupt and leaves dst as given: the header, the length, the padding
// bits, the samples, and values in the wrong order or repeated, which
// only a writer other than AppendKeyHashes makes.
func TestDecodeKeyHashesCorrupt(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 29))
	hs := randKeyHashes(rng, 7)
	valid := AppendKeyHashes(nil, hs)
	m := len(keyHashModel(hs))
	l := keyHashLowBits(uint64(m))
	lowLen, highLen, _, _ := efLayout(uint64(m), l, keyHashUniverse)
	high := keyHashHeaderLen + int(lowLen)
	if uint64(m)*uint64(l)%64 == 0 || uint64(m+int(1<<(KeyHashBits-l)))%64 == 0 {
		t.Fatalf("set of %d values at l=%d has no padding bits to test", m, l)
	}
	// header writes the header of a set of m values with l low bits.
	header := func(m uint32, l uint) []byte {
		return append([]byte{'K', 'H', keyHashVersion, byte(l)}, byte(m), byte(m>>8), byte(m>>16), byte(m>>24))
	}
	// unsorted encodes codes as given.
	unsorted := func(codes ...uint64) []byte {
		l := keyHashLowBits(uint64(len(codes)))
		return appendEliasFano(header(uint32(len(codes)), l), codes, l, keyHashUniverse)
	}
	// Three values with one low bit more than the least size takes: a
	// valid sequence of the same length, but the set's second encoding.
	three := []uint64{1 << 38, 1 << 39, 3 << 38}
	l3 := keyHashLowBits(uint64(len(three))) + 1
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"short header", valid[:keyHashHeaderLen-1]},
		{"tag", append([]byte("KX"), valid[2:]...)},
		{"version", slices.Concat(valid[:2], []byte{2}, valid[3:])},
		{"l+1", slices.Concat(header(uint32(m), l+1), valid[keyHashHeaderLen:])},
		{"l-1", slices.Concat(header(uint32(m), l-1), valid[keyHashHeaderLen:])},
		{"m+1", slices.Concat(header(uint32(m+1), l), valid[keyHashHeaderLen:])},
		{"m-1", slices.Concat(header(uint32(m-1), l), valid[keyHashHeaderLen:])},
		{"m over the limit", slices.Concat(header(uint32(maxKeyHashes+1), keyHashLowBits(maxKeyHashes+1)), valid[keyHashHeaderLen:])},
		{"truncated", valid[:len(valid)-1]},
		{"trailing byte", append(slices.Clone(valid), 0)},
		{"a bit past the low parts", flipBit(valid, keyHashHeaderLen*8+int(lowLen)*8-1)},
		{"a bit past the high part", flipBit(valid, high*8+int(highLen)*8-1)},
		{"a high bit flipped", flipBit(valid, high*8+1)},
		{"sample", flipBit(valid, len(valid)*8-1)},
		{"l not the least size's", appendEliasFano(header(3, l3), three, l3, keyHashUniverse)},
		{"descending in a bucket", unsorted(5<<30|2, 5<<30|1)},
		{"repeated", unsorted(5<<30|2, 5<<30|2)},
	} {
		dst := []uint64{1, 2}
		got, err := DecodeKeyHashes(c.data, dst)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: err = %v, want ErrCorrupt", c.name, err)
		}
		if !slices.Equal(got, dst) {
			t.Errorf("%s: dst %v on error, want %v", c.name, got, dst)
		}
	}
	if _, err := DecodeKeyHashes(unsorted(5<<30|1, 5<<30|2), nil); err != nil {
		t.Errorf("the same bucket in order: %v", err)
	}
}

// TestDecodeKeyHashesAllocatesByData: a header claiming 2^31 values over
// a few bytes is refused before anything is allocated for them (16 GiB).
func TestDecodeKeyHashesAllocatesByData(t *testing.T) {
	data := []byte{'K', 'H', keyHashVersion, byte(keyHashLowBits(maxKeyHashes)), 0, 0, 0, 0x80, 0, 0, 0, 0}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := DecodeKeyHashes(data, nil)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("err = %v, want ErrCorrupt", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 64<<10 {
		t.Fatalf("refusing 12 bytes allocated %d bytes", n)
	}
}

// flipBit returns a copy of b with bit i (bit i%8 of byte i/8) flipped.
func flipBit(b []byte, i int) []byte {
	b = slices.Clone(b)
	b[i/8] ^= 1 << (i % 8)
	return b
}
