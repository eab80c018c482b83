package lsm

import (
	"fmt"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestWritesWaitAtTheStopThresholds: with L0 at L0StopWritesThreshold, or
// three memtables waiting for their flush, a commit waits until a
// compaction or flush catches up (docs/write-path.md), though the active
// memtable has room. It went on, not even slowed: the check for room came
// first, and the slowdown stops short of the stop threshold (a black-box
// attack). Compactions, or flushes, are held in their Begin callback, so
// the commit either stalls, which WriteStallBegin reports, or returns.
func TestWritesWaitAtTheStopThresholds(t *testing.T) {
	for _, held := range []string{"compaction", "flush"} {
		t.Run(held, func(t *testing.T) {
			gate, stalled := make(chan struct{}), make(chan WriteStallInfo, 1)
			hold := func() { <-gate }
			ev := &EventListener{WriteStallBegin: func(i WriteStallInfo) { stalled <- i }}
			o := &Options{FS: vfs.NewMem(), EventListener: ev}
			if held == "compaction" {
				o.L0CompactionThreshold, o.L0SlowdownWritesThreshold, o.L0StopWritesThreshold = 2, 4, 6
				ev.CompactionBegin = func(CompactionInfo) { hold() }
			} else {
				o.MemtableSize = 32 << 10
				ev.FlushBegin = func(FlushInfo) { hold() }
			}
			d := openMem(t, o.FS, o)
			released := false
			defer func() {
				if !released {
					close(gate)
				}
				d.Close()
			}()
			if held == "compaction" {
				for n := range o.L0StopWritesThreshold {
					if err := d.Put(fmt.Appendf(nil, "k%d", n), []byte("v")); err != nil {
						t.Fatal(err)
					}
					if err := d.Flush(); err != nil {
						t.Fatal(err)
					}
				}
				if l0 := d.Stats().Levels[0].Files; l0 != o.L0StopWritesThreshold {
					t.Fatalf("L0 holds %d tables, want %d", l0, o.L0StopWritesThreshold)
				}
			} else {
				for i := 0; d.Stats().MemtablesQueued < stopImmutableMemtables; i++ {
					if err := d.Put(fmt.Appendf(nil, "k%06d", i), make([]byte, 1024)); err != nil {
						t.Fatal(err)
					}
				}
			}
			done := make(chan error, 1)
			go func() { done <- d.Put([]byte("after"), []byte("v")) }()
			select {
			case err := <-done:
				t.Fatalf("a Put at the stop threshold returned (%v) while the %s was held", err, held)
			case info := <-stalled:
				t.Logf("stalled: %s", info.Reason)
			}
			close(gate)
			released = true
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if s := d.Stats(); s.Stalls != 1 {
				t.Errorf("Stats.Stalls = %d, want 1", s.Stalls)
			}
		})
	}
}
