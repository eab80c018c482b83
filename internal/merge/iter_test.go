package merge

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/monbandb/monban/internal/base"
)

// sliceIter is a base.InternalIterator over a sorted slice, the model source.
type sliceIter struct {
	keys []base.InternalKey
	pos  int // len(keys) or -1 when invalid
	err  error
	// failAt, when >= 0, makes positioning onto that index fail with err.
	failAt int
}

func newSliceIter(keys []base.InternalKey) *sliceIter {
	return &sliceIter{keys: keys, pos: -1, failAt: -1}
}

func (s *sliceIter) at(i int) bool {
	if i == s.failAt && i >= 0 && i < len(s.keys) {
		s.err, s.pos = errors.New("injected"), -1
		return false
	}
	if i < 0 || i >= len(s.keys) {
		s.pos = -1
		return false
	}
	s.pos = i
	return true
}
func (s *sliceIter) First() bool { return s.at(0) }
func (s *sliceIter) Last() bool  { return s.at(len(s.keys) - 1) }
func (s *sliceIter) SeekGE(k base.InternalKey) bool {
	i, _ := slices.BinarySearchFunc(s.keys, k, base.Compare)
	return s.at(i)
}
func (s *sliceIter) SeekLT(k base.InternalKey) bool {
	i, _ := slices.BinarySearchFunc(s.keys, k, base.Compare)
	return s.at(i - 1)
}
func (s *sliceIter) Next() bool            { return s.pos >= 0 && s.at(s.pos+1) }
func (s *sliceIter) Prev() bool            { return s.pos >= 0 && s.at(s.pos-1) }
func (s *sliceIter) Valid() bool           { return s.pos >= 0 }
func (s *sliceIter) Key() base.InternalKey { return s.keys[s.pos] }
func (s *sliceIter) Value() []byte         { return []byte(s.keys[s.pos].String()) }
func (s *sliceIter) Error() error          { return s.err }
func (s *sliceIter) Close() error          { return nil }

type tagged struct {
	key base.InternalKey
	src int
}

// TestMergeMatchesModel walks merged random sources with random operations
// and checks every position against a stably sorted concatenation.
func TestMergeMatchesModel(t *testing.T) {
	for round := 0; round < 200; round++ {
		seed := rand.Uint64()
		rng := rand.New(rand.NewPCG(seed, uint64(round)))
		var model []tagged
		var sources []base.InternalIterator
		for src := range rng.IntN(5) + 1 {
			keys := make([]base.InternalKey, rng.IntN(20))
			for i := range keys {
				// A tiny key space makes equal internal keys across sources
				// (invariant 2) and direction changes on them common.
				keys[i] = base.MakeInternalKey([]byte{byte('a' + rng.IntN(4))}, base.SeqNum(rng.IntN(3)), base.KindSet)
			}
			slices.SortFunc(keys, base.Compare)
			keys = slices.CompactFunc(keys, func(a, b base.InternalKey) bool { return base.Compare(a, b) == 0 })
			for _, k := range keys {
				model = append(model, tagged{k, src})
			}
			sources = append(sources, newSliceIter(keys))
		}
		slices.SortStableFunc(model, func(a, b tagged) int {
			if c := base.Compare(a.key, b.key); c != 0 {
				return c
			}
			return a.src - b.src
		})
		m := NewIter(sources...)
		pos := -1 // model position; -1 = invalid
		var trace []string
		for step := 0; step < 100; step++ {
			probe := base.MakeInternalKey([]byte{byte('a' + rng.IntN(5))}, base.SeqNum(rng.IntN(3)), base.KindSet)
			var op string
			switch r := rng.IntN(6); {
			case r == 0:
				op, pos = "First", min(0, len(model)-1)
				m.First()
			case r == 1:
				op, pos = "Last", len(model)-1
				m.Last()
			case r == 2:
				op = "SeekGE " + probe.String()
				pos, _ = slices.BinarySearchFunc(model, probe, func(e tagged, k base.InternalKey) int { return base.Compare(e.key, k) })
				if pos == len(model) {
					pos = -1
				}
				m.SeekGE(probe)
			case r == 3:
				op = "SeekLT " + probe.String()
				pos, _ = slices.BinarySearchFunc(model, probe, func(e tagged, k base.InternalKey) int { return base.Compare(e.key, k) })
				pos--
				m.SeekLT(probe)
			case pos >= 0 && r == 4:
				op = "Next"
				if pos++; pos == len(model) {
					pos = -1
				}
				m.Next()
			case pos >= 0:
				op = "Prev"
				pos--
				m.Prev()
			default:
				continue
			}
			trace = append(trace, op)
			if m.Valid() != (pos >= 0) {
				t.Fatalf("seed %d round %d: after %v: Valid=%v, model position %d", seed, round, trace, m.Valid(), pos)
			}
			if pos >= 0 && base.Compare(m.Key(), model[pos].key) != 0 {
				t.Fatalf("seed %d round %d: after %v: key %v, model %v", seed, round, trace, m.Key(), model[pos].key)
			}
			if pos >= 0 && m.sources[m.heap[0]] != sources[model[pos].src] {
				t.Fatalf("seed %d round %d: after %v: entry from the wrong source", seed, round, trace)
			}
		}
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMergeStopsAtFirstError(t *testing.T) {
	mk := func(s string, seq int) base.InternalKey {
		return base.MakeInternalKey([]byte(s), base.SeqNum(seq), base.KindSet)
	}
	bad := newSliceIter([]base.InternalKey{mk("b", 1), mk("d", 1)})
	bad.failAt = 1
	m := NewIter(newSliceIter([]base.InternalKey{mk("a", 1), mk("c", 1), mk("e", 1)}), bad)
	var got []string
	for ok := m.First(); ok; ok = m.Next() {
		got = append(got, string(m.Key().UserKey))
	}
	if fmt.Sprint(got) != "[a b]" || m.Error() == nil {
		t.Fatalf("got %v, err %v; want [a b] and then the error of the source stepping off b", got, m.Error())
	}
	if m.Close() == nil {
		t.Fatal("Close lost the error")
	}
}
