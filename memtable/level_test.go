package memtable

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"weak"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
)

// TestLevelModel interleaves writes, removals, rotations and flushes and
// checks the level against a model: the list of memtables' user keys.
//
// "After Flushed, a key only the flushed memtable held is no longer
// admitted" is asserted exactly: with FingerprintBits = 40 and at most a
// few thousand fingerprints, a false positive has probability ~2^-29 per
// probe, so a failure means a subtraction bug, not bad luck.
func TestLevelModel(t *testing.T) {
	for round := range 4 {
		seed := rand.Uint64()
		t.Run(fmt.Sprint(round), func(t *testing.T) { runLevelModel(t, seed, 4000) })
	}
}

type levelModel struct {
	// tables[0] is the active memtable's entries, then immutables newest
	// first; each maps an internal key's string form to its user key.
	tables []map[string][]byte
}

func (lm *levelModel) keyCount(uk []byte) int {
	n := 0
	for _, tb := range lm.tables {
		for _, k := range tb {
			if string(k) == string(uk) {
				n++
			}
		}
	}
	return n
}

func runLevelModel(t *testing.T, seed uint64, ops int) {
	rng := rand.New(rand.NewPCG(seed, 2))
	l := NewLevel(New(Options{ExpectedEntries: rng.IntN(50)}))
	lm := &levelModel{tables: []map[string][]byte{{}}}
	seq := base.SeqNum(1)
	userKey := func() []byte { return fmt.Appendf(nil, "k%d", rng.IntN(400)) }
	var old []*Level // earlier levels must stay valid (copy-on-write)
	var oldModels [][]map[string][]byte
	for op := range ops {
		switch r := rng.IntN(100); {
		case r < 70:
			uk := userKey()
			kind := base.Kind(rng.IntN(2))
			if err := l.Active().Add(seq, kind, uk, []byte("v")); err != nil {
				t.Fatalf("seed %d op %d: Add: %v", seed, op, err)
			}
			lm.tables[0][base.MakeInternalKey(uk, seq, kind).String()] = uk
			seq++
		case r < 88:
			old = append(old, l)
			oldModels = append(oldModels, append([]map[string][]byte(nil), lm.tables...))
			next, err := l.Rotate(New(Options{ExpectedEntries: rng.IntN(50)}))
			if err != nil {
				t.Fatalf("seed %d op %d: Rotate: %v", seed, op, err)
			}
			if err := l.Active().Add(seq, base.KindSet, []byte("x"), nil); !errors.Is(err, ErrFrozen) {
				t.Fatalf("seed %d op %d: Add to the rotated-out memtable: err = %v, want ErrFrozen", seed, op, err)
			}
			l = next
			lm.tables = append([]map[string][]byte{{}}, lm.tables...)
		default:
			imm := l.Immutables()
			if len(imm) == 0 {
				if _, err := l.Flushed(l.Active()); !errors.Is(err, ErrLevelTransition) {
					t.Fatalf("seed %d op %d: Flushed(active) err = %v", seed, op, err)
				}
				continue
			}
			if len(imm) > 1 {
				if _, err := l.Flushed(imm[0]); !errors.Is(err, ErrLevelTransition) {
					t.Fatalf("seed %d op %d: Flushed(newest of %d) err = %v", seed, op, len(imm), err)
				}
			}
			next, err := l.Flushed(imm[len(imm)-1])
			if err != nil {
				t.Fatalf("seed %d op %d: Flushed: %v", seed, op, err)
			}
			flushed := lm.tables[len(lm.tables)-1]
			old = append(old, l)
			oldModels = append(oldModels, append([]map[string][]byte(nil), lm.tables...))
			l = next
			lm.tables = lm.tables[:len(lm.tables)-1]
			for _, uk := range flushed {
				if lm.keyCount(uk) == 0 && l.MayContainHash(filter.Hash(uk)) {
					t.Fatalf("seed %d op %d: key %q left with its flushed memtable but the level still admits it", seed, op, uk)
				}
			}
		}
		checkLevel(t, seed, op, l, lm.tables)
	}
	for i, ol := range old {
		checkLevel(t, seed, -i, ol, oldModels[i])
	}
}

func checkLevel(t *testing.T, seed uint64, op int, l *Level, tables []map[string][]byte) {
	t.Helper()
	if len(l.Immutables()) != len(tables)-1 {
		t.Fatalf("seed %d op %d: %d immutables, model %d", seed, op, len(l.Immutables()), len(tables)-1)
	}
	want := 0
	for _, tb := range tables[1:] {
		want += len(tb)
	}
	got := 0
	if c := l.CombinedFilter(); c != nil {
		got = c.Len()
		if !fits(c, 0) {
			t.Fatalf("seed %d op %d: combined filter at load %.2f", seed, op, c.LoadFactor())
		}
	}
	if got != want {
		t.Fatalf("seed %d op %d: combined filter Len %d, immutables hold %d entries", seed, op, got, want)
	}
	for i, tb := range tables {
		m := l.Active()
		if i > 0 {
			m = l.Immutables()[i-1]
		}
		if m.Len() != len(tb) {
			t.Fatalf("seed %d op %d: memtable %d has %d entries, model %d", seed, op, i, m.Len(), len(tb))
		}
		for _, uk := range tb {
			if !l.MayContainHash(filter.Hash(uk)) {
				t.Fatalf("seed %d op %d: level filter false negative for %q (memtable %d)", seed, op, uk, i)
			}
		}
	}
}

func TestLevelTransitionErrors(t *testing.T) {
	a := New(Options{})
	l := NewLevel(a)
	for _, next := range []*Memtable{nil, a} {
		if _, err := l.Rotate(next); !errors.Is(err, ErrLevelTransition) {
			t.Fatalf("Rotate(%p) err = %v", next, err)
		}
	}
	frozen := New(Options{})
	frozen.Freeze()
	if _, err := l.Rotate(frozen); !errors.Is(err, ErrLevelTransition) {
		t.Fatalf("Rotate(frozen) err = %v", err)
	}
	if _, err := l.Flushed(New(Options{})); !errors.Is(err, ErrLevelTransition) {
		t.Fatalf("Flushed(stranger) err = %v", err)
	}
}

// TestFlushedLevelLetsGoOfTheMemtable: the level Flushed returns must not
// keep the flushed memtable reachable, or its tree and filter, on the Go
// heap, live until the next rotation replaces the level: a memtable's
// worth of heap held for nothing, between every flush and the next.
func TestFlushedLevelLetsGoOfTheMemtable(t *testing.T) {
	for _, queued := range []int{1, 2, 3} {
		t.Run(fmt.Sprintf("queued=%d", queued), func(t *testing.T) {
			l := NewLevel(New(Options{}))
			for range queued {
				var err error
				if l, err = l.Rotate(New(Options{})); err != nil {
					t.Fatal(err)
				}
			}
			imms := l.Immutables()
			oldest := weak.Make(imms[len(imms)-1])
			l, err := l.Flushed(imms[len(imms)-1])
			if err != nil {
				t.Fatal(err)
			}
			imms = nil
			runtime.GC()
			runtime.GC()
			if oldest.Value() != nil {
				t.Fatalf("the flushed memtable is still reachable from the level (%d immutables left)", len(l.Immutables()))
			}
			runtime.KeepAlive(l)
		})
	}
}
