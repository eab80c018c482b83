package keyspan

import (
	"math/rand/v2"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestSetConcurrentReaders: while one writer adds tombstones, readers
// always see the fragments of exactly some prefix of what was added — at
// least every tombstone Len counted before the call, at most those it
// counts after — never a half-built view. Run it under -race.
func TestSetConcurrentReaders(t *testing.T) {
	seeded(t, func(t *testing.T, rng *rand.Rand) {
		var all model
		for len(all) < 200 {
			all = append(all, randTombstones(rng)...)
		}
		all = all[:200]
		prefixes := make([]Spans, len(all)+1) // prefixes[n]: the fragments of all[:n]
		for n := range prefixes {
			prefixes[n] = Fragment(all[:n])
		}

		var s Set
		var done atomic.Bool
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for !done.Load() {
					before := s.Len()
					got := s.Spans()
					after := s.Len()
					n := before
					for n <= after && !equalSpans(got, prefixes[n]) {
						n++
					}
					if n > after {
						t.Errorf("Spans() = %v is no prefix of %d..%d tombstones", got.spans, before, after)
						return
					}
				}
			})
		}
		var size int64
		for i, ts := range all {
			buf := append(append([]byte(nil), ts.Start...), ts.End...)
			s.Add(Tombstone{Start: buf[:len(ts.Start)], End: buf[len(ts.Start):], Seq: ts.Seq})
			clear(buf)        // Add copied the keys
			runtime.Gosched() // let the readers in between Adds
			size += int64(len(ts.Start)+len(ts.End)) + tombstoneOverhead
			if s.Len() != i+1 || s.Size() != size {
				t.Fatalf("after %d Adds: Len %d, Size %d; want %d, %d", i+1, s.Len(), s.Size(), i+1, size)
			}
		}
		done.Store(true)
		wg.Wait()
		if got := s.Spans(); !equalSpans(got, prefixes[len(all)]) {
			t.Fatalf("final Spans() = %v, want %v", got.spans, prefixes[len(all)].spans)
		}
	})
}

// TestSetReadsAreFree: an empty Set's Spans, and a built one's, allocate
// nothing: no read builds anything twice.
func TestSetReadsAreFree(t *testing.T) {
	var s Set
	if n := testing.AllocsPerRun(100, func() { _ = s.Spans() }); n != 0 || s.Spans().Len() != 0 || s.Len() != 0 || s.Size() != 0 {
		t.Fatalf("empty Set: %v allocs per Spans, Len %d, Size %d", n, s.Len(), s.Size())
	}
	s.Add(Tombstone{Start: []byte("a"), End: []byte("b"), Seq: 1})
	s.Spans()
	if n := testing.AllocsPerRun(100, func() { _ = s.Spans() }); n != 0 {
		t.Fatalf("built Set: %v allocs per Spans", n)
	}
}

// TestSetFirstReaders: many readers asking at once for a version nobody
// has built yet all get it whole. Run it under -race: the build is a write
// the others must be ordered after.
func TestSetFirstReaders(t *testing.T) {
	seeded(t, func(t *testing.T, rng *rand.Rand) {
		var s Set
		var added model
		for range 50 {
			ts := randTombstones(rng)
			if len(ts) == 0 {
				continue
			}
			s.Add(ts[0])
			added = append(added, ts[0])
			want := Fragment(added)

			start := make(chan struct{})
			var wg sync.WaitGroup
			for range 8 {
				wg.Go(func() {
					<-start
					if got := s.Spans(); !equalSpans(got, want) {
						t.Errorf("Spans() = %v, want %v", got.spans, want.spans)
					}
				})
			}
			close(start)
			wg.Wait()
		}
	})
}
