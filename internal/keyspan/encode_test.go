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
		// The claims are of 16 MiB and more; the error message and the
		// race detector's bookkeeping take a few KiB.
		if n := after.TotalAlloc - before.TotalAlloc; n > 1<<16 {
			t.Errorf("%s: Decode of %d bytes allocated %d", name, len(b), n)
		}
	}
}

// TestDecodeRejects walks the package doc's list of what Decode rejects,
// one malformed encoding each, built by hand from the doc's example span
// [a,b)#5 (01 61 01 62 01 05).
func TestDecodeRejects(t *testing.T) {
	maxSeq := binary.AppendUvarint(nil, uint64(base.MaxSeqNum))
	tooBig := binary.AppendUvarint(nil, uint64(base.MaxSeqNum)+1)
	for name, b := range map[string][]byte{
		"empty":              {},
		"unknown version":    {2, 1, 1, 'a', 1, 'b', 1, 5},
		"count beyond bytes": {1, 2, 1, 'a', 1, 'b', 1, 5},
		"trailing bytes":     {1, 1, 1, 'a', 1, 'b', 1, 5, 0},
		"start == end":       {1, 1, 1, 'a', 1, 'a', 1, 5},
		"start > end":        {1, 1, 1, 'b', 1, 'a', 1, 5},
		"overlap":            {1, 2, 1, 'a', 1, 'c', 1, 5, 1, 'b', 1, 'd', 1, 5},
		"out of order":       {1, 2, 1, 'c', 1, 'd', 1, 5, 1, 'a', 1, 'b', 1, 5},
		"no seqs":            {1, 1, 1, 'a', 1, 'b', 0},
		"seq 0":              {1, 1, 1, 'a', 1, 'b', 1, 0},
		"seq above max":      append([]byte{1, 1, 1, 'a', 1, 'b', 1}, tooBig...),
		"zero gap":           {1, 1, 1, 'a', 1, 'b', 2, 5, 0},
		"gap to seq 0":       {1, 1, 1, 'a', 1, 'b', 2, 5, 5},
		"key overruns":       {1, 1, 1, 'a', 9, 'b', 1, 5},
		"varint overflows":   {1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
	} {
		if s, err := Decode(b); !errors.Is(err, base.ErrCorruption) {
			t.Errorf("%s: Decode(%x) = %v, %v; want ErrCorruption", name, b, s.spans, err)
		}
	}
	// The extremes just inside the rules decode.
	for name, b := range map[string][]byte{
		"seq max":     append([]byte{1, 1, 1, 'a', 1, 'b', 1}, maxSeq...),
		"gap to 1":    {1, 1, 1, 'a', 1, 'b', 2, 5, 4},
		"empty start": {1, 1, 0, 1, 'b', 1, 5},
		"abutting":    {1, 2, 1, 'a', 1, 'b', 1, 5, 0, 1, 'c', 1, 6},
	} {
		if _, err := Decode(b); err != nil {
			t.Errorf("%s: Decode(%x): %v", name, b, err)
		}
	}
}
