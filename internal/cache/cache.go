package cache

import (
	"runtime"
)

// EntryOverhead is the bytes charged per cached block on top of its
// buffer's capacity: the shard's entry, its index slot and the value
// header, so a cache of many tiny blocks cannot grow far beyond its
// capacity in real memory.
const EntryOverhead = 128

// Cache is a sharded, byte-bounded CLOCK cache of immutable,
// reference-counted blocks.
type Cache struct {
	shards    []shard
	shardMask uint64
	capacity  int64
}

// Stats is a snapshot of the cache's counters.
type Stats struct {
	Hits, Misses uint64
	// Bytes is the charged size of the cached blocks (buffer capacity plus
	// EntryOverhead each).
	Bytes   int64
	Entries int64
}

// New returns a cache holding at most capacity bytes (invariant 1).
// capacity <= 0 disables caching (invariant 4).
func New(capacity int64) *Cache {
	n := 16
	for n < 4*runtime.GOMAXPROCS(0) {
		n *= 2
	}
	if capacity < 0 {
		capacity = 0
	}
	c := &Cache{shards: make([]shard, n), shardMask: uint64(n - 1), capacity: capacity}
	for i := range c.shards {
		c.shards[i].init(capacity / int64(n))
	}
	return c
}

// Capacity returns the byte bound given to New.
func (c *Cache) Capacity() int64 {
	if c == nil {
		return 0
	}
	return c.capacity
}

type key struct{ fileNum, offset uint64 }

func (c *Cache) shard(k key) *shard {
	// A multiplicative mix (the 64-bit golden ratio) of both halves, so that
	// consecutive offsets of one file spread over all shards.
	h := (k.fileNum*0x9e3779b97f4a7c15 ^ k.offset) * 0xbf58476d1ce4e5b9
	return &c.shards[(h>>32)&c.shardMask]
}

// Get returns a handle on the block cached for (fileNum, offset), which the
// caller must Release. The block must not be modified (invariant 2).
func (c *Cache) Get(fileNum, offset uint64) (Handle, bool) {
	if c == nil || c.capacity == 0 {
		return Handle{}, false
	}
	return c.shard(key{fileNum, offset}).get(key{fileNum, offset})
}

// Priority is how hard the cache holds on to a block (invariant 7).
type Priority uint8

const (
	// Low is for blocks most reads touch once: data blocks.
	Low Priority = iota
	// High is for blocks many reads go through: a table's index
	// partitions and filter pages, and the meta of closed tables.
	High
)

// highPoolPercent is the share of each shard the High entries keep against
// Low ones (RocksDB's high_pri_pool_ratio defaults to the same half). A
// random read over a tree many times the cache's size brings in a data
// block it will not read again and an index or filter page the next reads
// need; with one CLOCK for both, each data block evicts a page the next
// reads needed, whatever second chance the page is given.
const highPoolPercent = 50

// Set caches h's block under (fileNum, offset) at priority p, replacing
// any previous block. The cache takes a reference of its own: the caller
// still holds h and releases it as before, but gives up the right to modify
// the block (invariant 2). A block is Set at most once. A block whose
// charge exceeds a shard's share of the capacity is not cached.
func (c *Cache) Set(fileNum, offset uint64, h *Handle, p Priority) {
	if c == nil || c.capacity == 0 {
		return
	}
	c.shard(key{fileNum, offset}).set(key{fileNum, offset}, h.v, p)
}

// Delete drops the block or value cached for (fileNum, offset), if any;
// holders of handles on it keep it until they release (invariant 5).
func (c *Cache) Delete(fileNum, offset uint64) {
	if c == nil || c.capacity == 0 {
		return
	}
	c.shard(key{fileNum, offset}).delete(key{fileNum, offset})
}

// EvictFile drops every block of fileNum. Called when a table is deleted;
// readers holding a handle on one of its blocks keep it valid until they
// release it (invariant 5).
func (c *Cache) EvictFile(fileNum uint64) {
	if c == nil || c.capacity == 0 {
		return
	}
	for i := range c.shards {
		c.shards[i].evictFile(fileNum)
	}
}

// Close drops every cached block and value, and makes the cache cache
// nothing more: their memory, outside the heap, goes back now rather than
// when the collector finds the Cache (a safety net that counts each as a
// leak). Holders of handles keep their blocks until they release them
// (invariant 5). Close is for the Cache's owner, once its readers are
// done with it.
func (c *Cache) Close() {
	if c == nil {
		return
	}
	for i := range c.shards {
		c.shards[i].close()
	}
}

// Stats sums the shards' counters. Each shard is read under its lock, so
// the totals are consistent per shard, not across shards.
func (c *Cache) Stats() Stats {
	var s Stats
	if c == nil {
		return s
	}
	for i := range c.shards {
		sh := &c.shards[i]
		s.Hits += sh.hits.Load()
		s.Misses += sh.misses.Load()
		sh.mu.RLock()
		s.Bytes += sh.used
		s.Entries += int64(len(sh.index))
		sh.mu.RUnlock()
	}
	return s
}
