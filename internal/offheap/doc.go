// Package offheap allocates byte buffers outside the Go heap: the memory
// an open table pins for its whole life (its filter and index blocks),
// memtable arenas, the chunks the block cache carves its buffers from,
// and iterators' readahead windows. The collector lets the heap grow to twice what is live before it
// collects (GOGC 100), so every pinned byte on the heap costs two bytes of
// resident memory; at 4M keys those blocks are most of what a DB keeps
// live while it fills (docs/design.md, "Memory").
//
// A Buffer counts its holders. New gives its caller the first reference,
// Ref one more to each further holder, and the last Release frees the
// memory at once: under table churn every reopen maps new blocks, and
// memory left for the collector to find piled up to 20 times the live
// working set between collections (issue 30), since the collector does not
// know the mappings exist. A runtime cleanup stays on each mapped Buffer
// as a safety net: a Buffer collected with references left, a holder's
// bug, is freed then and counted (Stats().Leaked). Hence the invariants:
//
//  1. Whoever uses a slice of a Buffer's memory holds a reference
//     meanwhile: a type that keeps such a slice keeps the *Buffer beside
//     it, with a reference of its own, and releases it only once no slice
//     of the memory is used any more; each holder releases exactly once.
//     No slice of the memory is stored where a reference is not.
//  2. The memory neither moves nor changes size, and starts zeroed, also
//     when it is a released Buffer's, reused (ChunkSize).
//  3. In race builds (how the tests run) freed memory is made
//     inaccessible and its addresses are never reused, so a slice used
//     after its Buffer's last Release (or its collection) faults at once
//     instead of reading whatever was mapped there next.
//  4. Buffers smaller than MinSize, and all buffers where the system has no
//     anonymous mappings in this package (every OS but Linux), are
//     ordinary heap slices: a mapping costs whole pages and a system call.
//     They count references all the same, and the collector frees them.
//  5. Stats().Mapped is the bytes of the mappings of Buffers not yet
//     freed: it falls on the last Release, not at a collection.
package offheap

// MinSize is the smallest buffer New maps outside the heap; smaller ones
// would waste too much of their last page (at most a fifth, from 16 KiB).
const MinSize = 16 << 10

// ChunkSize is the size of buffer whose memory is kept for reuse when its
// Buffer is freed, rather than returned to the system at once: a
// memtable arena's chunk.
const ChunkSize = 64 << 10
