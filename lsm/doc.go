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
// # Using a DB
//
// Open a directory with Open (a nil *Options takes every default; the
// fields of Options document theirs) and Close the DB when done. Put,
// Delete and DeleteRange write one change; a Batch applied by Write
// writes several atomically. Every write copies the keys and values it is
// given, and returns once the write would survive a process crash
// (unless Options.BufferedWAL); pass Sync for a write that must survive a
// machine crash (Options.Sync makes it the default). Get returns a value the caller may keep, or
// ErrNotFound; MultiGet reads many keys at one point in time. NewIter
// iterates in key order, both ways, within optional bounds
// (IterOptions), and NewSnapshot fixes a point in time for later reads.
// Close every Iter and Snapshot: an open Iter keeps the tables it reads
// on disk, an open Snapshot every version it can see.
// Checkpoint copies the DB into a directory of its own; Repair rebuilds
// one that Open refuses. Stats counts what the filters saved; Explain
// shows the read path of one key. The errors a caller can act on wrap
// the Err* variables below: test them with errors.Is. The package's
// Examples show each of these calls; the repository's README is a tour
// of them.
//
// # The read path
//
// Get(k) hashes k once and walks, newest first, stopping at the first
// version visible at the read's sequence number (a tombstone means
// ErrNotFound). The steps are numbered as in lsm/get.go and in every line
// Explain prints:
//
//  1. the active memtable: its quotient filter, then its tree;
//  2. the immutable memtables: one probe of their combined quotient filter,
//     then each memtable's own filter and tree, newest first;
//  3. the L0 tables, newest first, each through sstable/get.go's
//     sub-steps: a. key range, b. Bloom filter, c. index, d. data block;
//  4. one table per deeper level (binary search on key ranges), the same
//     way (4a–4d).
//
// Only 3d and 4d read the disk, and only after a filter said maybe.
// Each table's part of the walk leaves one record, an sstable.Lookup:
// Stats' per-level read counters are counted from it, and Explain's step
// for the table is made from it.
//
// Range tombstones (DeleteRange) are met on the same walk: each memtable's
// and table's that cover the key, held in memory, are asked before its
// point entries, and a version older than the newest covering tombstone
// met so far is deleted; the first source with a covering tombstone ends
// the walk (rangedel_read.go). Iterators ask the tombstones of every
// source at once, merged. A table that range tombstones above it delete
// wholly, with no snapshot between, leaves by a manifest edit alone,
// unread (a delete-only compaction, compaction.PickDeleteOnly), and its
// file goes by invariant 2 below, as any compaction input's does.
// Explain(k) returns these steps for one key as a Trace of Steps;
// docs/read-path.md walks through them on a DB that `kvbench teach`
// builds.
//
// # Absent-key proofs
//
// A key that every filter on its path rejects is provably absent. Delete of
// such a key writes nothing (Stats.DeletesElided) unless
// Options.KeepAbsentDeletes is set, or recent proofs kept failing: Delete
// asks the filters only while its proofs pay (proof.go), and
// otherwise writes the tombstone, which is always correct. Range
// tombstones change no proof: a point tombstone hides only point versions,
// and the filters prove there are none; a merge drops a point tombstone
// only where no table below can hold its key, or under a range tombstone
// of its stripe, which stays and hides what the point tombstone hid.
//
// # Concurrency and guarantees
//
// A DB is safe for concurrent use. Writes are applied in one order
// (sequence numbers); a concurrent group of writers shares one WAL write.
// A write acknowledged without error survives a process crash, and with
// Options.Sync (or a per-write Sync) a machine crash; with
// Options.BufferedWAL a process crash keeps a prefix of the commits that
// holds every commit before the last Flush, not every acknowledged one. A
// Batch is atomic, across crashes too.
//
// Reads see exactly a published prefix of commits: a reader at sequence
// number S — a Get, an iterator, a Snapshot — sees every write with
// sequence number <= S and none above it, whatever runs concurrently
// (commits, memtable rotations, flushes, compactions, table-cache
// evictions). S covers every write acknowledged before the read started.
// Four invariants keep it so:
//
//  1. Sequence numbers are assigned in commit order and published (made
//     visible to reads) in the same order, only after the write is in the
//     WAL and the memtable — and, for a Sync write, after the fsync that
//     covers it. (Within one commit group, which writers queued together
//     form, the writers that need no fsync are ordered first: they are
//     concurrent, so any order of them is one a sequential history could
//     have, and this one lets them return before the fsync.) Nothing already in a memtable is changed or
//     removed before the memtable is flushed: a delete is a tombstone, even
//     when it meets its key's only put, since a reader below its sequence
//     number may still be reading the put.
//  2. A file is deleted only when no version, reader or iterator refers to
//     it, and only after the manifest no longer names it.
//  3. A user's delete never removes a key's fingerprint from the mutable
//     level's filter; only an entry that physically leaves the mutable level
//     (flushed) does.
//  4. A read takes its read state (memtables and version, referenced) before
//     its sequence number. Every write published by then is in a memtable
//     the read state holds, or in one that rotated after it, and the read
//     state keeps every version its memtables and tables hold while it is
//     referenced — so flushes and compactions, which drop shadowed versions
//     only in the new tables they write, never take away a version a live
//     reader needs. A Snapshot, whose reads take a new read state each
//     time, is protected instead by the snapshot list that every flush and
//     compaction respects; a snapshot taken after a flush or compaction
//     started sees at least every version in its inputs, of which they keep
//     the newest.
package lsm
