package sstable

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
)

// lifetimeEntries: 2000 keys with distinct 100-byte values, in blocks of
// about 512 bytes, so that a 4 KiB cache holds a handful and evicts (and
// recycles) constantly.
func lifetimeEntries() []entry {
	es := make([]entry, 2000)
	for i := range es {
		es[i] = entry{base.MakeInternalKey([]byte(fmt.Sprintf("k%06d", i)), base.SeqNum(i+1), base.KindSet),
			bytes.Repeat([]byte{byte(i), byte(i >> 8)}, 50)}
	}
	return es
}

// TestIterHoldsBlock checks internal/cache's invariant 5 from the reader's
// side: an iterator's Key and Value stay intact while other reads evict
// its block and recycle buffers of its size class, and EvictFile drops the
// table, until the iterator moves.
func TestIterHoldsBlock(t *testing.T) {
	es := lifetimeEntries()
	data, _ := buildTable(t, es, WriterOptions{BlockSize: 512})
	c := cache.New(4 << 10)
	r := openTable(t, data, c)
	defer r.Close()
	it := r.NewIter(nil, nil)
	defer it.Close()
	for ok, n := it.First(), 0; ok; ok, n = it.Next(), n+1 {
		if n%97 != 0 {
			continue
		}
		k, v := it.Key().UserKey, it.Value()
		for j := 0; j < 50; j++ { // other blocks through the cache
			uk := es[(n+37*j+500)%len(es)].key.UserKey
			if _, _, found, err := r.Get(uk, filter.Hash(uk), base.MaxSeqNum, &Lookup{}); err != nil || !found {
				t.Fatalf("Get(%s): found %v, %v", uk, found, err)
			}
		}
		c.EvictFile(7)
		if !bytes.Equal(k, es[n].key.UserKey) || !bytes.Equal(v, es[n].value) {
			t.Fatalf("entry %d changed under the iterator while its block was evicted", n)
		}
	}
	if err := it.Error(); err != nil {
		t.Fatal(err)
	}
}

// TestReleasedBlockPoisoned shows what the race build's check catches: a
// Value kept after the iterator closed (no cache: the iterator held the
// only reference) reads poison, not the entry — and not another block's
// bytes, silently.
func TestReleasedBlockPoisoned(t *testing.T) {
	if !raceEnabled {
		t.Skip("freed buffers are poisoned in race builds only")
	}
	es := lifetimeEntries()
	data, _ := buildTable(t, es, WriterOptions{BlockSize: 512})
	r := openTable(t, data, nil)
	defer r.Close()
	it := r.NewIter(nil, nil)
	if !it.First() {
		t.Fatal(it.Error())
	}
	v := it.Value()
	it.Close()
	if bytes.Equal(v, es[0].value) {
		t.Fatal("a value kept past Close still reads as the entry: the block was not freed, or not poisoned")
	}
}

// TestConcurrentReads runs Gets and short scans of one Reader from several
// goroutines through a cache too small for the table, under -race: blocks
// are cached, evicted while other goroutines read them, and recycled
// (poisoned first in race builds), and every answer must match the model.
func TestConcurrentReads(t *testing.T) {
	es := lifetimeEntries()
	for _, compress := range []bool{false, true} {
		data, _ := buildTable(t, es, WriterOptions{BlockSize: 512, Compression: compress})
		for _, c := range []*Cache{nil, cache.New(4 << 10)} {
			r := openTable(t, data, c)
			var wg sync.WaitGroup
			for g := 0; g < 4; g++ {
				wg.Add(1)
				go func(g int) {
					defer wg.Done()
					rng := newRand(uint64(g))
					for i := 0; i < 200; i++ {
						e := es[rng.IntN(len(es))]
						uk := e.key.UserKey
						v, _, found, err := r.Get(uk, filter.Hash(uk), base.MaxSeqNum, &Lookup{})
						if err != nil || !found || !bytes.Equal(v, e.value) {
							t.Errorf("Get(%s) = %q, %v, %v", uk, v, found, err)
							return
						}
						it := r.NewIter(nil, nil)
						j := rng.IntN(len(es) - 50)
						n := 0
						for ok := it.SeekGE(es[j].key); ok && n < 50; ok = it.Next() {
							if base.Compare(it.Key(), es[j+n].key) != 0 || !bytes.Equal(it.Value(), es[j+n].value) {
								t.Errorf("scan from %d: entry %d wrong", j, n)
								it.Close()
								return
							}
							n++
						}
						if err := it.Close(); err != nil {
							t.Error(err)
						}
					}
				}(g)
			}
			wg.Wait()
			r.Close()
		}
	}
}
