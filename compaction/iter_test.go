package compaction

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/monbandb/monban/internal/base"
)

// sliceIter is a forward-only base.InternalIterator over sorted entries.
type sliceIter struct {
	keys []base.InternalKey
	pos  int
}

func (s *sliceIter) First() bool                  { s.pos = 0; return s.Valid() }
func (s *sliceIter) Next() bool                   { s.pos++; return s.Valid() }
func (s *sliceIter) Valid() bool                  { return s.pos < len(s.keys) }
func (s *sliceIter) Key() base.InternalKey        { return s.keys[s.pos] }
func (s *sliceIter) Value() []byte                { return []byte(fmt.Sprint(s.keys[s.pos].Seq())) }
func (s *sliceIter) Error() error                 { return nil }
func (s *sliceIter) Close() error                 { return nil }
func (s *sliceIter) SeekGE(base.InternalKey) bool { panic("unused") }
func (s *sliceIter) SeekLT(base.InternalKey) bool { panic("unused") }
func (s *sliceIter) Last() bool                   { panic("unused") }
func (s *sliceIter) Prev() bool                   { panic("unused") }

var _ base.InternalIterator = (*sliceIter)(nil)

// visible returns what a reader at seq sees of ukey in entries: the value
// ("" for absent or deleted).
func visible(entries []base.InternalKey, ukey string, seq base.SeqNum) string {
	for _, k := range entries {
		if string(k.UserKey) == ukey && k.Seq() <= seq {
			if k.Kind() == base.KindDelete {
				return ""
			}
			return fmt.Sprint(k.Seq())
		}
	}
	return ""
}

// TestIterMatchesModel checks invariants 1–3 on random version histories.
func TestIterMatchesModel(t *testing.T) {
	for round := 0; round < 500; round++ {
		seed := rand.Uint64()
		rng := rand.New(rand.NewPCG(seed, 0))
		var in []base.InternalKey
		seq := base.SeqNum(0)
		for range rng.IntN(40) {
			seq++
			kind := base.KindSet
			if rng.IntN(3) == 0 {
				kind = base.KindDelete
			}
			in = append(in, base.MakeInternalKey([]byte{byte('a' + rng.IntN(5))}, seq, kind))
		}
		slices.SortFunc(in, base.Compare)
		var snaps []base.SeqNum
		for s := base.SeqNum(1); s <= seq; s++ {
			if rng.IntN(6) == 0 {
				snaps = append(snaps, s)
			}
		}
		absentBelow := map[string]bool{}
		for c := byte('a'); c < 'f'; c++ {
			absentBelow[string(c)] = rng.IntN(2) == 0
		}
		it := NewIter(&sliceIter{keys: in}, snaps, func(ukey []byte) (bool, DropReason) {
			return absentBelow[string(ukey)], DropFilterProof
		})
		var out []base.InternalKey
		for ok := it.First(); ok; ok = it.Next() {
			out = append(out, base.InternalKey{UserKey: append([]byte(nil), it.Key().UserKey...), Trailer: it.Key().Trailer})
			if string(it.Value()) != fmt.Sprint(it.Key().Seq()) {
				t.Fatalf("seed %d: value %q for %v", seed, it.Value(), it.Key())
			}
		}
		if !slices.IsSortedFunc(out, base.Compare) {
			t.Fatalf("seed %d: output out of order: %v", seed, out)
		}
		readers := append(slices.Clone(snaps), base.MaxSeqNum)
		for c := byte('a'); c < 'f'; c++ {
			uk := string(c)
			for _, s := range readers {
				// Below the inputs is either nothing (absentBelow) or an old
				// value; a tombstone must keep hiding the latter.
				want, got := visible(in, uk, s), visible(out, uk, s)
				if !absentBelow[uk] {
					want = visibleOrBelow(in, uk, s)
					got = visibleOrBelow(out, uk, s)
				}
				if want != got {
					t.Fatalf("seed %d: key %s at snapshot %d: input says %q, output %q\nin  %v\nout %v\nsnaps %v",
						seed, uk, s, want, got, in, out, snaps)
				}
			}
		}
		// Minimality: no two kept versions of a key share a stripe, and no
		// kept oldest tombstone could have been proven unnecessary.
		for i, k := range out {
			if i > 0 && string(out[i-1].UserKey) == string(k.UserKey) && it.stripe(out[i-1].Seq()) == it.stripe(k.Seq()) {
				t.Fatalf("seed %d: %v and %v share a stripe", seed, out[i-1], k)
			}
			last := i+1 == len(out) || string(out[i+1].UserKey) != string(k.UserKey)
			if last && k.Kind() == base.KindDelete && absentBelow[string(k.UserKey)] {
				t.Fatalf("seed %d: kept provably unnecessary tombstone %v", seed, k)
			}
		}
		total := uint64(0)
		for _, n := range it.Drops() {
			total += n
		}
		if int(total)+len(out) != len(in) {
			t.Fatalf("seed %d: %d in, %d out, %d counted as dropped", seed, len(in), len(out), total)
		}
	}
}

// visibleOrBelow is visible with "below" standing for an older value under
// the inputs, which only a tombstone in the inputs hides.
func visibleOrBelow(entries []base.InternalKey, ukey string, seq base.SeqNum) string {
	for _, k := range entries {
		if string(k.UserKey) == ukey && k.Seq() <= seq {
			if k.Kind() == base.KindDelete {
				return ""
			}
			return fmt.Sprint(k.Seq())
		}
	}
	return "below"
}
