package lsm

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestCompactionsRunSideBySide holds one L0 compaction (of keys a…) in its
// CompactionBegin and checks that a second one, of the disjoint keys b…,
// starts beside it — and that with MaxConcurrentCompactions 1 it does not.
// Afterwards every key reads back and no install was refused.
func TestCompactionsRunSideBySide(t *testing.T) {
	for _, maxConcurrent := range []int{1, 2} {
		t.Run(fmt.Sprint(maxConcurrent), func(t *testing.T) {
			var running, most atomic.Int32
			release := make(chan struct{})
			begun := make(chan struct{}, 8)
			l := &EventListener{
				CompactionBegin: func(CompactionInfo) {
					n := running.Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					begun <- struct{}{}
					<-release
				},
				CompactionEnd: func(CompactionInfo) { running.Add(-1) },
			}
			d := openMem(t, vfs.NewMem(), &Options{EventListener: l, L0CompactionThreshold: 2, MaxConcurrentCompactions: maxConcurrent})
			defer d.Close()
			write := func(prefix string, round int) {
				for i := range 100 {
					if err := d.Put(fmt.Appendf(nil, "%s%03d", prefix, i), fmt.Appendf(nil, "%s%d", prefix, round)); err != nil {
						t.Fatal(err)
					}
				}
				if err := d.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			write("a", 0)
			write("a", 1)
			<-begun // the L0 compaction of the a… tables, held
			write("b", 0)
			write("b", 1)
			d.mu.Lock()
			d.maybeScheduleCompaction() // Flush already did; idempotent
			got := len(d.mu.compactions)
			d.mu.Unlock()
			if got != maxConcurrent {
				t.Fatalf("%d compactions registered with the first held; want %d", got, maxConcurrent)
			}
			if maxConcurrent > 1 {
				<-begun
			}
			close(release)
			d.waitIdle()
			if m := most.Load(); int(m) != maxConcurrent {
				t.Fatalf("at most %d compactions ran at once; want %d", m, maxConcurrent)
			}
			for _, prefix := range []string{"a", "b"} {
				for i := range 100 {
					v, err := d.Get(fmt.Appendf(nil, "%s%03d", prefix, i))
					if err != nil || string(v) != prefix+"1" {
						t.Fatalf("%s%03d = %q, %v; want %q", prefix, i, v, err, prefix+"1")
					}
				}
			}
			// A version whose levels overlap is refused when it is built
			// (manifest invariant 2), which would be a background error.
			if s := d.Stats(); s.CompactionsRunning != 0 || s.BackgroundError != nil {
				t.Fatalf("after the compactions: %d running, background error %v", s.CompactionsRunning, s.BackgroundError)
			}
		})
	}
}
