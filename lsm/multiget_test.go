package lsm

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestMultiGet: MultiGet agrees with Get key by key, and while a writer
// commits batches that keep a and b equal it never sees them differ (two
// Gets could).
func TestMultiGet(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{MemtableSize: 4 << 10})
	defer d.Close()
	var keys [][]byte
	for i := range 300 {
		k := fmt.Appendf(nil, "k%03d", i)
		keys = append(keys, k)
		if i%3 != 0 {
			d.Put(k, fmt.Appendf(nil, "v%d", i))
		}
	}
	d.Flush()
	values, errs := d.MultiGet(keys)
	for i, k := range keys {
		v, err := d.Get(k)
		if string(v) != string(values[i]) || !errors.Is(errs[i], err) && errs[i] != err {
			t.Fatalf("MultiGet(%s) = %q, %v; Get = %q, %v", k, values[i], errs[i], v, err)
		}
	}

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for n := 1; ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			var b Batch
			b.Put([]byte("a"), []byte(strconv.Itoa(n)))
			b.Put([]byte("b"), []byte(strconv.Itoa(n)))
			if err := d.Write(&b); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for range 20000 {
		v, errs := d.MultiGet([][]byte{[]byte("a"), []byte("b")})
		if string(v[0]) != string(v[1]) || errs[0] != errs[1] {
			close(stop)
			wg.Wait()
			t.Fatalf("MultiGet saw a = %q (%v), b = %q (%v): not one state", v[0], errs[0], v[1], errs[1])
		}
	}
	close(stop)
	wg.Wait()
	d.Close()
	if _, errs := d.MultiGet(keys[:1]); !errors.Is(errs[0], ErrClosed) {
		t.Fatalf("MultiGet after Close: %v", errs[0])
	}
}

// TestMultiGetMatchesGet: on trees of every shape a random history leaves
// (tiny memtables and levels: L0 tables, several levels, immutable
// memtables, tombstones, overwrites), MultiGet of a random batch —
// unsorted, with repeats, the empty key and keys that tie on their first
// bytes — answers every key as Get does at a snapshot taken with it.
func TestMultiGetMatchesGet(t *testing.T) {
	for _, o := range []Options{
		{MemtableSize: 2 << 10, L0CompactionThreshold: 2, LBaseMaxBytes: 8 << 10, LevelMultiplier: 2, TargetFileSize: 2 << 10},
		{MemtableSize: 2 << 10, IgnoreFilters: true},
		{MemtableSize: 4 << 10, FilterSizing: FilterSizingPerLevel, BloomBitsPerKey: 3, L0CompactionThreshold: 3},
	} {
		t.Run(fmt.Sprintf("%+v", o), func(t *testing.T) {
			seed := modelSeed(t)
			rng := rand.New(rand.NewPCG(seed, 7))
			d := openMem(t, vfs.NewMem(), &o)
			defer d.Close()
			// Short keys, and keys that share their first 8 bytes and more,
			// which MultiGet's sort and walk tell apart by the whole key.
			longKey := func() []byte { return fmt.Appendf(nil, "long/shared/prefix/%03d", rng.IntN(100)) }
			key := func() []byte {
				switch rng.IntN(50) {
				case 0:
					return []byte{}
				case 1, 2, 3, 4, 5, 6, 7, 8, 9, 10:
					return longKey()
				case 11:
					return []byte{0}
				}
				return fmt.Appendf(nil, "k%03d", rng.IntN(300))
			}
			for step := range 3000 {
				switch r := rng.IntN(10); {
				case r < 6:
					d.Put(key(), fmt.Appendf(nil, "v%d", step))
				case r < 9:
					d.Delete(key())
				default:
					d.Flush()
				}
				if step%100 != 99 {
					continue
				}
				// A third of the batches share their first 19 bytes.
				keys, draw := make([][]byte, rng.IntN(70)), key
				if rng.IntN(3) == 0 {
					draw = longKey
				}
				for i := range keys {
					keys[i] = draw()
				}
				snap := d.NewSnapshot()
				values, errs := d.MultiGet(keys)
				for i, k := range keys {
					v, err := snap.Get(k)
					if string(v) != string(values[i]) || err != errs[i] {
						t.Fatalf("seed %d step %d: MultiGet(%q) = %q, %v; Get at the same point = %q, %v", seed, step, k, values[i], errs[i], v, err)
					}
				}
				// The same snapshot read again after more writes: its
				// MultiGet sees what its Get does, not the writes since.
				for i := range 20 {
					d.Put(key(), fmt.Appendf(nil, "later%d.%d", step, i))
				}
				values, errs = snap.MultiGet(keys)
				for i, k := range keys {
					v, err := snap.Get(k)
					if string(v) != string(values[i]) || err != errs[i] {
						t.Fatalf("seed %d step %d: Snapshot.MultiGet(%q) = %q, %v; its Get = %q, %v", seed, step, k, values[i], errs[i], v, err)
					}
				}
				snap.Close()
				if _, errs := snap.MultiGet(keys); len(keys) > 0 && !errors.Is(errs[0], ErrClosed) {
					t.Fatalf("seed %d step %d: MultiGet of a closed snapshot: %v", seed, step, errs[0])
				}
			}
		})
	}
}

// TestMultiGetSortsKeys: sortKeys puts a batch's keys in key order, equal
// keys in the batch's order, for batches whose keys tie on the bytes its
// sort word holds in runs short and long: a common field and one
// outlier (the whole batch one run, which insertion sorted in time
// quadratic in its length), duplicates, keys that are prefixes of
// others, and random keys over two letters.
func TestMultiGetSortsKeys(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	var batches [][][]byte
	tied := [][]byte{[]byte("b")}
	for i := range 500 {
		tied = append(tied, fmt.Appendf(nil, "aaaa%08d", rng.IntN(300)), fmt.Appendf(nil, "aaaa%d", i))
	}
	batches = append(batches, tied, [][]byte{{}, []byte("a"), {'a', 0}, []byte("a"), {}, []byte("ab")})
	for range 50 {
		keys := make([][]byte, 1+rng.IntN(100))
		for i := range keys {
			keys[i] = make([]byte, rng.IntN(12))
			for j := range keys[i] {
				keys[i][j] = 'a' + byte(rng.IntN(2))
			}
		}
		batches = append(batches, keys)
	}
	for _, keys := range batches {
		b := &multiGet{keys: keys}
		b.prepare()
		got := indexes(len(keys))
		b.sortKeys(got)
		want := indexes(len(keys))
		slices.SortStableFunc(want, func(x, y int) int { return bytes.Compare(keys[x], keys[y]) })
		if !slices.Equal(got, want) {
			t.Fatalf("sortKeys of %d keys:\n got  %v\n want %v", len(keys), got, want)
		}
	}
}

// BenchmarkMultiGetSortTiedKeys sorts a batch of keys alike in their
// first four bytes past the shared prefix, but for one: a single run of
// tied sort words (TestMultiGetSortsKeys).
func BenchmarkMultiGetSortTiedKeys(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		keys := [][]byte{[]byte("b")}
		for i := range n {
			keys = append(keys, fmt.Appendf(nil, "aaaa%08d", (i*7919)%n))
		}
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			g := &multiGet{keys: keys}
			idx := make([]int, len(keys))
			for b.Loop() {
				for i := range idx {
					idx[i] = i
				}
				g.prepare()
				g.sortKeys(idx)
			}
		})
	}
}

// indexes returns 0, 1, …, n−1.
func indexes(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}
