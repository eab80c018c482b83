// Package lsm is monban's storage engine: the DB that users embed.
//
// A DB is a log-structured merge tree. Writes go to a write-ahead log and an
// in-memory memtable; full memtables become immutable and are flushed to
// sorted, immutable SSTables in level 0; compaction merges tables down the
// levels. Every SSTable carries a Bloom filter, and the mutable level (the
// memtables not yet flushed) a quotient filter, so that a key a filter rules
// out costs no disk read — for Get, for Delete, and for the merges that
// decide whether a tombstone is still needed.
//
// # The read path
//
// Get(k) hashes k once and walks, newest first, stopping at the first
// version visible at the read's sequence number (a tombstone means
// ErrNotFound):
//
//  1. the active memtable: its quotient filter, then its tree;
//  2. the immutable memtables: one probe of their combined quotient filter,
//     then each memtable's own filter and tree, newest first;
//  3. the L0 tables, newest first: key range, Bloom filter, index, data block;
//  4. one table per deeper level (binary search on key ranges), the same way.
//
// Explain(k) prints these steps for one key; docs/read-path.md walks through
// them.
//
// # Absent-key proofs
//
// A key that every filter on its path rejects is provably absent. Delete of
// such a key writes nothing (Stats.DeletesElided) unless
// Options.KeepAbsentDeletes is set.
//
// # Concurrency and guarantees
//
// A DB is safe for concurrent use. Writes are applied in one order
// (sequence numbers); a concurrent group of writers shares one WAL write.
// A write acknowledged without error survives a process crash, and with
// Options.Sync a machine crash. A Batch is atomic, across crashes too.
// Reads see a consistent prefix of commits: a Get, an iterator or a
// Snapshot sees every write acknowledged before it started and, of the
// writes concurrent with it, a prefix.
//
// Invariants:
//
//  1. Sequence numbers are assigned in commit order and published (made
//     visible to reads) in the same order, only after the write is in the
//     WAL and the memtable.
//  2. A file is deleted only when no version, reader or iterator refers to
//     it, and only after the manifest no longer names it.
//  3. A user's delete never removes a key's fingerprint from the mutable
//     level's filter; only an entry that physically leaves the mutable level
//     (flushed, or removed by an absent-key proof) does.
package lsm
