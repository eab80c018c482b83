package cache

import (
	"sync"
	"sync/atomic"
)

// none ends a list of slot indexes.
const none = -1

// entry is one cached block, in a slot of its shard's slab. It is linked by
// slot index into the shard's clock ring and into its file's list (for
// EvictFile); a free slot is linked into the free list through next.
type entry struct {
	key                key
	v                  *value
	referenced         atomic.Bool
	high               bool  // Set with High priority
	next, prev         int32 // clock ring, or the free list
	fileNext, filePrev int32 // per-file list, none-terminated
}

func (e *entry) charge() int64 { return e.v.chargeBytes() }

// chargeBytes is what caching v costs against the capacity.
func (v *value) chargeBytes() int64 {
	if v.free != nil {
		return v.charge + EntryOverhead
	}
	return int64(cap(v.buf)) + EntryOverhead
}

// shard is one lock's worth of the cache. Its entries live in the slab
// slots, reused through a free list, so inserting a block allocates nothing
// once the slab and the index have grown to the shard's working size.
type shard struct {
	mu       sync.RWMutex
	index    map[key]int32    // slot of each cached block
	files    map[uint64]int32 // head of each file's list
	slots    []entry
	free     int32 // first free slot, or none
	hand     int32 // next slot the clock looks at; none when empty
	used     int64
	capacity int64
	// highUsed is the charge of the High entries; while it is within
	// highCap the clock passes over them as long as a Low entry is left
	// to evict.
	highUsed, highCap int64
	hits              atomic.Uint64
	misses            atomic.Uint64
	_                 [40]byte // keep neighbouring shards' hot fields off one cache line
}

func (s *shard) init(capacity int64) {
	s.index = make(map[key]int32)
	s.files = make(map[uint64]int32)
	s.free, s.hand = none, none
	s.capacity = capacity
	s.highCap = capacity * highPoolPercent / 100
}

func (s *shard) get(k key) (Handle, bool) {
	s.mu.RLock()
	i, ok := s.index[k]
	var h Handle
	if ok {
		e := &s.slots[i]
		// The cache's reference keeps the count above zero while the
		// read lock is held: it can rise here, never from zero.
		e.v.refs.Add(1)
		h = Handle{v: e.v, gen: e.v.gen.Load()}
		if !e.referenced.Load() {
			e.referenced.Store(true)
		}
	}
	s.mu.RUnlock()
	if !ok {
		s.misses.Add(1)
		return Handle{}, false
	}
	s.hits.Add(1)
	return h, true
}

func (s *shard) set(k key, v *value, p Priority) {
	charge := v.chargeBytes()
	s.mu.Lock()
	defer s.mu.Unlock()
	if charge > s.capacity { // also every block once the cache is closed
		return
	}
	if !v.cached.CompareAndSwap(false, true) {
		panic("cache: block Set twice")
	}
	v.refs.Add(1) // the cache's reference; the caller holds one already
	if old, ok := s.index[k]; ok {
		s.remove(old)
	}
	for s.used+charge > s.capacity {
		s.evictOne()
	}
	i := s.alloc()
	e := &s.slots[i]
	e.key, e.v, e.high = k, v, p == High // a free slot is zeroed: not referenced
	s.index[k] = i
	s.used += charge
	if e.high {
		s.highUsed += charge
	}
	// Insert just behind the hand: a new block is the last the clock
	// reaches, like the head of an LRU list.
	if s.hand == none {
		e.next, e.prev = i, i
		s.hand = i
	} else {
		h := &s.slots[s.hand]
		e.next, e.prev = s.hand, h.prev
		s.slots[h.prev].next, h.prev = i, i
	}
	e.fileNext, e.filePrev = none, none
	if head, ok := s.files[k.fileNum]; ok {
		e.fileNext, s.slots[head].filePrev = head, i
	}
	s.files[k.fileNum] = i
}

// alloc returns a free slot, growing the slab when none is free.
func (s *shard) alloc() int32 {
	if i := s.free; i != none {
		s.free = s.slots[i].next
		return i
	}
	s.slots = append(s.slots, entry{})
	return int32(len(s.slots) - 1)
}

// evictOne advances the hand, giving referenced entries a second chance
// and passing over High entries while they are within their pool and a
// Low entry remains. It terminates: each lap clears the bits it passes, so
// the second lap at the latest finds an unreferenced entry it may evict
// (a Low one if any is left, else any). Requires s.hand != none.
func (s *shard) evictOne() {
	for {
		e := &s.slots[s.hand]
		if e.referenced.Load() {
			e.referenced.Store(false)
			s.hand = e.next
			continue
		}
		if e.high && s.highUsed <= s.highCap && s.highUsed < s.used {
			s.hand = e.next
			continue
		}
		s.remove(s.hand)
		return
	}
}

// remove unlinks slot i from the index, the ring and its file's list,
// frees the slot and drops the cache's reference to its block: readers
// holding handles keep the block (invariant 5).
func (s *shard) remove(i int32) {
	e := &s.slots[i]
	delete(s.index, e.key)
	s.used -= e.charge()
	if e.high {
		s.highUsed -= e.charge()
	}
	if e.next == i {
		s.hand = none
	} else {
		s.slots[e.prev].next, s.slots[e.next].prev = e.next, e.prev
		if s.hand == i {
			s.hand = e.next
		}
	}
	if e.filePrev != none {
		s.slots[e.filePrev].fileNext = e.fileNext
	} else if e.fileNext != none {
		s.files[e.key.fileNum] = e.fileNext
	} else {
		delete(s.files, e.key.fileNum)
	}
	if e.fileNext != none {
		s.slots[e.fileNext].filePrev = e.filePrev
	}
	v := e.v
	*e = entry{next: s.free}
	s.free = i
	v.cached.Store(false)
	v.unref()
}

func (s *shard) evictFile(fileNum uint64) {
	s.mu.Lock()
	for i, ok := s.files[fileNum]; ok; i, ok = s.files[fileNum] {
		s.remove(i)
	}
	s.mu.Unlock()
}

// delete drops the entry of k, if cached.
func (s *shard) delete(k key) {
	s.mu.Lock()
	if i, ok := s.index[k]; ok {
		s.remove(i)
	}
	s.mu.Unlock()
}

// close drops every entry, and makes the shard cache nothing more.
func (s *shard) close() {
	s.mu.Lock()
	for s.hand != none {
		s.remove(s.hand)
	}
	s.capacity, s.highCap = 0, 0
	s.mu.Unlock()
}
