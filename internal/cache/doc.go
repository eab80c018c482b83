// Package cache is the block cache shared by every open SSTable of a DB:
// decoded (checksummed, decompressed) data blocks keyed by (file number,
// block offset), bounded by a byte capacity, and the pool of block buffers
// that every read of a data block allocates from, cached or not. It also
// holds, charged to the same capacity, values its users own (NewValue): the
// verified index and filter of tables the table cache has closed, so that
// reopening one reads its footer only (sstable's invariant 5).
//
// # Design
//
// The cache is split into shards chosen by a hash of the key, each with its
// own lock, so goroutines reading different blocks rarely contend. Each
// shard evicts with CLOCK (second chance) rather than LRU: a hit takes only
// the shard's read lock and sets one atomic "referenced" bit, whereas LRU
// must relink the entry at the list head under the write lock on every
// hit — and hits are the common case on a warm read path. CLOCK approximates
// LRU closely enough for block caching (it is what Pebble and RocksDB's
// HyperClockCache use for the same reason).
//
// A shard keeps its entries in a slab of slots linked by index (the clock
// ring, each file's list, the free list), so caching a block allocates
// nothing once the slab has grown to the shard's working size.
//
// # Handles and buffers
//
// A block is read through a Handle: Get returns one on a hit, Alloc one on
// a fresh buffer for the reader to fill. Each handle is a reference, and
// so is the cache's own while the block is cached. The last reference to
// go returns the buffer to its size class (sixteen per power of two), from
// which the next Alloc of that class takes it: in steady state a cache miss
// evicts one block and reuses its buffer, and reads allocate nothing.
// Buffers live outside the Go heap, carved from mappings of internal/offheap
// (buffers.go), so a cache of N bytes costs N bytes of memory rather than
// the 2N the collector lets a heap of N live bytes grow to; a handle that
// is never released is a bug the collector still catches: its buffer goes
// back when its value is collected, and Leaked counts it.
//
// Lifetime and concurrency: a Cache and Handle.Release are safe for
// concurrent use by any number of goroutines; one Handle value is used by
// one goroutine at a time. Its owner Closes a Cache when done with it, so
// that its blocks' memory goes back at once.
//
// # Invariants
//
//  1. A shard's charged bytes (buffer capacity + EntryOverhead per entry)
//     never exceed capacity/shards, so the cached blocks never exceed
//     capacity. Blocks evicted while readers still hold them are no longer
//     charged: they are the readers' memory until released.
//  2. A cached block is immutable: neither the cache nor its users write to
//     it after Set, for as long as any reference to it lives.
//  3. Get returns exactly the block last Set for that key, or a miss.
//  4. Capacity 0 (or a nil *Cache) caches nothing: Set is a no-op and Get
//     always misses. Alloc and Release work without any Cache.
//  5. A buffer goes back to its class only when its last reference is
//     released: eviction, EvictFile and replacement drop only the cache's
//     reference, so a block read under a handle stays valid until that
//     handle's Release, however long it is held. Its users keep this by
//     never letting a slice of the block outlive the handle: sstable's Get
//     copies the value out before releasing, its iterators keep the current
//     block's handle until they move off it.
//  6. Handle misuse panics rather than passing silently: a reference count
//     that would go below zero, or reach zero while the cache still holds
//     the block, and Block or Release on a copy of a handle whose buffer
//     has since been freed (each buffer counts its frees). Releasing one
//     variable twice is harmless (Release clears it). Not every misuse is
//     caught at once: a copy released twice while another reader alone
//     holds an evicted block frees it under that reader, whose own Release
//     then panics. In race builds a freed buffer is also overwritten with a
//     poison byte, so a slice kept past its release reads garbage that
//     tests notice, and the race detector reports the write.
//  7. Eviction takes a Low block before a High one while the High blocks
//     charge at most half of their shard (highPoolPercent): a stream of
//     blocks read once cannot push out the index and filter pages every
//     read needs. Past that half, or with no Low block left, High blocks
//     are evicted as any other.
package cache
