//go:build linux

package memtable

import (
	"syscall"
	"time"
	"unsafe"
)

// threadCPU is this thread's CPU time (CLOCK_THREAD_CPUTIME_ID). On a
// machine shared with other jobs, wall-clock time also counts the moments
// the thread was descheduled; CPU time does not. Callers lock the OS
// thread.
func threadCPU() time.Duration {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return time.Duration(time.Now().UnixNano())
	}
	return time.Duration(ts.Nano())
}
