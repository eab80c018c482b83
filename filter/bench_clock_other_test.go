//go:build !linux

package filter

import "time"

// threadCPU falls back to the wall clock where the thread CPU clock is not
// wired up.
func threadCPU() time.Duration { return time.Duration(time.Now().UnixNano()) }
