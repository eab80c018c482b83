package memtable

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
)

// model is the reference memtable: a sorted slice of entries.
type model struct {
	ents []modelEntry // sorted by base.Compare
}

type modelEntry struct {
	key   base.InternalKey
	value []byte
}

func (md *model) find(k base.InternalKey) (int, bool) {
	return slices.BinarySearchFunc(md.ents, k, func(e modelEntry, k base.InternalKey) int {
		return base.Compare(e.key, k)
	})
}

func (md *model) add(k base.InternalKey, v []byte) bool {
	i, ok := md.find(k)
	if ok {
		return false
	}
	md.ents = slices.Insert(md.ents, i, modelEntry{k, v})
	return true
}

// get returns the newest version of key at or below seq.
func (md *model) get(key []byte, seq base.SeqNum) (modelEntry, bool) {
	i, _ := md.find(base.SeekKey(key, seq))
	if i < len(md.ents) && bytes.Equal(md.ents[i].key.UserKey, key) {
		return md.ents[i], true
	}
	return modelEntry{}, false
}

func (md *model) hasUserKey(key []byte) bool {
	i, _ := md.find(base.SeekKey(key, base.MaxSeqNum))
	return i < len(md.ents) && bytes.Equal(md.ents[i].key.UserKey, key)
}

// randKey draws from a small alphabet so versions pile up, including the
// empty key, with a rare 1 MiB key.
func randKey(rng *rand.Rand) []byte {
	if rng.IntN(500) == 0 {
		k := bytes.Repeat([]byte{'z'}, 1<<20)
		k[len(k)-1] = byte('a' + rng.IntN(2))
		return k
	}
	if rng.IntN(2) == 0 {
		// 7 to 14 bytes sharing the first 7, differing around the 8 and
		// 12 key bytes an entry compares before following its pointer, in
		// zeros too: a padded prefix must not tie a key with a longer one
		// that ends in zeros.
		k := []byte("ppppppp")
		for range rng.IntN(8) {
			k = append(k, []byte{0, 'a', 'b'}[rng.IntN(3)])
		}
		return k
	}
	k := make([]byte, rng.IntN(4))
	for i := range k {
		k[i] = byte('a' + rng.IntN(4))
	}
	return k
}

func randValue(rng *rand.Rand) []byte {
	switch rng.IntN(300) {
	case 0:
		return bytes.Repeat([]byte{'V'}, 1<<20)
	case 1:
		return nil
	}
	v := make([]byte, rng.IntN(20))
	for i := range v {
		v[i] = byte(rng.Uint32())
	}
	return v
}

func randInternalKey(rng *rand.Rand, md *model) base.InternalKey {
	if len(md.ents) > 0 && rng.IntN(2) == 0 {
		k := md.ents[rng.IntN(len(md.ents))].key
		if rng.IntN(3) == 0 {
			k.Trailer += uint64(rng.IntN(3)) - 1 // neighbours, including seek-kind trailers
		}
		return k
	}
	return base.MakeInternalKey(randKey(rng), base.SeqNum(rng.IntN(60)), base.Kind(rng.IntN(2)))
}

func short(k base.InternalKey) string {
	if len(k.UserKey) > 8 {
		return fmt.Sprintf("%q…(%d bytes)#%d,%v", k.UserKey[:8], len(k.UserKey), k.Seq(), k.Kind())
	}
	return k.String()
}

func TestMemtableModel(t *testing.T) {
	for round := range 4 {
		seed := rand.Uint64()
		t.Run(fmt.Sprint(round), func(t *testing.T) { runMemtableModel(t, seed, 3000) })
	}
}

