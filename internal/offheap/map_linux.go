package offheap

import (
	"sync/atomic"
	"syscall"
)

// unmapped counts the mappings cleanups have returned (tests watch it).
var unmapped atomic.Uint64

// mapAnon maps n bytes (rounded up to whole pages) of private anonymous
// memory.
func mapAnon(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

// unmap is a collected Buffer's cleanup: it returns the pages to the
// system or, in race builds, makes them inaccessible for good (invariant
// 3). An error leaves the mapping where it is: nothing else can be done
// from a cleanup, and it can only mean m is not a mapping of ours.
func unmap(m []byte) {
	unmapped.Add(1)
	if invariants {
		_ = syscall.Madvise(m, syscall.MADV_DONTNEED)
		_ = syscall.Mprotect(m, syscall.PROT_NONE)
		return
	}
	_ = syscall.Munmap(m)
}
