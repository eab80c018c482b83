// Package keyspan holds range tombstones: DeleteRange(start, end) deletes
// every user key k with start <= k < end at one sequence number. It turns
// raw tombstones, which overlap in any way, into fragments that do not,
// answers "is this key deleted at this snapshot?" with one binary search,
// cuts and thins fragments for compaction, keeps the memtable's tombstones,
// and encodes them for an SSTable's range-deletion block. The ideas are
// those of Pebble's keyspan.Fragmenter and RocksDB's
// FragmentedRangeTombstoneList.
//
// Reading the source, in data-flow order: span.go (Tombstone, Span, Spans),
// fragment.go (raw tombstones into Spans), query.go (Covering, Seek,
// SeekLE, Overlaps, Bounds), truncate.go and compact.go (what a flush or
// compaction does to them), set.go (the memtable's tombstones), encode.go
// (the block's bytes).
//
// # Fragments
//
// Two tombstones [a, c)#5 and [b, d)#7 overlap on [b, c). Fragmenting cuts
// the key space at every Start and End, and gives each piece the sequence
// numbers of every tombstone over it, newest first:
//
//	        a     b     c     d
//	#7            [-----------)
//	#5      [-----------)
//	        [a,b)#5  [b,c)#7,5  [c,d)#7
//
// A key's fragment then lists exactly the tombstones covering it, so one
// search over fragments sorted by key finds them all.
//
// # Visibility
//
// monban's rule (internal/base invariant 3, memtable.Get, the sequence
// number lsm reads at): a reader at snapshot s sees exactly the writes with
// seq <= s. A tombstone at seq t is thus visible at s when t <= s, and it
// deletes the versions of its keys with seq < t. Each write has its own
// sequence number, so no point version shares a tombstone's. Covering(key,
// s) returns the newest visible t over key; the reader's newest version of
// key at seq p <= s is deleted exactly when p < t.
//
// # Lifetime and concurrency
//
// Spans and everything reachable from them are immutable: safe for any
// number of goroutines, and valid for as long as they are referenced. The
// functions building Spans share the keys of their inputs rather than
// copying them. A Set takes one writer at a time (Add), concurrently with
// any number of readers (Spans, Len, Size).
//
// # Invariants
//
//  1. Spans are sorted and do not overlap: each span's End is at most the
//     next span's Start (bytes.Compare). Starts and Ends therefore both
//     strictly increase, and every query is a binary search.
//  2. Every span is non-empty (Start < End) and has at least one seq. A key
//     outside every span is covered by no tombstone: a span exists only
//     where some tombstone covers.
//  3. A span's Seqs strictly descend: newest first, no duplicates. The
//     newest visible at snapshot s is the first seq <= s.
//  4. Fragment and Compact never leave two abutting spans with equal Seqs
//     (they merge them), so Fragment's output is the one smallest
//     description of which tombstones cover which keys, whatever the order
//     of its input. Truncate keeps this; Decode does not demand it.
//  5. An empty Set costs a reader one atomic load; a non-empty one, two
//     (the version, and its sync.Once) once the version's Spans are built.
//     Reads that meet no range tombstone pay nothing more.
//
// # Format
//
// The contents of an SSTable's range-deletion block (the sstable package
// adds the block trailer and its checksum). Integers are unsigned LEB128
// varints (encoding/binary's Uvarint); keys are raw bytes.
//
//	contents = version u8 (= 1) | count uvarint | span * count
//	span     = start | end | n uvarint (>= 1) | seq uvarint | gap uvarint * (n-1)
//	start    = len uvarint | key[len]
//	end      = len uvarint | key[len]
//	Seqs[0] = seq; Seqs[j] = Seqs[j-1] - gap_j, each gap >= 1
//
// A start of length 0 means "the previous span's End", taken to be the
// empty key before the first span: abutting spans, which fragmenting makes
// wherever tombstones overlap, store each boundary once. Nothing is lost,
// as no span but the first can start at the empty key, which is below the
// previous End. Decode rejects unknown versions,
// spans out of order or overlapping, Start >= End, a seq outside 1 ..
// base.MaxSeqNum, gaps that do not descend, lengths or counts beyond the
// bytes left, and trailing bytes.
//
// The example above, [a,b)#5 [b,c)#7,5 [c,d)#7, is 19 bytes:
//
//	01 03                   version 1, 3 spans
//	01 61  01 62  01 05     start "a", end "b", 1 seq: 5
//	00     01 63  02 07 02  start "b" (abuts), end "c", 2 seqs: 7, 7-2 = 5
//	00     01 64  01 07     start "c" (abuts), end "d", 1 seq: 7
//
// # Caveats
//
//   - Fragments can be quadratic in the tombstones: n nested tombstones
//     give 2n-1 spans of up to n seqs. Set.Size counts the raw tombstones,
//     not their fragments.
//   - A Set fragments all its tombstones again after every Add, in the
//     first reader to ask (as Pebble's memtable does): cheap while range
//     deletions are rare next to reads, and a Fragment of all n tombstones
//     (O(n log n) and up) per Add if they are not.
//   - End is exclusive, whereas a table's Smallest and Largest are
//     inclusive: the keys of [Start, End) have no largest one, so a table
//     holding a tombstone has no ordinary key to bound it exactly. Taking
//     End as Largest overstates the range by one key, which only ever makes
//     an overlap check say yes. Overlaps takes inclusive bounds, as the
//     manifest's checks do.
//   - Compact serves readers at the snapshots it is given and current
//     readers only, as compaction.Iter does.
package keyspan
