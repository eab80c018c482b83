package cache

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

// fill returns a handle on a fresh block of n bytes from rng.
func fill(rng *rand.Rand, n int) Handle {
	h := Alloc(n)
	b := h.Block()
	for j := range b {
		b[j] = byte(rng.Uint32())
	}
	return h
}

// held is a handle the model test keeps, and the bytes its block must
// keep until released (invariant 5).
type held struct {
	h    Handle
	want []byte
}

// refModel counts the references the test itself holds on each buffer
// generation it has seen; with the buffer's cached flag it predicts the
// buffer's reference count exactly.
type refModel map[Handle]int // key: the value and its generation

// check compares every buffer the test has seen with the model: a live one
// has exactly held + (1 if cached) references, and is freed as soon as that
// is zero; a freed one was held by no one. It returns the number of cached
// buffers, which must be every entry of the cache.
func (m refModel) check(t *testing.T, where string) int64 {
	t.Helper()
	cached := int64(0)
	for vg, n := range m {
		v := vg.v
		if v.gen.Load() != vg.gen {
			if n != 0 {
				t.Fatalf("%s: a buffer was freed while the test held %d references", where, n)
			}
			delete(m, vg)
			continue
		}
		want := int32(n)
		if v.cached.Load() {
			want++
			cached++
		}
		if got := v.refs.Load(); got != want || want == 0 {
			t.Fatalf("%s: a buffer has %d references, the model %d (0: should be free)", where, got, want)
		}
	}
	return cached
}

// TestModel runs random Set/Get/Release/EvictFile operations against a
// model: a map of what was last Set, the handles held with the bytes each
// was read with, and the references held on each buffer. Every hit must
// return exactly the block last Set (invariant 3); every held block must
// be unchanged when released, however much was evicted and reallocated
// meanwhile (invariants 2 and 5, checked against reuse by the poison of
// race builds); every buffer's reference count is what the model predicts,
// and a buffer is freed exactly when that reaches zero; the charged bytes
// never exceed the capacity (invariant 1); after EvictFile no block of the
// file is returned.
func TestModel(t *testing.T) {
	for _, capacity := range []int64{0, 1000, 64 << 10, 1 << 20} {
		seed := rand.Uint64()
		t.Run(fmt.Sprint(capacity), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, uint64(capacity)))
			c := New(capacity)
			model := map[key][]byte{}
			refs := refModel{}
			var holding []held
			hits := 0
			keep := func(h Handle, want []byte) {
				refs[Handle{v: h.v, gen: h.gen}]++
				holding = append(holding, held{h, want})
			}
			for i := 0; i < 10000; i++ {
				where := fmt.Sprintf("seed %d op %d", seed, i)
				k := key{uint64(rng.IntN(4)), uint64(rng.IntN(64))}
				switch op := rng.IntN(20); {
				case op < 8: // Set, keeping the handle sometimes
					h := fill(rng, rng.IntN(3000))
					refs[Handle{v: h.v, gen: h.gen}] = 0 // a new buffer generation, tracked until freed
					c.Set(k.fileNum, k.offset, &h, Priority(rng.IntN(2)))
					model[k] = bytes.Clone(h.Block())
					if rng.IntN(2) == 0 {
						keep(h, model[k])
					} else {
						h.Release()
					}
				case op < 16: // Get, keeping the handle sometimes
					h, ok := c.Get(k.fileNum, k.offset)
					if !ok {
						break
					}
					hits++
					if want, in := model[k]; !in || !bytes.Equal(h.Block(), want) {
						t.Fatalf("%s: Get%v returned a block never Set or stale", where, k)
					}
					if rng.IntN(2) == 0 {
						keep(h, model[k])
					} else {
						h.Release()
					}
				case op < 19: // release a held handle
					if len(holding) == 0 {
						break
					}
					j := rng.IntN(len(holding))
					hd := holding[j]
					if !bytes.Equal(hd.h.Block(), hd.want) {
						t.Fatalf("%s: a held block changed before its release", where)
					}
					refs[Handle{v: hd.h.v, gen: hd.h.gen}]--
					hd.h.Release()
					holding[j] = holding[len(holding)-1]
					holding = holding[:len(holding)-1]
				default:
					c.EvictFile(k.fileNum)
					for mk := range model {
						if mk.fileNum == k.fileNum {
							delete(model, mk)
						}
					}
				}
				cached := refs.check(t, where)
				st := c.Stats()
				if st.Entries != cached {
					t.Fatalf("%s: %d entries cached, the model knows %d cached buffers", where, st.Entries, cached)
				}
				if st.Bytes > capacity {
					t.Fatalf("%s: %d bytes cached, capacity %d", where, st.Bytes, capacity)
				}
				if st.Entries > int64(len(model)) {
					t.Fatalf("%s: %d entries cached, only %d live keys", where, st.Entries, len(model))
				}
			}
			for _, hd := range holding {
				if !bytes.Equal(hd.h.Block(), hd.want) {
					t.Fatalf("seed %d: a held block changed before its release", seed)
				}
				refs[Handle{v: hd.h.v, gen: hd.h.gen}]--
				hd.h.Release()
			}
			refs.check(t, fmt.Sprintf("seed %d at the end", seed))
			if capacity >= 1<<20 && hits == 0 {
				t.Fatalf("seed %d: no hits at all with a 1 MiB cache", seed)
			}
		})
	}
}

