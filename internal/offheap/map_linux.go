package offheap

import (
	"sync"
	"sync/atomic"
	"syscall"
)

// unmapped counts the mappings cleanups have returned (tests watch it).
var unmapped atomic.Uint64

// spare holds mappings of ChunkSize that collected Buffers gave back, for
// the next New of that size: a memtable's arena takes its bytes in chunks
// of that size, one memtable after another, and mapping each afresh cost
// bench/peers' 1M-key fill 5–10% more CPU (a system call and sixteen page
// faults per chunk). At most maxSpare wait; the rest go back to the
// system. Race builds keep none (invariant 3).
var spare struct {
	sync.Mutex
	maps [][]byte
}

const maxSpare = 64 // 4 MiB: one default memtable's worth

// mapAnon maps n bytes (rounded up to whole pages) of private anonymous
// memory, zeroed.
func mapAnon(n int) ([]byte, error) {
	if n == ChunkSize && !invariants {
		spare.Lock()
		if k := len(spare.maps); k > 0 {
			m := spare.maps[k-1]
			spare.maps = spare.maps[:k-1]
			spare.Unlock()
			clear(m)
			return m, nil
		}
		spare.Unlock()
	}
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

// unmap is a collected Buffer's cleanup: it keeps a spare chunk, or
// returns the pages to the system or, in race builds, makes them
// inaccessible for good (invariant 3). An error leaves the mapping where
// it is: nothing else can be done from a cleanup, and it can only mean m
// is not a mapping of ours.
func unmap(m []byte) {
	unmapped.Add(1)
	if invariants {
		_ = syscall.Madvise(m, syscall.MADV_DONTNEED)
		_ = syscall.Mprotect(m, syscall.PROT_NONE)
		return
	}
	if len(m) == ChunkSize {
		spare.Lock()
		if len(spare.maps) < maxSpare {
			spare.maps = append(spare.maps, m)
			spare.Unlock()
			return
		}
		spare.Unlock()
	}
	_ = syscall.Munmap(m)
}
