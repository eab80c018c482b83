// Package cache is the block cache shared by every open SSTable of a DB:
// decoded (checksummed, decompressed) data blocks keyed by (file number,
// block offset), bounded by a byte capacity.
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
// Lifetime and concurrency: a Cache is safe for concurrent use by any number
// of goroutines. It has no Close; it is garbage once unreferenced.
//
// Invariants:
//
//  1. A shard's charged bytes (len(block) + EntryOverhead per entry) never
//     exceed capacity/shards, so the whole cache never exceeds capacity.
//  2. A cached block is immutable: neither the cache nor its users ever write
//     to it after Set. That is why no reference counts are needed: Get
//     hands out the slice itself, and the Go garbage collector keeps a block
//     alive for as long as any reader still holds it, even after eviction.
//  3. Get returns exactly the block last Set for that key, or a miss.
//  4. Capacity 0 (or a nil *Cache) caches nothing: Set is a no-op and Get
//     always misses.
package cache
