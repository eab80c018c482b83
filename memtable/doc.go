// Package memtable is monban's in-memory write buffer: a sorted table of
// internal entries (github.com/google/btree) with a counting quotient
// filter over its user keys, and the mutable level — the active memtable
// plus the immutable ones waiting to flush — with one combined filter.
//
// # Basics
//
// Writes go to the active Memtable (Add: a set or a tombstone at a
// sequence number). Get(key, seq) asks the filter first: a "no" answers
// FilteredOut without touching the tree; otherwise one tree descent finds
// the newest version visible at seq. Iterators (NewIter) walk a
// copy-on-write snapshot. Range tombstones (AddRangeDelete) are kept
// apart, in a keyspan.Set (rangedel.go): Get and iterators see point
// entries only, and the engine applies RangeDels across memtables and
// tables alike. When the memtable is big enough
// (ApproximateSize), the engine calls Level.Rotate: the memtable is frozen
// and its filter merged into the level's combined filter; when its flush
// to an SSTable completes, Level.Flushed subtracts it again.
//
// # Concurrency and lifetime
//
// A Memtable is safe for any number of readers (Get, MayContainHash,
// MayContainPrefix, NewIter, Len, ApproximateSize) concurrent with writers (Add,
// Freeze); writers are serialized by a sync.RWMutex that also makes every
// filter insert atomic for readers. Iterators hold no lock: they read a
// snapshot no writer modifies. Values returned by Get and iterators alias
// the memtable and are immutable; they stay valid as long as referenced,
// or with Options.OffHeap until the Memtable's last Unref (for Get) or as
// long as the Iter is reachable and the Memtable not let go of.
// A Level is an immutable value (see Level).
//
// # Invariants
//
//  1. Entries are ordered by base.Compare; no two entries have the same
//     internal key (an exact duplicate Add is rejected).
//  2. The filter holds exactly one fingerprint per entry (per version, not
//     per user key): a key with three versions counts three. With
//     Options.Split it also holds the prefix of every entry, one
//     fingerprint per run of consecutive Adds with one prefix. The level
//     subtracts a flushed memtable's whole filter, so its subtraction stays
//     exact. A user's delete is an Add of a tombstone and never removes a
//     fingerprint: the tombstone must stay findable.
//  3. Every filter has FingerprintBits = qbits + rbits, so any two merge.
//     A filter grows before an insert or merge would pass maxLoad; users
//     never see filter.ErrFull.
//  4. After Freeze nothing in the memtable changes; reads then take no
//     lock, and Filter may be shared (the level does).
//  5. A Level's combined filter is the multiset union of its immutables'
//     filters (see Level).
//
// Nothing here is written to disk: the WAL makes memtable contents
// durable, and an SSTable replaces them at flush.
package memtable
