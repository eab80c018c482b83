package offheap

import (
	"sync"
	"syscall"
)

// spare holds mappings of ChunkSize that freed Buffers gave back, for
// the next New of that size: a memtable's arena takes its bytes in chunks
// of that size, one memtable after another, and mapping each afresh cost
// bench/peers' 1M-key fill 5–10% more CPU (a system call and sixteen page
// faults per chunk). At most maxSpare wait; the rest go back to the
// system. Race builds keep none (invariant 3).
var spare spareStack

const maxSpare = 64 // 4 MiB: one default memtable's worth

// spareStack is a bounded stack of ChunkSize mappings.
type spareStack struct {
	sync.Mutex
	maps [][]byte
}

// take pops the most recently put mapping, cleared (invariant 2), or
// returns nil when there is none.
func (s *spareStack) take() []byte {
	s.Lock()
	k := len(s.maps)
	if k == 0 {
		s.Unlock()
		return nil
	}
	m := s.maps[k-1]
	s.maps = s.maps[:k-1]
	s.Unlock()
	clear(m)
	return m
}

// put keeps m for a later take, unless maxSpare wait already.
func (s *spareStack) put(m []byte) bool {
	s.Lock()
	defer s.Unlock()
	if len(s.maps) >= maxSpare {
		return false
	}
	s.maps = append(s.maps, m)
	return true
}

// mapAnon maps n bytes (rounded up to whole pages) of private anonymous
// memory, zeroed.
func mapAnon(n int) ([]byte, error) {
	if n == ChunkSize && !invariants {
		if m := spare.take(); m != nil {
			return m, nil
		}
	}
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

// free returns a freed Buffer's mapping: it keeps a spare chunk, or
// returns the pages to the system or, in race builds, makes them
// inaccessible for good (invariant 3). An error leaves the mapping where
// it is: it can only mean m is not a mapping of ours, and the safety net,
// a cleanup, could not report it anyway.
func free(m []byte) {
	if invariants {
		_ = syscall.Madvise(m, syscall.MADV_DONTNEED)
		_ = syscall.Mprotect(m, syscall.PROT_NONE)
		return
	}
	if len(m) == ChunkSize && spare.put(m) {
		return
	}
	_ = syscall.Munmap(m)
}
