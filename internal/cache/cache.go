package cache

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// EntryOverhead is the bytes charged per cached block on top of its length:
// an estimate of the entry struct plus its map slot, so a cache of many tiny
// blocks cannot grow far beyond its capacity in real memory.
const EntryOverhead = 96

// Cache is a sharded, byte-bounded CLOCK cache of immutable blocks.
type Cache struct {
	shards    []shard
	shardMask uint64
	capacity  int64
}

// Stats is a snapshot of the cache's counters.
type Stats struct {
	Hits, Misses uint64
	// Bytes is the charged size of the cached blocks (with EntryOverhead).
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

// Get returns the block cached for (fileNum, offset). The block must not be
// modified (invariant 2).
func (c *Cache) Get(fileNum, offset uint64) ([]byte, bool) {
	if c == nil || c.capacity == 0 {
		return nil, false
	}
	return c.shard(key{fileNum, offset}).get(key{fileNum, offset})
}

// Set caches block under (fileNum, offset), replacing any previous block.
// The caller gives up the right to modify block (invariant 2). A block
// larger than a shard's share of the capacity is not cached.
func (c *Cache) Set(fileNum, offset uint64, block []byte) {
	if c == nil || c.capacity == 0 {
		return
	}
	c.shard(key{fileNum, offset}).set(key{fileNum, offset}, block)
}

// EvictFile drops every block of fileNum. Called when a table is deleted;
// readers already holding one of its blocks keep it valid (invariant 2).
func (c *Cache) EvictFile(fileNum uint64) {
	if c == nil || c.capacity == 0 {
		return
	}
	for i := range c.shards {
		c.shards[i].evictFile(fileNum)
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
		s.Entries += int64(len(sh.entries))
		sh.mu.RUnlock()
	}
	return s
}

// entry is one cached block, linked into its shard's clock ring and into
// its file's list (for EvictFile).
type entry struct {
	key                key
	block              []byte
	referenced         atomic.Bool
	next, prev         *entry // clock ring
	fileNext, filePrev *entry // per-file list, nil-terminated
}

func (e *entry) charge() int64 { return int64(len(e.block)) + EntryOverhead }

type shard struct {
	mu       sync.RWMutex
	entries  map[key]*entry
	files    map[uint64]*entry // head of each file's list
	hand     *entry            // next entry the clock looks at; nil when empty
	used     int64
	capacity int64
	hits     atomic.Uint64
	misses   atomic.Uint64
	_        [40]byte // keep neighbouring shards' hot fields off one cache line
}

func (s *shard) init(capacity int64) {
	s.entries = make(map[key]*entry)
	s.files = make(map[uint64]*entry)
	s.capacity = capacity
}

func (s *shard) get(k key) ([]byte, bool) {
	s.mu.RLock()
	e := s.entries[k]
	var b []byte
	if e != nil {
		b = e.block
		if !e.referenced.Load() {
			e.referenced.Store(true)
		}
	}
	s.mu.RUnlock()
	if e == nil {
		s.misses.Add(1)
		return nil, false
	}
	s.hits.Add(1)
	return b, true
}

func (s *shard) set(k key, block []byte) {
	charge := int64(len(block)) + EntryOverhead
	if charge > s.capacity {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.entries[k]; old != nil {
		s.remove(old)
	}
	for s.used+charge > s.capacity {
		s.evictOne()
	}
	e := &entry{key: k, block: block}
	s.entries[k] = e
	s.used += charge
	// Insert just behind the hand: a new block is the last the clock
	// reaches, like the head of an LRU list.
	if s.hand == nil {
		e.next, e.prev = e, e
		s.hand = e
	} else {
		e.next, e.prev = s.hand, s.hand.prev
		e.prev.next, s.hand.prev = e, e
	}
	if head := s.files[k.fileNum]; head != nil {
		e.fileNext, head.filePrev = head, e
	}
	s.files[k.fileNum] = e
}

// evictOne advances the hand, giving referenced entries a second chance.
// It terminates: each pass clears the bits it passes, so the second lap at
// the latest finds an unreferenced entry. Requires s.hand != nil.
func (s *shard) evictOne() {
	for {
		e := s.hand
		if e.referenced.Load() {
			e.referenced.Store(false)
			s.hand = e.next
			continue
		}
		s.remove(e)
		return
	}
}

// remove unlinks e from the map, the ring and its file's list.
func (s *shard) remove(e *entry) {
	delete(s.entries, e.key)
	s.used -= e.charge()
	if e.next == e {
		s.hand = nil
	} else {
		e.prev.next, e.next.prev = e.next, e.prev
		if s.hand == e {
			s.hand = e.next
		}
	}
	e.next, e.prev = nil, nil
	if e.filePrev != nil {
		e.filePrev.fileNext = e.fileNext
	} else if e.fileNext != nil {
		s.files[e.key.fileNum] = e.fileNext
	} else {
		delete(s.files, e.key.fileNum)
	}
	if e.fileNext != nil {
		e.fileNext.filePrev = e.filePrev
	}
	e.fileNext, e.filePrev = nil, nil
}

func (s *shard) evictFile(fileNum uint64) {
	s.mu.Lock()
	for e := s.files[fileNum]; e != nil; e = s.files[fileNum] {
		s.remove(e)
	}
	s.mu.Unlock()
}
