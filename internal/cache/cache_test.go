package cache

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// TestModel runs random Set/Get/EvictFile operations against a map of what
// was last Set: every hit must return exactly that block (invariant 3), the
// charged bytes never exceed the capacity (invariant 1), and after
// EvictFile no block of the file is returned.
func TestModel(t *testing.T) {
	for _, capacity := range []int64{0, 1000, 64 << 10, 1 << 20} {
		seed := rand.Uint64()
		t.Run(fmt.Sprint(capacity), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, uint64(capacity)))
			c := New(capacity)
			model := map[key][]byte{}
			hits := 0
			for i := 0; i < 10000; i++ {
				k := key{uint64(rng.IntN(4)), uint64(rng.IntN(64))}
				switch op := rng.IntN(10); {
				case op < 5:
					b := make([]byte, rng.IntN(3000))
					for j := range b {
						b[j] = byte(rng.Uint32())
					}
					c.Set(k.fileNum, k.offset, b)
					model[k] = b
				case op < 9:
					got, ok := c.Get(k.fileNum, k.offset)
					if ok {
						hits++
						if want, in := model[k]; !in || !bytes.Equal(got, want) {
							t.Fatalf("seed %d op %d: Get%v returned a block never Set or stale", seed, i, k)
						}
					}
				default:
					c.EvictFile(k.fileNum)
					for mk := range model {
						if mk.fileNum == k.fileNum {
							delete(model, mk)
						}
					}
				}
				st := c.Stats()
				if st.Bytes > capacity {
					t.Fatalf("seed %d op %d: %d bytes cached, capacity %d", seed, i, st.Bytes, capacity)
				}
				if st.Entries > int64(len(model)) {
					t.Fatalf("seed %d op %d: %d entries cached, only %d live keys", seed, i, st.Entries, len(model))
				}
			}
			if capacity >= 1<<20 && hits == 0 {
				t.Fatalf("seed %d: no hits at all with a 1 MiB cache", seed)
			}
		})
	}
}

// TestClockSecondChance checks that a block read since the last sweep
// survives eviction of a colder one.
func TestClockSecondChance(t *testing.T) {
	c := New(int64(len(New(1).shards)) * (3*100 + 3*EntryOverhead)) // three 100-byte blocks per shard
	// Find three keys of one shard.
	var ks []key
	for off := uint64(0); len(ks) < 4; off++ {
		k := key{1, off}
		if c.shard(k) == c.shard(key{1, 0}) {
			ks = append(ks, k)
		}
	}
	blk := make([]byte, 100)
	for _, k := range ks[:3] {
		c.Set(k.fileNum, k.offset, blk)
	}
	c.Get(ks[0].fileNum, ks[0].offset) // hot
	c.Set(ks[3].fileNum, ks[3].offset, blk)
	if _, ok := c.Get(ks[0].fileNum, ks[0].offset); !ok {
		t.Fatal("referenced block was evicted before unreferenced ones")
	}
	if _, ok := c.Get(ks[1].fileNum, ks[1].offset); ok {
		t.Fatal("the coldest block survived")
	}
}

func TestNilAndZero(t *testing.T) {
	var nilCache *Cache
	nilCache.Set(1, 1, []byte("x"))
	if _, ok := nilCache.Get(1, 1); ok {
		t.Fatal("nil cache hit")
	}
	nilCache.EvictFile(1)
	c := New(0)
	c.Set(1, 1, []byte("x"))
	if _, ok := c.Get(1, 1); ok || c.Stats().Entries != 0 {
		t.Fatal("zero-capacity cache cached")
	}
	big := New(16 * 1024)
	big.Set(1, 1, make([]byte, 1<<20)) // larger than a shard: not cached
	if st := big.Stats(); st.Entries != 0 || st.Bytes != 0 {
		t.Fatalf("oversized block cached: %+v", st)
	}
}

// TestConcurrent hammers one cache from several goroutines under -race;
// every hit must still return the (immutable) block Set for its key.
func TestConcurrent(t *testing.T) {
	c := New(256 << 10)
	blockFor := func(k key) []byte {
		b := make([]byte, 512+int(k.offset%512))
		for i := range b {
			b[i] = byte(k.fileNum*31 + k.offset + uint64(i))
		}
		return b
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 0))
			for i := 0; i < 5000; i++ {
				k := key{uint64(rng.IntN(8)), uint64(rng.IntN(256))}
				switch rng.IntN(20) {
				case 0:
					c.EvictFile(k.fileNum)
				case 1, 2, 3, 4, 5:
					c.Set(k.fileNum, k.offset, blockFor(k))
				default:
					if b, ok := c.Get(k.fileNum, k.offset); ok && !bytes.Equal(b, blockFor(k)) {
						t.Errorf("wrong block for %v", k)
						return
					}
				}
			}
		}(g)
	}
	wg.Wait()
	if st := c.Stats(); st.Bytes > 256<<10 {
		t.Fatalf("over capacity: %+v", st)
	}
}

func BenchmarkGetHit(b *testing.B) {
	c := New(64 << 20)
	for i := uint64(0); i < 1024; i++ {
		c.Set(1, i*4096, make([]byte, 4096))
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := uint64(0)
		for pb.Next() {
			if _, ok := c.Get(1, (i%1024)*4096); !ok {
				b.Error("miss")
				return
			}
			i++
		}
	})
}

func BenchmarkGetMiss(b *testing.B) {
	c := New(64 << 20)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := uint64(0)
		for pb.Next() {
			c.Get(2, i*4096)
			i++
		}
	})
}

func BenchmarkSetEvict(b *testing.B) {
	c := New(4 << 20)
	blk := make([]byte, 4096)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		c.Set(1, uint64(i)*4096, blk)
	}
}
