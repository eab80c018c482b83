//go:build linux

package cpuclock

import (
	"syscall"
	"time"
	"unsafe"
)

// Thread returns this thread's CPU time (CLOCK_THREAD_CPUTIME_ID). Callers
// lock the OS thread (runtime.LockOSThread) around what they measure.
func Thread() time.Duration { return clock(3) }

// Process returns the CPU time of all the process's threads
// (CLOCK_PROCESS_CPUTIME_ID): the measure for work split between
// goroutines, which Thread sees only its own share of.
func Process() time.Duration { return clock(2) }

// clock reads the clock_gettime clock id.
func clock(id uintptr) time.Duration {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, id, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return time.Duration(time.Now().UnixNano())
	}
	return time.Duration(ts.Nano())
}
