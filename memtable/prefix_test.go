package memtable

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
)

// prefixSplits: a cut at the first '/', a fixed length, and one that is
// not monotone (contract 2 of filter.Split), which the filter must still
// answer for.
var prefixSplits = []*filter.Split{
	{Name: "to-slash", Len: func(k []byte) int {
		if i := bytes.IndexByte(k, '/'); i >= 0 {
			return i
		}
		return len(k)
	}},
	{Name: "fixed2", Len: func(k []byte) int { return min(len(k), 2) }},
	{Name: "scattered", Len: func(k []byte) int {
		if len(k) == 0 {
			return 0
		}
		return int(k[len(k)-1]) % (len(k) + 1)
	}},
}

// prefixModel is what one memtable should hold: its entries' prefixes,
// and how many fingerprints its filter has (one per entry, one per run of
// Adds with one prefix hash: invariant 2).
type prefixModel struct {
	prefixes     map[string]bool
	fingerprints int
	last         string
	hasLast      bool
}

// TestPrefixModel drives a Level through random Adds (exact duplicates
// among them, which are rejected), rotations and flushes, with memtables
// made with a random split and a first filter sized for 4 entries so it
// grows, and checks against the model after every operation: every prefix
// an entry of the level has is admitted by its memtable (no false
// negative, ever), a prefix no entry has is ruled out by every memtable,
// and each
// filter holds the fingerprints invariant 2 says.
func TestPrefixModel(t *testing.T) {
	seeds := 40
	if testing.Short() {
		seeds = 10
	}
	for seed := range uint64(seeds) {
		rng := rand.New(rand.NewPCG(seed, 25))
		split := prefixSplits[rng.IntN(len(prefixSplits))]
		newMem := func() (*Memtable, *prefixModel) {
			return New(Options{ExpectedEntries: 4, Split: split}), &prefixModel{prefixes: map[string]bool{}}
		}
		m, md := newMem()
		l, models := NewLevel(m), []*prefixModel{md} // models[0] is the active memtable's
		var added []base.InternalKey                 // to the active memtable
		for op := range 600 {
			switch r := rng.IntN(100); {
			case r < 2 && len(models) < 5:
				m, md := newMem()
				var err error
				if l, err = l.Rotate(m); err != nil {
					t.Fatalf("seed %d op %d: Rotate: %v", seed, op, err)
				}
				models, added = append([]*prefixModel{md}, models...), nil
			case r < 4 && len(models) > 1:
				var err error
				if l, err = l.Flushed(l.Immutables()[len(models)-2]); err != nil {
					t.Fatalf("seed %d op %d: Flushed: %v", seed, op, err)
				}
				models = models[:len(models)-1]
			case r < 10 && len(added) > 0: // an exact duplicate, rejected
				k := added[rng.IntN(len(added))]
				err := l.Active().Add(k.Seq(), k.Kind(), k.UserKey, nil)
				md := models[0]
				if !errors.Is(err, ErrInvalidEntry) {
					t.Fatalf("seed %d op %d: duplicate Add(%v): %v", seed, op, k, err)
				}
				if p := string(split.Prefix(k.UserKey)); md.hasLast && md.last != p {
					md.hasLast = false // its prefix was inserted, then taken out again
				}
			default:
				uk := fmt.Appendf(nil, "%c%c", 'a'+rng.IntN(3), 'a'+rng.IntN(3))
				if rng.IntN(3) > 0 {
					uk = fmt.Appendf(uk, "/%d", rng.IntN(20))
				}
				k := base.MakeInternalKey(uk, base.SeqNum(op+1), base.KindSet)
				if err := l.Active().Add(k.Seq(), k.Kind(), uk, []byte("v")); err != nil {
					t.Fatalf("seed %d op %d: Add: %v", seed, op, err)
				}
				added = append(added, k)
				md, p := models[0], string(split.Prefix(uk))
				md.prefixes[p] = true
				md.fingerprints++
				if !md.hasLast || md.last != p {
					md.fingerprints++
				}
				md.last, md.hasLast = p, true
			}
			checkPrefixes(t, seed, op, split, l, models)
		}
	}
}

func checkPrefixes(t *testing.T, seed uint64, op int, split *filter.Split, l *Level, models []*prefixModel) {
	t.Helper()
	all := map[string]bool{}
	for i, md := range models {
		m := l.Active()
		if i > 0 {
			m = l.Immutables()[i-1]
		}
		if m.filter.Len() != md.fingerprints {
			t.Fatalf("seed %d op %d: memtable %d holds %d fingerprints, model %d", seed, op, i, m.filter.Len(), md.fingerprints)
		}
		for p := range md.prefixes {
			h := filter.PrefixHash([]byte(p))
			if !m.MayContainPrefix(split, h) {
				t.Fatalf("seed %d op %d (%s): prefix %q of memtable %d ruled out", seed, op, split.Name, p, i)
			}
			all[p] = true
		}
	}
	for _, p := range []string{"zz", "a", "ab/x", "q/1"} {
		if !all[p] && anyAdmits(l, split, filter.PrefixHash([]byte(p))) {
			t.Fatalf("seed %d op %d (%s): absent prefix %q admitted", seed, op, split.Name, p)
		}
	}
}

// anyAdmits reports whether some memtable of l may hold a key of the
// prefix: what an iterator over the level must read.
func anyAdmits(l *Level, split *filter.Split, prefixHash uint64) bool {
	for _, m := range append([]*Memtable{l.Active()}, l.Immutables()...) {
		if m.MayContainPrefix(split, prefixHash) {
			return true
		}
	}
	return false
}

// TestPrefixOtherSplit: a memtable, and a level holding one, whose filter
// does not hold a split's prefixes answers true for every prefix: made
// without a split, with another, or asked with none.
func TestPrefixOtherSplit(t *testing.T) {
	split, other := prefixSplits[0], prefixSplits[1]
	for _, tc := range []struct {
		name string
		made *filter.Split
		ask  *filter.Split
	}{
		{"made without", nil, split},
		{"made with another", other, split},
		{"asked without", split, nil},
		{"unnamed", &filter.Split{Len: split.Len}, &filter.Split{Len: split.Len}},
	} {
		imm, active := New(Options{Split: tc.made}), New(Options{Split: split})
		for i := range 100 {
			if err := imm.Add(base.SeqNum(i+1), base.KindSet, fmt.Appendf(nil, "k%d/x", i), nil); err != nil {
				t.Fatal(err)
			}
		}
		l, err := NewLevel(imm).Rotate(active)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 100 {
			h := filter.PrefixHash(fmt.Appendf(nil, "absent%d", i))
			if !imm.MayContainPrefix(tc.ask, h) || !anyAdmits(l, tc.ask, h) {
				t.Fatalf("%s: absent prefix %d ruled out", tc.name, i)
			}
		}
	}
}
