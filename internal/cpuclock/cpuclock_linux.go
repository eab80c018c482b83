//go:build linux

package cpuclock

import (
	"syscall"
	"time"
	"unsafe"
)

// Thread returns this thread's CPU time (CLOCK_THREAD_CPUTIME_ID). Callers
// lock the OS thread (runtime.LockOSThread) around what they measure.
func Thread() time.Duration {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		return time.Duration(time.Now().UnixNano())
	}
	return time.Duration(ts.Nano())
}
