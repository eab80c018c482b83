package base

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestInternalKeyRoundTrip(t *testing.T) {
	for _, k := range []InternalKey{
		MakeInternalKey(nil, 0, KindDelete),
		MakeInternalKey([]byte("a"), 1, KindSet),
		MakeInternalKey(bytes.Repeat([]byte{0xff}, 1<<20), MaxSeqNum, KindSet),
	} {
		enc := k.Append(nil)
		if len(enc) != k.Size() {
			t.Fatalf("%v: encoded %d bytes, Size says %d", k, len(enc), k.Size())
		}
		got, err := DecodeInternalKey(enc)
		if err != nil || Compare(got, k) != 0 || got.Seq() != k.Seq() || got.Kind() != k.Kind() {
			t.Fatalf("round trip of %v: got %v, %v", k, got, err)
		}
	}
	if _, err := DecodeInternalKey(make([]byte, TrailerLen-1)); !errors.Is(err, ErrCorruption) {
		t.Fatalf("short key: err = %v, want ErrCorruption", err)
	}
}

// TestOrderMatchesModel checks invariants 2 and 3 against a model order
// built from (user key asc, seq desc, kind desc).
func TestOrderMatchesModel(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 0))
	keys := make([]InternalKey, 500)
	for i := range keys {
		uk := make([]byte, rng.IntN(3))
		for j := range uk {
			uk[j] = byte('a' + rng.IntN(3))
		}
		keys[i] = MakeInternalKey(uk, SeqNum(rng.IntN(5)), Kind(rng.IntN(2)))
	}
	model := func(a, b InternalKey) int {
		if c := bytes.Compare(a.UserKey, b.UserKey); c != 0 {
			return c
		}
		if a.Seq() != b.Seq() {
			if a.Seq() > b.Seq() {
				return -1
			}
			return 1
		}
		return int(b.Kind()) - int(a.Kind())
	}
	for _, a := range keys {
		for _, b := range keys {
			want := model(a, b)
			if got := Compare(a, b); sign(got) != sign(want) {
				t.Fatalf("seed %d: Compare(%v, %v) = %d, model %d", seed, a, b, got, want)
			}
			if got := CompareEncoded(a.Append(nil), b.Append(nil)); sign(got) != sign(want) {
				t.Fatalf("seed %d: CompareEncoded(%v, %v) = %d, model %d", seed, a, b, got, want)
			}
		}
	}
	// A seek key at s sorts after every version newer than s and before the
	// newest version at or below s.
	slices.SortFunc(keys, Compare)
	for _, probe := range keys {
		sk := SeekKey(probe.UserKey, probe.Seq())
		i, _ := slices.BinarySearchFunc(keys, sk, Compare)
		if i == len(keys) || !bytes.Equal(keys[i].UserKey, probe.UserKey) || keys[i].Seq() > probe.Seq() {
			t.Fatalf("seed %d: seek %v landed on index %d", seed, sk, i)
		}
		if i > 0 && bytes.Equal(keys[i-1].UserKey, probe.UserKey) && keys[i-1].Seq() <= probe.Seq() {
			t.Fatalf("seed %d: seek %v skipped visible %v", seed, sk, keys[i-1])
		}
	}
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// TestSharedPrefixLen: the word-at-a-time count agrees with a byte loop
// on keys of every length that share prefixes of every length.
func TestSharedPrefixLen(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		a := make([]byte, rng.IntN(40))
		for i := range a {
			a[i] = byte(rng.IntN(3))
		}
		b := append([]byte(nil), a[:rng.IntN(len(a)+1)]...)
		for range rng.IntN(10) {
			b = append(b, byte(rng.IntN(3)))
		}
		want := 0
		for want < min(len(a), len(b)) && a[want] == b[want] {
			want++
		}
		if got := SharedPrefixLen(a, b); got != want {
			t.Fatalf("SharedPrefixLen(%x, %x) = %d, want %d", a, b, got, want)
		}
	}
}
