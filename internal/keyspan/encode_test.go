package keyspan

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/monbandb/monban/internal/base"
)

// TestEncodeRoundTrip: Decode gives back exactly what Encode was given,
// for fragments of random tombstones, and for spans with seqs and keys at
// their extremes.
func TestEncodeRoundTrip(t *testing.T) {
	check := func(t *testing.T, s Spans) {
		t.Helper()
		enc := Encode([]byte("prefix"), s)
		got, err := Decode(enc[len("prefix"):])
		if err != nil || !equalSpans(got, s) {
			t.Fatalf("Decode(Encode(%v)) = %v, %v", s.spans, got.spans, err)
		}
	}
	seeded(t, func(t *testing.T, rng *rand.Rand) {
		for range 2000 {
			check(t, Fragment(randTombstones(rng)))
		}
	})
	check(t, Spans{})
	check(t, Fragment([]Tombstone{
		{Start: nil, End: bytes.Repeat([]byte{0xff}, 300), Seq: base.MaxSeqNum},
		{Start: []byte{0}, End: []byte{1}, Seq: 1},
		{Start: []byte{0}, End: []byte{2}, Seq: base.MaxSeqNum - 1},
	}))
}

// TestDecodeRejectsDamage: every proper prefix of a valid encoding, and
// every single-byte change of it, either decodes to valid spans or fails
// with base.ErrCorruption.
func TestDecodeRejectsDamage(t *testing.T) {
	seeded(t, func(t *testing.T, rng *rand.Rand) {
		for range 200 {
			enc := Encode(nil, Fragment(randTombstones(rng)))
			for n := range len(enc) {
				if _, err := Decode(enc[:n]); !errors.Is(err, base.ErrCorruption) {
					t.Fatalf("Decode(%x), a prefix of %x: err = %v, want ErrCorruption", enc[:n], enc, err)
				}
			}
			for range 20 {
				b := bytes.Clone(enc)
				b[rng.IntN(len(b))] = byte(rng.Uint32())
				checkDecode(t, b)
			}
		}
	})
}

// checkDecode is FuzzDecode's property: Decode either fails with
// ErrCorruption or returns valid spans, which Encode then writes in a form
// Decode reads back as the same spans.
func checkDecode(t *testing.T, b []byte) {
	t.Helper()
	s, err := Decode(b)
	if err != nil {
		if !errors.Is(err, base.ErrCorruption) {
			t.Fatalf("Decode(%x): error %v does not wrap ErrCorruption", b, err)
		}
		return
	}
	checkValid(t, s)
	again, err := Decode(Encode(nil, s))
	if err != nil || !equalSpans(again, s) {
		t.Fatalf("Decode(%x) = %v, but Decode(Encode(that)) = %v, %v", b, s.spans, again.spans, err)
	}
}

func FuzzDecode(f *testing.F) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 30 {
		f.Add(Encode(nil, Fragment(randTombstones(rng))))
	}
	f.Add([]byte{})
	f.Add([]byte{formatVersion, 0xff, 0xff, 0xff, 0xff, 0x0f}) // a huge count
	f.Fuzz(checkDecode)
}

// TestDecodeBoundsAllocation: bytes claiming huge counts or lengths fail
// before anything of that size is allocated (doc: Decode allocates
// O(len(b))).
func TestDecodeBoundsAllocation(t *testing.T) {
	huge := binary.AppendUvarint(nil, 1<<24)
	for name, b := range map[string][]byte{
		"spans": append([]byte{formatVersion}, huge...),
		"key":   append(append([]byte{formatVersion, 1}, huge...), 'a'),
		"seqs":  append(append([]byte{formatVersion, 1, 1, 'a', 1, 'b'}, huge...), 1, 2, 3),
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Decode(b)
		runtime.ReadMemStats(&after)
		if !errors.Is(err, base.ErrCorruption) {
			t.Errorf("%s: Decode(%x): err = %v, want ErrCorruption", name, b, err)
		}
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<12 {
			t.Errorf("%s: Decode of %d bytes allocated %d", name, len(b), n)
		}
	}
}
