package memtable

import (
	"bytes"
	"encoding/binary"
	"unsafe"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/offheap"
)

// entry is one item of the B-tree: an internal key and its value. Key and
// value share one allocation from the memtable's arena, vlen ‖ key ‖ value
// (vlen 4 bytes, little-endian), held by a raw pointer to the key and its
// length rather than a slice header: the B-tree stores entries by value,
// up to 63 to a node, and every byte of an entry is a byte of every node
// on the heap, which the collector lets grow to twice what is live (32
// bytes, against 48 with a slice). The value's length lives in the arena,
// beside the bytes it measures, because only a read of the value needs it
// and the 4 bytes it would take here order keys instead. The memory kv
// points at is the memtable's arena's, which lives as long as the
// memtable (or, for a pivot, the caller's key: a pivot has no value).
//
// prefix and prefixTail hold the key's first 12 bytes, big-endian,
// zero-padded: comparing them orders most pairs of keys without following
// kv, whose bytes lie wherever the arena put them (one cache miss per
// comparison otherwise, ~25 per tree descent at 500k entries). Twelve, not
// eight, because keys often share their first 8 bytes: a raft log's, one
// prefix byte and a big-endian index, share them between every 256
// neighbours. Equal prefixes fall back to the bytes.
type entry struct {
	kv         unsafe.Pointer // klen bytes of key; the value follows, its length precedes
	klen       uint32
	prefixTail uint32 // key bytes 8 to 12
	prefix     uint64 // key bytes 0 to 8
	trailer    uint64
}

// vlenSize is the bytes before an entry's key that hold its value's length.
const vlenSize = 4

// newEntry copies key and value into the arena and returns the entry for
// them. An empty key and value still get a byte past their length, so that
// kv points into the allocation they share with vlen, not past its end.
func (a *arena) newEntry(key, value []byte, trailer uint64) entry {
	buf := a.alloc(vlenSize + max(len(key)+len(value), 1))
	binary.LittleEndian.PutUint32(buf, uint32(len(value)))
	kv := buf[vlenSize:]
	copy(kv, key)
	copy(kv[len(key):], value)
	return keyEntry(kv[:len(key)], trailer)
}

// keyEntry is the entry of key alone, not copied: its value must not be
// read.
func keyEntry(key []byte, trailer uint64) entry {
	e := entry{kv: unsafe.Pointer(unsafe.SliceData(key)), klen: uint32(len(key)),
		prefix: base.KeyPrefix(key), trailer: trailer}
	if len(key) > 8 {
		e.prefixTail = uint32(base.KeyPrefix(key[8:]) >> 32)
	}
	return e
}

func (e entry) key() []byte {
	if e.klen == 0 {
		return []byte{} // as the empty key was given: not nil
	}
	return unsafe.Slice((*byte)(e.kv), e.klen)
}

// value returns the entry's value; an empty one is not nil, as a stored
// empty value never was.
func (e entry) value() []byte {
	vlen := binary.LittleEndian.Uint32(unsafe.Slice((*byte)(unsafe.Add(e.kv, -vlenSize)), vlenSize))
	if vlen == 0 {
		return []byte{} // e.kv+klen may be just past the arena's chunk
	}
	return unsafe.Slice((*byte)(unsafe.Add(e.kv, e.klen)), vlen)
}

func (e entry) internalKey() InternalKey {
	return InternalKey{UserKey: e.key(), Trailer: e.trailer}
}

// pivot builds a search key that is not copied anywhere: the B-tree only
// compares it.
func pivot(k InternalKey) entry {
	return keyEntry(k.UserKey, k.Trailer)
}

// less orders entries by base.Compare (invariant 2 of internal/base): user
// key ascending, trailer descending.
func less(a, b entry) bool {
	if a.prefix != b.prefix {
		return a.prefix < b.prefix
	}
	if a.prefixTail != b.prefixTail {
		return a.prefixTail < b.prefixTail
	}
	if c := bytes.Compare(a.key(), b.key()); c != 0 {
		return c < 0
	}
	return a.trailer > b.trailer
}

// entryOverhead is what one entry costs beyond its key and value bytes: the
// 32-byte item in a B-tree node that is on average ~70% full (32/0.7 ≈ 46)
// plus its share of node headers and child pointers. ApproximateSize uses it;
// it is an estimate for the flush trigger, not an accounting.
const entryOverhead = 48

// arena hands out key‖value buffers carved from large chunks, so an Add
// costs no allocation most of the time and the GC sees a few big objects
// instead of one per entry. Bytes are never reused: values returned by Get
// alias them for as long as the caller holds them.
//
// Chunks start at arenaFirstChunk and double up to arenaChunk: a small
// memtable (the engine rotates at Options.MemtableSize, which may be a few
// KiB) then holds little more memory than it reports, while a big one
// pays four extra allocations (60 KiB in small chunks) before its first
// full-size chunk.
//
// Only the writer (under Memtable.mu) calls alloc; readers only read bytes
// of entries already published in the tree.
//
// With Options.OffHeap, chunks of offheap.MinSize or more are mapped
// outside the heap, each owned by a Buffer the arena holds a reference on,
// and released at the Memtable's last Unref, or, for a Memtable nobody
// let go of, when it is collected (a cleanup New registers, stopped by
// that Unref).
//
// Invariant: used = bytes handed out + tails of chunks given up on. The
// current chunk's unused tail is not counted: the engine rotates a memtable
// when ApproximateSize reaches its MemtableSize, and counting a whole fresh
// chunk would rotate a small memtable after its first entry (issue 11).
type arena struct {
	chunk   []byte // unused tail of the current chunk
	last    int    // size of the last chunk allocated; 0 before the first
	used    int64
	offHeap bool
	held    *heldChunks // the chunks' owners, with offHeap
}

// heldChunks is apart from the Memtable so that the Memtable's cleanup can
// release it: a cleanup's argument must not keep its object reachable.
type heldChunks struct{ bufs []*offheap.Buffer }

func (h *heldChunks) release() {
	for _, b := range h.bufs {
		b.Release()
	}
}

const (
	arenaFirstChunk = 4 << 10           // a page: what a 4 KiB memtable needs
	arenaChunk      = offheap.ChunkSize // full size: big enough to amortise, small enough to waste little; reused off the heap
	arenaLarge      = 8 << 10           // buffers above this get their own allocation
)

func (a *arena) alloc(n int) []byte {
	a.used += int64(n)
	if n > arenaLarge {
		return make([]byte, n)
	}
	if n > len(a.chunk) {
		// No later buffer will be carved from the old tail: it is held
		// for nothing until the memtable goes, so it counts as used.
		a.used += int64(len(a.chunk))
		a.last = min(max(2*a.last, arenaFirstChunk), arenaChunk)
		// While chunks are small, one of up to arenaLarge bytes may not
		// fit: it gets a chunk of its own size, with no tail to waste.
		a.chunk = a.newChunk(max(a.last, n))
	}
	b := a.chunk[:n:n]
	a.chunk = a.chunk[n:]
	return b
}

func (a *arena) newChunk(size int) []byte {
	if !a.offHeap {
		return make([]byte, size)
	}
	buf := offheap.New(size)
	a.held.bufs = append(a.held.bufs, buf)
	return buf.Bytes()
}