// TestClockSecondChance checks that a block read since the last sweep
// survives eviction of a colder one.
func TestClockSecondChance(t *testing.T) {
	blk := Alloc(100)
	charge := int64(cap(blk.Block())) + EntryOverhead
	blk.Release()
	c := New(int64(len(New(1).shards)) * 3 * charge) // three 100-byte blocks per shard
	// Find four keys of one shard.
	var ks []key
	for off := uint64(0); len(ks) < 4; off++ {
		k := key{1, off}
		if c.shard(k) == c.shard(key{1, 0}) {
			ks = append(ks, k)
		}
	}
	set := func(k key) {
		h := Alloc(100)
		c.Set(k.fileNum, k.offset, &h, Low)
		h.Release()
	}
	has := func(k key) bool {
		h, ok := c.Get(k.fileNum, k.offset)
		h.Release()
		return ok
	}
	for _, k := range ks[:3] {
		set(k)
	}
	has(ks[0]) // hot
	set(ks[3])
	if !has(ks[0]) {
		t.Fatal("referenced block was evicted before unreferenced ones")
	}
	if has(ks[1]) {
		t.Fatal("the coldest block survived")
	}
}

func TestNilAndZero(t *testing.T) {
	var nilCache *Cache
	h := Alloc(1)
	nilCache.Set(1, 1, &h, Low)
	if _, ok := nilCache.Get(1, 1); ok {
		t.Fatal("nil cache hit")
	}
	nilCache.EvictFile(1)
	c := New(0)
	c.Set(1, 1, &h, Low)
	if _, ok := c.Get(1, 1); ok || c.Stats().Entries != 0 {
		t.Fatal("zero-capacity cache cached")
	}
	h.Release() // the only reference: neither cache took one
	big := New(16 * 1024)
	h = Alloc(1 << 20) // larger than a shard: not cached
	big.Set(1, 1, &h, Low)
	h.Release()
	if st := big.Stats(); st.Entries != 0 || st.Bytes != 0 {
		t.Fatalf("oversized block cached: %+v", st)
	}
}

// TestEvictedWhileHeld checks invariant 5 directly: a block evicted (by
// EvictFile, by replacement, by the clock) while a handle holds it keeps
// its bytes while its buffer's class is allocated over and over.
func TestEvictedWhileHeld(t *testing.T) {
	c := New(64 << 10)
	rng := rand.New(rand.NewPCG(1, 1))
	h := fill(rng, 1000)
	want := bytes.Clone(h.Block())
	c.Set(7, 0, &h, Low)
	h.Release()
	got, ok := c.Get(7, 0)
	if !ok {
		t.Fatal("miss")
	}
	c.EvictFile(7)
	for i := 0; i < 1000; i++ { // replacement and clock evictions of the same class
		n := fill(rng, 1000)
		c.Set(8, uint64(i%200), &n, Low)
		n.Release()
	}
	if !bytes.Equal(got.Block(), want) {
		t.Fatal("an evicted block changed while held")
	}
	got.Release()
}

