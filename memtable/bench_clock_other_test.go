//go:build !linux

package memtable

import "time"

// threadCPU falls back to wall-clock time where no thread CPU clock is
// wired up.
func threadCPU() time.Duration { return time.Duration(time.Now().UnixNano()) }
