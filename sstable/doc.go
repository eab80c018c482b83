// Package sstable reads and writes monban's immutable sorted tables: the
// files an LSM level is made of. A table holds internal entries (user key,
// sequence number, kind, value) in internal-key order, a cache-line Bloom
// filter over its user keys (and, written with a filter.Split, their
// prefixes: Reader.MayContainPrefix), optionally a range filter over its
// keys' first 8 bytes (Reader.MayContainRange) and the set of its keys'
// hashes a tree-wide filter is built from (Reader.AppendKeyHashes), an
// index of its data blocks, and its properties.
//
// Reading the source, in data-flow order: writer.go (Add: entries into
// blocks, and each block's separator into the index), block.go (prefix
// compression and restart points), separator.go (index keys),
// writer_finish.go (filter, index partitions, properties, footer),
// reader.go (Open: verify and pin the meta blocks, or open paged;
// dataBlock: a handle from the cache, else a pooled buffer filled from
// the file), index.go, index_compact.go and partitions.go (the index,
// searched in place),
// filter_pages.go (a paged filter), budget.go (pinned or paged), identity.go
// (is this file the table the manifest means?), rangedel.go (the range
// tombstones' block), rangefilter.go (the range filter's block),
// keyhashes.go (the key-hash block), get.go (the point-read
// path, four numbered steps), lookup.go (Lookup, the one record of a
// point lookup, and how it is counted and printed), iter.go (two-level
// iterator), table_cache.go (open readers, reference counted, checked
// against the caller's TableRef), meta.go (what a closed table leaves in
// the block cache), stats.go (ReadStats: what a Reader's Gets and
// iterators read).
//
// # Lifetime and concurrency
//
// A Writer is used by one goroutine; Finish or Abort closes its file. A
// Reader is safe for concurrent Get, NewIter, MayContainHash,
// MayContainPrefix, MayContainRange, AppendKeyHashes and Stats; its Close
// must not race with them
// (TableCache guarantees this with reference counts). An Iter is used by one goroutine, and its Key and Value are valid
// until it moves or closes (invariant 6). Get's returned value is a fresh
// copy, the caller's to keep.
//
// # Invariants
//
//  1. Entries in a table are strictly increasing by base.Compare; the
//     Writer refuses anything else (ErrOutOfOrder).
//  2. Every block carries a CRC-32C over its stored bytes and compression
//     type; no byte of a block is interpreted before its checksum matches.
//  3. Every length or offset read from disk is bounded (by the file size,
//     the enclosing block, or maxBlockLen = 64 MiB) before it sizes an
//     allocation or a read. Bad bytes yield an error wrapping
//     base.ErrCorruption that names the file — never a panic, a hang, or
//     wrong data accepted silently.
//  4. The index key of a data block is a separator s with lastKey <= s <
//     the next block's first key (separator.go): whole, the block's last
//     internal key itself, wherever the two keys share a user key (and for
//     the table's last block); else a bare user key, above the last key's
//     user key. So the entry preceding any block is known without reading
//     it to be a version of a user key k exactly when the preceding
//     block's separator is whole with user key k; Get uses this to tell a
//     filter false positive from a key whose versions are all newer than
//     the snapshot, at no I/O cost.
//  5. A Reader either pins its table's meta or reads it paged
//     (MetaBudget, budget.go). Pinned: index partitions, filter and
//     properties are read once at Open and kept in the Reader; only data
//     blocks go through the block cache while the table is open, and a Get
//     that passes the filter reads at most one data block. Paged (a table
//     of format version 2 or 3 whose meta does not fit the budget): Open
//     reads the footer, the properties and the top-level index only, and
//     a lookup fetches the one index partition (partitions.go) and the one
//     4 KiB filter page (filter_pages.go) it needs through the block
//     cache, each verified by its own checksum before use. A low table
//     (budget.go) whose index fits where index and filter do not pins the
//     index and pages the filter. The pinned
//     index and filter blocks lie in internal/offheap Buffers (outside
//     the Go heap when large), on which the Reader, each copy of the
//     filter kept beyond it (CacheLine.Ref) and each reader made by
//     WithFile hold a reference; the last to release frees the memory at
//     once, and the budget gets its bytes back then (metaClaim), not at
//     the Reader's Close. When the TableCache closes a table to make room,
//     the Reader leaves its
//     verified meta in the block cache, charged to its budget (meta.go),
//     and a reopen that finds it there reads the table's tail (properties
//     block and footer, one read of a few hundred bytes), compares it byte
//     for byte with the tail the meta was read with, and decodes or
//     verifies nothing else.
//  6. Data blocks are read in place, each under an internal/cache Handle
//     whose buffer is recycled once its last handle is released
//     (internal/cache, invariant 5), and no slice of a block outlives the
//     reader's handle: Get copies the value out before releasing its
//     block; an Iter keeps the handle of its current block until it moves
//     onto another or closes, which is why its Key and Value are valid only
//     until then. Blocks are immutable while shared (internal/cache,
//     invariant 2). A read that misses the cache fills a pooled buffer, so
//     Gets and scans allocate nothing per block in steady state. The meta
//     blocks pinned at Open are not pooled (invariant 5 frees them).
//  7. A Reader opened with ReaderOptions.ExpectSize and ExpectTableID is
//     the table the caller expects: its file size and its table.id property
//     match. Checksums cannot tell a valid table in the wrong file (two
//     files swapped); this check does. Below the file, every block but
//     the properties is sealed to the table's id and its own offset
//     (format.go, blockSeal): a block checks only where it was written.
//     TableCache.Get checks every reader it returns, open already or not,
//     against the TableRef it is given.
//  8. A point lookup (Get; Probe, Find and FindNext for a caller that
//     asks the filter itself) fills one Lookup, every field, and counts
//     nothing while it runs: Get counts its Lookup in ReadStats after the
//     fact, and Probe, Find, FindNext and MayContainHashes leave the
//     counting to their caller, which has the Lookups. So each lookup is
//     counted once, by whoever reads the count (lsm, per level), and
//     ReadStats add up for every Reader: what its Gets and iterators did.
//
// # Caveats
//
//   - Prev inside a data block re-decodes from the preceding restart point,
//     so a backward scan costs up to BlockRestartInterval decodes per entry
//     (LevelDB's trade-off); a huge restart interval makes it quadratic.
//   - A block boundary inside the versions of one user key keeps a whole
//     key in the index (invariant 4): a table of many long keys' versions
//     has a large index.
//   - ReaderOptions.FileNum is the block-cache key: two readers sharing a
//     cache must not use the same number for different files.
//   - Open's reads (footer, index, filter, properties) are counted in
//     ReadStats.OpenBlocksRead/OpenBytesRead, not BlocksRead/BytesRead; a
//     reopen from the block cache counts one read, of the tail. So is
//     each read of the key-hash block (AppendKeyHashes), made after Open.
//   - A table recognised by its tail (invariant 5) is trusted to be the
//     table its meta was read from: a file put in its place with the same
//     properties block (table id included) and footer would be taken for
//     it. Tables the engine writes carry a random id, so only a copy of
//     the same table could be.
//   - A table deleted (TableCache.Evict) while a reader evicted earlier
//     still holds it leaves its meta in the block cache when that reader
//     closes: it waits there, charged, until the cache evicts it or the
//     TableCache closes.
//   - A table written without an id (WriterOptions.TableID 0, or before the
//     table.id property existed) fails any ExpectTableID check: callers
//     pass 0 for tables the manifest knows no id of. Size is still checked.
//
// # Format
//
// Described byte by byte, with a worked example, in docs/format.md
// ("SSTable"). In short (all fixed-width integers little-endian):
//
//	[data block 0] ... [data block n-1] [filter block]?
//	[index partition 0] ... [index partition p-1] [top-level index block]
//	[range-deletion block]? [range-filter block]? [key-hash block]?
//	[properties block] [footer: 64 bytes]
//
//	block    = contents | type u8 (0 none, 1 snappy) | crc32c u32
//	           crc32c (Castagnoli) covers the stored contents and the type
//	           byte, XORed with the block's seal: uint32(xxhash64(table.id
//	           u64 | offset u64)); the properties block's seal is 0
//	contents = entry* | restart offset u32 * r | r u32
//	entry    = shared uvarint | unshared uvarint | value length uvarint |
//	           key[shared:] | value
//	data block:  key = encoded internal key (user key | seq<<8|kind u64)
//	index partition: key = separator of data block i: user key, then the
//	             trailer only when whole; value = length<<1|whole uvarint,
//	             then offset uvarint at restart points only (blocks are
//	             contiguous); restart interval 4; cut at 4 KiB
//	top-level index: key = last key of partition p, as stored there;
//	             value = length<<1|whole uvarint | offset uvarint |
//	             first data block uvarint; restart interval 1
//	filter block: filter.CacheLineBuilder's encoding, never compressed; of
//	             the user keys, and of their prefixes (filter.PrefixHash)
//	             when the filter.prefix_split property names a split
//	range-deletion block: keyspan.Encode's, never compressed; located by
//	             the rangedel.block property (rangedel.go)
//	range-filter block: filter.GrafiteBuilder's encoding of the points of
//	             the point entries' user keys, never compressed; located by
//	             the filter.range_block property (rangefilter.go)
//	key-hash block: filter.AppendKeyHashes' encoding of the hashes of the
//	             point entries' user keys, never compressed; located by the
//	             filter.key_hashes_block property (keyhashes.go), read only
//	             when asked
//	properties block: key = property name, value = uvarint / key / string
//	footer   = index (off u64, len u64) | filter (off u64, len u64; 0,0 = none) |
//	           properties (off u64, len u64) | version u32 = 4 |
//	           crc32c of the preceding 52 bytes u32 | magic "MONBANST"
//
// Version 3 tables, still read, are version 4's without seals. Version
// 2 tables, still read, index every block under its whole last
// key, value offset uvarint | length uvarint, restart interval 1, and
// their top-level values are offset | length | first. Version 1 tables,
// still read, have one such index block where later versions have the
// partitions and the top-level block. Handle lengths exclude the
// 5-byte block trailer. Data blocks are cut once
// their uncompressed size reaches WriterOptions.BlockSize and kept
// snappy-compressed only when that saves at least 1/8.
package sstable
