package memtable

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
)

// TestBadInput: every misuse gives an error wrapping a sentinel, never a
// panic.
func TestBadInput(t *testing.T) {
	m := New(Options{})
	for _, tc := range []struct {
		name string
		seq  base.SeqNum
		kind base.Kind
	}{
		{"unknown kind", 1, base.Kind(7)},
		{"seek kind", 1, base.Kind(0xff)},
		{"sequence past 56 bits", base.MaxSeqNum + 1, base.KindSet},
	} {
		if err := m.Add(tc.seq, tc.kind, []byte("k"), nil); !errors.Is(err, ErrInvalidEntry) {
			t.Errorf("%s: err = %v, want ErrInvalidEntry", tc.name, err)
		}
	}
	if m.Len() != 0 || m.filter.Len() != 0 {
		t.Fatalf("rejected adds left %d entries, %d fingerprints", m.Len(), m.filter.Len())
	}
	if err := m.Add(3, base.KindSet, []byte("k"), []byte("first")); err != nil {
		t.Fatal(err)
	}
	if err := m.Add(3, base.KindSet, []byte("k"), []byte("second")); !errors.Is(err, ErrInvalidEntry) {
		t.Fatalf("duplicate: err = %v", err)
	}
	if v, res := m.Get([]byte("k"), 3); res != Found || string(v) != "first" || m.filter.Len() != 1 {
		t.Fatalf("after rejected duplicate: %q %v, %d fingerprints", v, res, m.filter.Len())
	}
	m.Freeze()
	m.Freeze() // idempotent
	if err := m.Add(4, base.KindSet, []byte("k"), nil); !errors.Is(err, ErrFrozen) {
		t.Fatalf("Add after Freeze: err = %v", err)
	}
	it := m.NewIter()
	it.Close()
	if it.First() || it.Next() || it.SeekGE(base.SeekKey(nil, 1)) || it.Valid() || it.Error() == nil {
		t.Fatal("closed iterator still positions or reports no error")
	}
}

// TestBoundaryKeys: empty keys and values, and 1 MiB keys and values.
func TestBoundaryKeys(t *testing.T) {
	m := New(Options{})
	big := bytes.Repeat([]byte{0xab}, 1<<20)
	cases := []struct{ k, v []byte }{{nil, nil}, {[]byte{}, []byte("empty-key")}, {big, big}, {big[:1<<20-1], nil}}
	for i, c := range cases {
		if err := m.Add(base.SeqNum(i+1), base.KindSet, c.k, c.v); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
	}
	for i, c := range cases[1:] {
		v, res := m.Get(c.k, base.MaxSeqNum)
		if res != Found || !bytes.Equal(v, c.v) {
			t.Fatalf("case %d: Get = %v, %d bytes", i+1, res, len(v))
		}
	}
	// The empty key at seq 1 is hidden at seq 2 by its newer version, and
	// visible at seq 1.
	if v, res := m.Get(nil, 1); res != Found || len(v) != 0 {
		t.Fatalf("empty key at seq 1: %q %v", v, res)
	}
	if _, res := m.Get([]byte("nope"), base.MaxSeqNum); res != FilteredOut && res != Absent {
		t.Fatalf("absent key: %v", res)
	}
	if size := m.ApproximateSize(); size < 3<<20 {
		t.Fatalf("ApproximateSize %d does not count 3 MiB of keys and values", size)
	}
}

// TestFilterGrows: a memtable sized for 10 entries takes 20k without
// ever reporting ErrFull, and its filter stays under maxLoad.
func TestFilterGrows(t *testing.T) {
	m := New(Options{ExpectedEntries: 10})
	q0 := m.filter.QBits()
	for i := range 20_000 {
		if err := m.Add(base.SeqNum(i+1), base.KindSet, concKey(i), nil); err != nil {
			t.Fatalf("Add %d: %v", i, err)
		}
	}
	f := m.filter
	if f.QBits() <= q0 || f.QBits()+f.RBits() != FingerprintBits || f.LoadFactor() > maxLoad || f.Len() != 20_000 {
		t.Fatalf("filter q=%d (from %d) r=%d load %.2f len %d", f.QBits(), q0, f.RBits(), f.LoadFactor(), f.Len())
	}
	for i := range 20_000 {
		if _, res := m.Get(concKey(i), base.MaxSeqNum); res != Found {
			t.Fatalf("key %d after growth: %v", i, res)
		}
	}
}

// TestMayContainHashesMatchesOne: the batch probe answers each hash as
// MayContainHash does, for keys added and keys never added.
func TestMayContainHashesMatchesOne(t *testing.T) {
	m := New(Options{ExpectedEntries: 100})
	var hashes []uint64
	for i := range 200 {
		if i%2 == 0 {
			if err := m.Add(base.SeqNum(i+1), base.KindSet, concKey(i), nil); err != nil {
				t.Fatalf("Add %d: %v", i, err)
			}
		}
		hashes = append(hashes, filter.Hash(concKey(i)))
	}
	maybe := make([]bool, len(hashes))
	m.MayContainHashes(hashes, maybe)
	for i, h := range hashes {
		if maybe[i] != m.MayContainHash(h) || i%2 == 0 && !maybe[i] {
			t.Fatalf("key %d: batch %v, one %v", i, maybe[i], m.MayContainHash(h))
		}
	}
}

// TestResultString keeps the names kvbench and Explain print stable.
func TestResultString(t *testing.T) {
	for r, want := range map[Result]string{FilteredOut: "filtered-out", Absent: "absent", Found: "found", Deleted: "deleted", 9: "Result(9)"} {
		if r.String() != want {
			t.Errorf("%d: %q", r, r.String())
		}
	}
}

// TestLessMatchesCompare: the prefix shortcut in less orders entries
// exactly like base.Compare, including keys that differ only in padding
// zeros (a vs a\x00), share 8-byte prefixes, or are shorter than 8 bytes.
func TestLessMatchesCompare(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 5))
	alphabet := []byte{0x00, 0x01, 0x7f, 0x80, 0xff}
	key := func() base.InternalKey {
		k := make([]byte, rng.IntN(13))
		for i := range k {
			k[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return base.MakeInternalKey(k, base.SeqNum(rng.IntN(3)), base.Kind(rng.IntN(2)))
	}
	for range 200_000 {
		a, b := key(), key()
		if got, want := less(pivot(a), pivot(b)), base.Compare(a, b) < 0; got != want {
			t.Fatalf("seed %d: less(%v, %v) = %v, base.Compare says %v", seed, a, b, got, want)
		}
	}
}