// TestMisuse checks invariant 6: each misuse panics instead of freeing a
// block another reader holds.
func TestMisuse(t *testing.T) {
	mustPanic := func(name string, f func()) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s did not panic", name)
			}
		}()
		f()
	}
	h := Alloc(10)
	h.Release()
	h.Release() // the same variable: cleared by the first Release, harmless

	mustPanic("releasing a copy after the original", func() {
		h := Alloc(10)
		cp := h
		h.Release()
		cp.Release()
	})
	mustPanic("Block after release", func() {
		h := Alloc(10)
		cp := h
		h.Release()
		cp.Block()
	})
	mustPanic("over-release of a cached block", func() {
		c := New(1 << 20)
		h := Alloc(10)
		c.Set(1, 1, &h, Low)
		cp := h
		h.Release()
		// The reference left is the cache's: freeing it would hand the
		// buffer to the next Alloc while cached.
		cp.Release()
	})
	mustPanic("Set twice", func() {
		c := New(1 << 20)
		h := Alloc(10)
		c.Set(1, 1, &h, Low)
		c.Set(1, 2, &h, Low)
	})
	if invariants {
		h := Alloc(10)
		b := h.Block()
		copy(b, "0123456789")
		h.Release()
		if !bytes.Equal(b, bytes.Repeat([]byte{poison}, 10)) {
			t.Errorf("a freed buffer reads %q, not poison", b)
		}
	}
}

// TestSizeClass checks that each size gets the smallest class that holds
// it, and that classes waste at most 1/16 above 64 bytes.
func TestSizeClass(t *testing.T) {
	for n := 0; n < 1<<20; n += 1 + n/64 {
		c := sizeClass(n)
		if c < 0 || classSize(c) < n || c > 0 && classSize(c-1) >= n {
			t.Fatalf("sizeClass(%d) = %d of %d bytes", n, c, classSize(c))
		}
		if n > 64 && classSize(c)-n > classSize(c)>>stepBits {
			t.Fatalf("sizeClass(%d) wastes %d of %d bytes", n, classSize(c)-n, classSize(c))
		}
	}
	if c := sizeClass(1 << maxClassBits); c != numClasses-1 || classSize(c) != 1<<maxClassBits {
		t.Fatalf("largest class %d holds %d", c, classSize(c))
	}
	if sizeClass(1<<maxClassBits+1) != -1 {
		t.Fatal("a buffer above the largest class was given one")
	}
	h := Alloc(1<<maxClassBits + 1)
	if len(h.Block()) != 1<<maxClassBits+1 {
		t.Fatal("unpooled buffer of the wrong size")
	}
	h.Release()
}

// TestSteadyStateAllocs checks that misses that evict allocate nothing once
// the slabs and the buffer classes are warm.
func TestSteadyStateAllocs(t *testing.T) {
	c := New(1 << 20)
	off := uint64(0)
	step := func() {
		h := Alloc(4000)
		c.Set(1, off, &h, Low)
		h.Release()
		off++
		if g, ok := c.Get(1, off-1); ok {
			g.Release()
		}
	}
	for i := 0; i < 10000; i++ {
		step()
	}
	if got := testing.AllocsPerRun(1000, step); got > 0.01 {
		t.Fatalf("%.3f allocations per Set+evict+Get, want 0", got)
	}
}

