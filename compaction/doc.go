// Package compaction decides what a flush or a compaction writes, and
// which tables to merge (Pick; PickRest once the DB is at rest;
// PickDeleteOnly for tables range tombstones delete wholly, which go
// unread; Conflicts says which compactions may run side by side).
//
// Iter filters a merged stream of internal entries. Its invariants are the
// rules that let an LSM tree forget:
//
//  1. Versions of a user key that no reader can see are dropped: snapshots
//     cut the versions into stripes (a version at seq lies in the stripe of
//     the first snapshot >= seq, or the top stripe for current reads), and
//     within a stripe only the newest is ever read.
//  2. A tombstone that is the oldest surviving version of its key is dropped
//     when nothing older can exist below the output: the output is the
//     bottom of the tree, or the in-memory filters of every older table
//     covering the key say it is absent (an absent-key proof). The decision
//     never reads disk.
//  3. For every snapshot and for the current state, the visible value (or
//     absence) of every key is the same before and after.
//  4. A version under a range tombstone of its own snapshot stripe is
//     dropped as shadowed (rangedel.go); the tombstone stays in the output,
//     hiding what lies below, until no table below overlaps it (the
//     caller's keyspan.Compact with bottom).
//  5. A table leaves the tree unread (a delete-only compaction,
//     PickDeleteOnly) only when every user key of its range is covered by
//     range tombstones newer than all its entries, in its oldest entry's
//     snapshot stripe, held by tables that every read meets before it:
//     then no reader, at any snapshot, can see one of its entries.
//
// The package is the engine's own policy, kept where a reader of the
// tree's layout finds it; its inputs are the versions of
// internal/manifest and the entries of internal/base, which code outside
// this module cannot build, so outside code does not use it (lsm's
// Options set what it decides, and Stats and EventListener report it).
package compaction
