package lsm

import (
	"errors"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/monbandb/monban/compaction"
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

// TestIntraL0BesideACompactionIntoTheBase holds a compaction of L0 into the
// base level in its CompactionBegin, flushes more tables over the same
// keys — overwrites, deletes of keys the held tables hold, and a snapshot
// between them — and checks that L0 merges into itself meanwhile, keeping
// the tombstones (the held, older tables still hold what they delete) and
// what the snapshot needs. Then every read, with and without the
// snapshot, matches a model, before and after the held compaction ends.
func TestIntraL0BesideACompactionIntoTheBase(t *testing.T) {
	release := make(chan struct{})
	held, intra := make(chan struct{}, 1), make(chan struct{}, 16)
	var holding atomic.Bool
	var flushed atomic.Uint64
	l := &EventListener{
		CompactionBegin: func(c CompactionInfo) {
			if c.Kind == compaction.KindL0 && holding.CompareAndSwap(false, true) {
				held <- struct{}{}
				<-release
			}
		},
		CompactionEnd: func(c CompactionInfo) {
			if c.Kind == compaction.KindIntraL0 {
				intra <- struct{}{}
			}
		},
		FlushEnd: func(f FlushInfo) {
			for _, o := range f.Output {
				flushed.Add(o.Size)
			}
		},
	}
	d := openMem(t, vfs.NewMem(), &Options{EventListener: l, L0CompactionThreshold: 2, MaxConcurrentCompactions: 2})
	var once sync.Once
	letGo := func() { once.Do(func() { close(release) }) }
	defer d.Close()
	defer letGo() // before Close, which waits for the held compaction
	model := map[string]string{}
	round := func(r int, del func(i int) bool) {
		for i := range 200 {
			k := fmt.Sprintf("k%03d", i)
			if del(i) {
				if err := d.Delete([]byte(k)); err != nil {
					t.Fatal(err)
				}
				delete(model, k)
				continue
			}
			v := fmt.Sprintf("v%d-%d", r, i)
			if err := d.Put([]byte(k), []byte(v)); err != nil {
				t.Fatal(err)
			}
			model[k] = v
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	never := func(int) bool { return false }
	round(0, never)
	round(1, never)
	<-held // L0 → base of rounds 0 and 1
	round(2, func(i int) bool { return i%3 == 0 })
	snap := d.NewSnapshot()
	defer snap.Close()
	atSnap := maps.Clone(model)
	round(3, func(i int) bool { return i%5 == 0 })
	round(4, never)
	round(5, func(i int) bool { return i%7 == 0 })
	<-intra
	check := func(when string) {
		t.Helper()
		for i := range 200 {
			k := fmt.Sprintf("k%03d", i)
			for _, r := range []struct {
				name string
				m    map[string]string
				get  func([]byte) ([]byte, error)
			}{{"DB", model, d.Get}, {"snapshot", atSnap, snap.Get}} {
				v, err := r.get([]byte(k))
				want, ok := r.m[k]
				if ok && (err != nil || string(v) != want) || !ok && !errors.Is(err, ErrNotFound) {
					t.Fatalf("%s: %s.Get(%s) = %q, %v; want %q (present %t)", when, r.name, k, v, err, want, ok)
				}
			}
		}
	}
	check("beside the held compaction")
	letGo()
	d.waitIdle()
	check("after it")
	s := d.Stats()
	if s.Compactions.IntraL0 == 0 {
		t.Fatalf("Stats counts no intra-L0 compaction: %+v", s.Compactions)
	}
	// Write amplification is per byte flushed, which an intra-L0
	// compaction's tables, written into L0 too, are not.
	if s.FlushedBytes != flushed.Load() {
		t.Errorf("FlushedBytes %d; the flushes' outputs hold %d", s.FlushedBytes, flushed.Load())
	}
	if want := float64(s.Total.TableBytesWritten) / float64(flushed.Load()); s.WriteAmplification() != want {
		t.Errorf("WriteAmplification %.3f; %d bytes written over %d flushed is %.3f", s.WriteAmplification(), s.Total.TableBytesWritten, flushed.Load(), want)
	}
}
