//go:build !linux

package cpuclock

import "time"

// Thread falls back to wall-clock time where no thread CPU clock is read.
func Thread() time.Duration { return time.Duration(time.Now().UnixNano()) }

// Process falls back to wall-clock time where no process CPU clock is read.
func Process() time.Duration { return time.Duration(time.Now().UnixNano()) }