// TestConcurrent hammers one cache from several goroutines under -race:
// Gets whose handles are held across other goroutines' Sets, evictions and
// EvictFiles, then checked and released. Every hit must return the
// (immutable) block Set for its key, unchanged until its release.
func TestConcurrent(t *testing.T) {
	c := New(256 << 10)
	blockFor := func(k key, b []byte) {
		for i := range b {
			b[i] = byte(k.fileNum*31 + k.offset + uint64(i))
		}
	}
	sizeFor := func(k key) int { return 512 + int(k.offset%512) }
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 0))
			type hk struct {
				h Handle
				k key
			}
			var holding []hk
			want := make([]byte, 1024)
			verify := func(x hk) bool {
				blockFor(x.k, want[:sizeFor(x.k)])
				if !bytes.Equal(x.h.Block(), want[:sizeFor(x.k)]) {
					t.Errorf("wrong or changed block for %v", x.k)
					return false
				}
				return true
			}
			defer func() {
				for _, x := range holding {
					x.h.Release()
				}
			}()
			for i := 0; i < 5000; i++ {
				k := key{uint64(rng.IntN(8)), uint64(rng.IntN(256))}
				switch rng.IntN(20) {
				case 0:
					c.EvictFile(k.fileNum)
				case 1, 2, 3, 4, 5:
					h := Alloc(sizeFor(k))
					blockFor(k, h.Block())
					c.Set(k.fileNum, k.offset, &h, Priority(rng.IntN(2)))
					h.Release()
				case 6, 7, 8:
					if len(holding) > 0 {
						j := rng.IntN(len(holding))
						if !verify(holding[j]) {
							return
						}
						holding[j].h.Release()
						holding[j] = holding[len(holding)-1]
						holding = holding[:len(holding)-1]
					}
				default:
					h, ok := c.Get(k.fileNum, k.offset)
					if !ok {
						continue
					}
					if !verify(hk{h, k}) {
						return
					}
					if len(holding) < 16 {
						holding = append(holding, hk{h, k})
					} else {
						h.Release()
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

// TestHighOutlastsAStreamOfLow is invariant 7: index and filter pages
// within the High pool stay cached while far more data blocks than the
// cache holds pass through it once each, and are hit meanwhile only by
// chance of the clock (here never), so no second chance protects them.
func TestHighOutlastsAStreamOfLow(t *testing.T) {
	const capacity = 1 << 20
	c := New(capacity)
	set := func(fileNum, off uint64, p Priority) {
		h := Alloc(4000)
		c.Set(fileNum, off, &h, p)
		h.Release()
	}
	// Up to 40% of each shard, so every shard's High blocks are within its
	// half whatever the hash does with the offsets.
	perShard := map[*shard]int{}
	var high []uint64
	for off := uint64(0); len(high) < 2*len(c.shards); off += 4096 {
		sh := c.shard(key{1, off})
		if (perShard[sh]+1)*(4096+EntryOverhead) > int(sh.capacity)*40/100 {
			continue
		}
		perShard[sh]++
		set(1, off, High)
		high = append(high, off)
	}
	for i := range uint64(10 * capacity / 4096) {
		set(2, i*4096, Low)
	}
	for _, off := range high {
		h, ok := c.Get(1, off)
		if !ok {
			t.Fatalf("High block at %d evicted by a stream of Low blocks", off)
		}
		h.Release()
	}
}

// TestHighPastItsPool checks the other half of invariant 7: High blocks
// beyond their pool are evicted as any other, so a cache that only ever
// sees High blocks stays within capacity and keeps the newest.
func TestHighPastItsPool(t *testing.T) {
	const capacity = 256 << 10
	c := New(capacity)
	const n = 4 * capacity / 4096
	for i := range uint64(n) {
		h := Alloc(4000)
		c.Set(1, i*4096, &h, High)
		h.Release()
		if st := c.Stats(); st.Bytes > capacity {
			t.Fatalf("after %d High blocks: %d bytes cached, capacity %d", i+1, st.Bytes, capacity)
		}
	}
	h, ok := c.Get(1, (n-1)*4096)
	if !ok {
		t.Fatal("the newest High block was not cached")
	}
	h.Release()

	// A shard holding one High block, within its pool, must still make
	// room for a block that needs more than the other half.
	small := New(1 << 20)
	sh := &small.shards[0]
	var offs []uint64
	for off := uint64(0); len(offs) < 2; off += 4096 {
		if small.shard(key{1, off}) == sh {
			offs = append(offs, off)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i, size := range []int64{sh.capacity * 40 / 100, sh.capacity * 70 / 100} {
			h := Alloc(int(size) - 2*EntryOverhead)
			small.Set(1, offs[i], &h, High)
			h.Release()
		}
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("Set of a block over half the shard, beside one High block, never returned")
	}
	if h, ok := small.Get(1, offs[1]); !ok {
		t.Fatal("the large block was not cached")
	} else {
		h.Release()
	}
}

func BenchmarkGetHit(b *testing.B) {
	c := New(64 << 20)
	for i := uint64(0); i < 1024; i++ {
		h := Alloc(4096)
		c.Set(1, i*4096, &h, Low)
		h.Release()
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		i := uint64(0)
		for pb.Next() {
			h, ok := c.Get(1, (i%1024)*4096)
			if !ok {
				b.Error("miss")
				return
			}
			h.Release()
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

// BenchmarkSetEvict is the steady state of a cache miss: a free buffer of
// its class, filled, cached, evicting a block whose buffer goes back.
func BenchmarkSetEvict(b *testing.B) {
	c := New(4 << 20)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h := Alloc(4096)
		c.Set(1, uint64(i)*4096, &h, Low)
		h.Release()
	}
}
