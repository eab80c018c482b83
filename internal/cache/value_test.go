package cache

import "testing"

// TestValue: a NewValue is cached like a block, charged what its owner
// says, returned by Get, and freed exactly once, by the last reference,
// whether the cache's (eviction, Delete) or a reader's goes last.
func TestValue(t *testing.T) {
	c := New(16 * 4096) // 4 KiB per shard
	frees := map[string]int{}
	newValue := func(name string, charge int) Handle {
		return NewValue(name, charge, func() { frees[name]++ })
	}

	h := newValue("a", 1000)
	c.Set(1, 2, &h, Low)
	h.Release()
	if frees["a"] != 0 {
		t.Fatal("a cached value was freed when its creator released it")
	}
	if got := c.Stats().Bytes; got != 1000+EntryOverhead {
		t.Fatalf("charged %d bytes for a value of 1000", got)
	}
	g, ok := c.Get(1, 2)
	if !ok || g.Value() != "a" {
		t.Fatalf("Get: %v, %v", ok, g.v)
	}
	c.Delete(1, 2)
	if _, ok := c.Get(1, 2); ok || frees["a"] != 0 {
		t.Fatalf("after Delete: cached %v, freed %d times while a reader holds it", ok, frees["a"])
	}
	g.Release()
	if frees["a"] != 1 {
		t.Fatalf("the last release freed the value %d times, want 1", frees["a"])
	}

	// Values evict one another, each freed once, and one charged over
	// the shard's share is not cached at all.
	for i := range 64 {
		h := newValue(string(rune('A'+i%26))+string(rune('a'+i/26)), 3000)
		c.Set(uint64(i), 0, &h, Low)
		h.Release()
	}
	big := newValue("big", 8000)
	c.Set(99, 0, &big, Low)
	big.Release()
	if frees["big"] != 1 {
		t.Fatalf("a value larger than a shard was freed %d times, want 1 (not cached)", frees["big"])
	}
	for name, n := range frees {
		if n > 1 {
			t.Fatalf("value %s freed %d times", name, n)
		}
	}
	if got := c.Stats(); got.Bytes > c.Capacity() {
		t.Fatalf("values charged %d bytes, over the capacity %d", got.Bytes, c.Capacity())
	}
	mustPanic(t, "Value after the last release", func() {
		h := newValue("x", 1)
		stale := h
		h.Release()
		stale.Value()
	})
}

func mustPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s did not panic", what)
		}
	}()
	f()
}