func runMemtableModel(t *testing.T, seed uint64, ops int) {
	rng := rand.New(rand.NewPCG(seed, 1))
	m := New(Options{ExpectedEntries: rng.IntN(100), OffHeap: rng.IntN(2) == 0}) // small: force filter growth
	md := &model{}
	var iters []*Iter
	var snaps [][]modelEntry
	for op := range ops {
		switch r := rng.IntN(100); {
		case r < 45: // Add
			k := base.MakeInternalKey(randKey(rng), base.SeqNum(rng.IntN(60)), base.Kind(rng.IntN(2)))
			v := randValue(rng)
			if k.Kind() == base.KindDelete {
				v = nil
			}
			err := m.Add(k.Seq(), k.Kind(), k.UserKey, v)
			if added := md.add(k, bytes.Clone(v)); added != (err == nil) {
				t.Fatalf("seed %d op %d: Add(%s) = %v, model added=%v", seed, op, short(k), err, added)
			}
			if err != nil && !errors.Is(err, ErrInvalidEntry) {
				t.Fatalf("seed %d op %d: duplicate Add error %v does not wrap ErrInvalidEntry", seed, op, err)
			}
			if len(v) > 0 {
				v[0]++ // Add must have copied
			}
		case r < 85: // Get
			k := randInternalKey(rng, md)
			checkGet(t, seed, op, m, md, k.UserKey, k.Seq())
		case r < 90: // open an iterator; writes continue
			iters = append(iters, m.NewIter())
			snaps = append(snaps, slices.Clone(md.ents))
		default: // walk an iterator opened earlier against its snapshot
			if len(iters) > 0 {
				i := rng.IntN(len(iters))
				checkIter(t, seed, rng, iters[i], snaps[i], false)
			}
		}
	}
	checkIter(t, seed, rng, m.NewIter(), md.ents, true)
	if m.Len() != len(md.ents) || m.filter.Len() != len(md.ents) {
		t.Fatalf("seed %d: Len %d, filter Len %d, model %d entries", seed, m.Len(), m.filter.Len(), len(md.ents))
	}
	for _, e := range md.ents {
		if !m.MayContainHash(filter.Hash(e.key.UserKey)) {
			t.Fatalf("seed %d: filter false negative for %s", seed, short(e.key))
		}
	}
	for _, it := range iters {
		if err := it.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func checkGet(t *testing.T, seed uint64, op int, m *Memtable, md *model, key []byte, seq base.SeqNum) {
	t.Helper()
	v, res := m.Get(key, seq)
	want, ok := md.get(key, seq)
	switch {
	case ok && want.key.Kind() == base.KindSet:
		if res != Found || !bytes.Equal(v, want.value) {
			t.Fatalf("seed %d op %d: Get(%q…, %d) = %v, want found %s", seed, op, key[:min(len(key), 8)], seq, res, short(want.key))
		}
	case ok:
		if res != Deleted {
			t.Fatalf("seed %d op %d: Get(%q…, %d) = %v, want deleted %s", seed, op, key[:min(len(key), 8)], seq, res, short(want.key))
		}
	case md.hasUserKey(key):
		// Versions exist, all newer than seq: the filter must admit it.
		if res != Absent {
			t.Fatalf("seed %d op %d: Get(%q…, %d) = %v, want absent", seed, op, key[:min(len(key), 8)], seq, res)
		}
	default:
		if res != Absent && res != FilteredOut {
			t.Fatalf("seed %d op %d: Get(%q…, %d) = %v, want absent or filtered-out", seed, op, key[:min(len(key), 8)], seq, res)
		}
	}
}

// checkIter drives it with a random walk of positioning calls and compares
// every step with the sorted snapshot want.
func checkIter(t *testing.T, seed uint64, rng *rand.Rand, it *Iter, want []modelEntry, fresh bool) {
	t.Helper()
	pos := -1 // model position; -1 before first, len(want) after last
	for step := range 200 {
		var ok bool
		var call string
		r := rng.IntN(10)
		if step == 0 && !fresh {
			r = rng.IntN(4) // an iterator walked before: position it first
		}
		switch {
		case r == 0:
			call, ok, pos = "First", it.First(), 0
		case r == 1:
			call, ok, pos = "Last", it.Last(), len(want)-1
			if pos < 0 {
				pos = len(want)
			}
		case r == 2:
			k := randInternalKey(rng, &model{ents: want})
			pos, _ = slices.BinarySearchFunc(want, k, func(e modelEntry, k base.InternalKey) int { return base.Compare(e.key, k) })
			call, ok = "SeekGE "+short(k), it.SeekGE(k)
		case r == 3:
			k := randInternalKey(rng, &model{ents: want})
			i, _ := slices.BinarySearchFunc(want, k, func(e modelEntry, k base.InternalKey) int { return base.Compare(e.key, k) })
			call, ok, pos = "SeekLT "+short(k), it.SeekLT(k), i-1
		case r < 7:
			if pos >= len(want) {
				call, ok = "Next (at end)", it.Next()
			} else {
				call, ok, pos = "Next", it.Next(), pos+1
			}
		default:
			if pos < 0 {
				call, ok = "Prev (at start)", it.Prev()
			} else {
				call, ok, pos = "Prev", it.Prev(), pos-1
			}
		}
		if pos < -1 {
			pos = -1
		}
		wantOK := pos >= 0 && pos < len(want)
		if ok != wantOK || it.Valid() != wantOK {
			t.Fatalf("seed %d step %d: %s = %v (Valid %v), model position %d of %d", seed, step, call, ok, it.Valid(), pos, len(want))
		}
		if !ok {
			if pos >= len(want) {
				pos = len(want)
			}
			if err := it.Error(); err != nil {
				t.Fatalf("seed %d: %s: Error = %v", seed, call, err)
			}
			continue
		}
		if base.Compare(it.Key(), want[pos].key) != 0 || !bytes.Equal(it.Value(), want[pos].value) {
			t.Fatalf("seed %d step %d: %s at %s, model at %s", seed, step, call, short(it.Key()), short(want[pos].key))
		}
	}
}
