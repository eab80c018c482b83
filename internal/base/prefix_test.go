package base

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// TestKeyPrefix: KeyPrefix is a key's first 8 bytes, zero-padded, read
// big-endian, for every length (the short ones take two overlapping loads
// or a loop), and where two keys' prefixes differ they order the keys as
// bytes.Compare does.
func TestKeyPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	key := func() []byte {
		k := make([]byte, rng.IntN(13))
		for i := range k {
			k[i] = byte(rng.IntN(4)) // few values, so that prefixes tie often
		}
		return k
	}
	for range 20000 {
		a, b := key(), key()
		var padded [8]byte
		copy(padded[:], a)
		if got, want := KeyPrefix(a), binary.BigEndian.Uint64(padded[:]); got != want {
			t.Fatalf("KeyPrefix(%x) = %016x, want %016x", a, got, want)
		}
		if pa, pb := KeyPrefix(a), KeyPrefix(b); pa != pb && cmp.Compare(pa, pb) != bytes.Compare(a, b) {
			t.Fatalf("KeyPrefix orders %x and %x as %d, bytes.Compare as %d", a, b, cmp.Compare(pa, pb), bytes.Compare(a, b))
		}
	}
}
