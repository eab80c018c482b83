// Package merge combines several sorted sources of internal entries — the
// memtables and the SSTables of each level — into one sorted stream, the
// way every LSM read that spans more than one key (iterators, flushes,
// compactions) sees the tree.
//
// Invariants:
//
//  1. The merged stream yields every entry of every source exactly once, in
//     base.Compare order, in both directions and across direction changes.
//  2. Entries with equal internal keys (which the engine never produces: a
//     sequence number is written once) come out in source order, so the
//     result is deterministic anyway.
//  3. The first error of any source stops the iterator: Valid is false and
//     Error returns it.
//
// The iterator owns its sources: Close closes them all.
package merge
