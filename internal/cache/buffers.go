package cache

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/monbandb/monban/internal/offheap"
)

// Block buffers live outside the Go heap (internal/offheap). A cached
// block is live for as long as the cache holds it, and the collector lets
// the heap grow to twice what is live before it collects, so a cache of
// heap buffers cost twice its capacity in resident memory, and more while
// sync.Pool kept the evicted ones for a cycle.
//
// The buffers of one size class are carved from chunks of ChunkSize (one
// mapping each; a buffer larger than half of that has a mapping of its
// own), so a read maps nothing in steady state. A chunk whose buffers are
// all free again is freed at once, except one per class of small buffers,
// kept spare so that a class whose last buffer comes and goes (a
// compaction's reads with no cache) does not carve a chunk each time: the
// mapped bytes follow what the caches and the reads in flight hold, plus
// a spare per class (SpareBytes), rather than their high-water mark.
const chunkBytes = offheap.ChunkSize

// bufClass is the free buffers of one size class, by chunk.
type bufClass struct {
	mu sync.Mutex
	// partial holds the chunks with a free buffer and one in use; Alloc
	// takes from the last, so the others get the chance to empty.
	partial []*bufChunk
	spare   *bufChunk // wholly free, kept for the next Alloc
}

// bufChunk is one mapping and the buffers carved from it. Only its free
// buffers are referenced from here: an allocated one is its holders' alone,
// so that the collector can find it if they forget it. A buffer gets its
// value (and safety net) when first allocated, and a free one is reused
// before another is carved, so the values on the Go heap follow the
// buffers in use at once, not the chunks' capacity: a chunk of the
// smallest class holds almost a thousand buffers.
type bufChunk struct {
	mem    *offheap.Buffer
	class  *bufClass
	size   int      // of each buffer: its class's
	n      int      // buffers the chunk holds
	carved int      // buffers given a value so far: 0 to carved-1
	free   []*value // its carved buffers that are free
	at     int      // index in class.partial, or -1
}

// available reports whether the chunk has a buffer to give.
func (ch *bufChunk) available() bool { return len(ch.free) > 0 || ch.carved < ch.n }

var classes [numClasses]bufClass

// leakedBuffers counts buffers the collector found unreachable while still
// allocated: a handle forgotten without its Release. The safety net gave
// their memory back to their chunk then, not at the release that never
// came.
var leakedBuffers atomic.Uint64

// Leaked returns how many block buffers the safety net has reclaimed.
func Leaked() uint64 { return leakedBuffers.Load() }

// spareBytes is the mapped bytes of the classes' spare chunks.
var spareBytes atomic.Int64

// SpareBytes returns the bytes mapped for spare chunks, which no block
// uses: part of offheap's Mapped, at most a chunk per size class in use.
func SpareBytes() int64 { return spareBytes.Load() }

// allocBuffer returns a value holding a free buffer of class c, with no
// references yet.
func allocBuffer(c int) *value { return classes[c].alloc(c) }

// alloc is allocBuffer on bc, which is class c.
func (bc *bufClass) alloc(c int) *value {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	if len(bc.partial) == 0 {
		ch := bc.spare
		if ch == nil {
			ch = newChunk(bc, c)
		} else {
			bc.spare = nil
			spareBytes.Add(-int64(len(ch.mem.Bytes())))
		}
		bc.addPartial(ch)
	}
	ch := bc.partial[len(bc.partial)-1]
	var v *value
	if last := len(ch.free) - 1; last >= 0 {
		v = ch.free[last]
		ch.free[last] = nil // an allocated buffer is reachable from its holders only
		ch.free = ch.free[:last]
	} else {
		v = ch.newValue(ch.carved)
		ch.carved++
	}
	if !ch.available() {
		bc.removePartial(ch)
	}
	return v
}

// newChunk maps a chunk of class c, every buffer free and none carved.
func newChunk(bc *bufClass, c int) *bufChunk {
	size := classSize(c)
	return &bufChunk{mem: offheap.New(max(chunkBytes, size)), class: bc, size: size, n: max(1, chunkBytes/size), at: -1}
}

// newValue makes the value that owns buffer i of the chunk, with the
// safety net that gives the buffer back if the value is collected while
// allocated.
func (ch *bufChunk) newValue(i int) *value {
	lo, hi := i*ch.size, (i+1)*ch.size
	v := &value{buf: ch.mem.Bytes()[lo:hi:hi], chunk: ch}
	v.net = runtime.AddCleanup(v, reclaim, slot{ch, i})
	return v
}

// slot is what the safety net needs to give a collected value's buffer
// back: everything but the value, which it must not keep reachable.
type slot struct {
	ch *bufChunk
	i  int
}

// reclaim is the safety net: a fresh value takes the collected one's
// buffer, and is freed.
func reclaim(s slot) {
	leakedBuffers.Add(1)
	bc := s.ch.class
	bc.mu.Lock()
	defer bc.mu.Unlock()
	bc.freeLocked(s.ch.newValue(s.i))
}

// freeBuffer returns v's buffer to its chunk.
func freeBuffer(v *value) {
	bc := v.chunk.class
	bc.mu.Lock()
	bc.freeLocked(v)
	bc.mu.Unlock()
}

// freeLocked returns v to its chunk, and frees the chunk if that left it
// wholly free and the class has its spare. REQUIRES: bc.mu held.
func (bc *bufClass) freeLocked(v *value) {
	ch := v.chunk
	wasFull := !ch.available()
	ch.free = append(ch.free, v)
	if wasFull {
		bc.addPartial(ch)
	}
	if len(ch.free) < ch.carved {
		return
	}
	bc.removePartial(ch)
	if bc.spare == nil && ch.n > 1 { // one buffer's own mapping is as cheap to map again
		bc.spare = ch
		spareBytes.Add(int64(len(ch.mem.Bytes())))
		return
	}
	for _, v := range ch.free {
		v.net.Stop()
	}
	ch.mem.Release()
}

// addPartial and removePartial keep bc.partial and each chunk's place in
// it. REQUIRES: bc.mu held.
func (bc *bufClass) addPartial(ch *bufChunk) {
	ch.at = len(bc.partial)
	bc.partial = append(bc.partial, ch)
}

func (bc *bufClass) removePartial(ch *bufChunk) {
	last := bc.partial[len(bc.partial)-1]
	bc.partial[ch.at] = last
	last.at = ch.at
	bc.partial = bc.partial[:len(bc.partial)-1]
	ch.at = -1
}
