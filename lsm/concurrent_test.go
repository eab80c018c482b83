package lsm

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/monbandb/monban/vfs"
)

// TestConcurrentReadersSeeCommitPrefixes runs writers, readers, iterators
// and flushes at once (tiny memtables: flushes and compactions run all the
// time). Each writer's puts are acknowledged in order, and a batch writes
// a pair of keys, so every read view must hold, per writer, a gap-free
// prefix of its keys, and every pair whole or not at all.
func TestConcurrentReadersSeeCommitPrefixes(t *testing.T) {
	const writers, perWriter = 3, 400
	d := openMem(t, vfs.NewMem(), &Options{
		MemtableSize: 8 << 10, TargetFileSize: 8 << 10, LBaseMaxBytes: 32 << 10, L0CompactionThreshold: 2,
	})
	defer d.Close()
	var done atomic.Bool
	var wg, readers sync.WaitGroup
	errs := make(chan error, 16)
	fail := func(format string, args ...any) {
		select {
		case errs <- fmt.Errorf(format, args...):
		default:
		}
	}
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perWriter {
				if i%10 == 9 {
					var b Batch
					b.Put(fmt.Appendf(nil, "pair-a-%d-%06d", w, i), []byte("x"))
					b.Put(fmt.Appendf(nil, "pair-b-%d-%06d", w, i), []byte("x"))
					if err := d.Write(&b); err != nil {
						fail("writer %d: %v", w, err)
						return
					}
				}
				if err := d.Put(fmt.Appendf(nil, "w%d-%06d", w, i), []byte("v")); err != nil {
					fail("writer %d: %v", w, err)
					return
				}
			}
		}()
	}
	checkView := func(r reader) {
		for w := range writers {
			it := r.NewIter(&IterOptions{LowerBound: fmt.Appendf(nil, "w%d-", w), UpperBound: fmt.Appendf(nil, "w%d.", w)})
			n := 0
			for k := range it.All() {
				if want := fmt.Sprintf("w%d-%06d", w, n); string(k) != want {
					fail("view holds %q where the prefix needs %q: a gap", k, want)
					break
				}
				n++
			}
			if err := it.Close(); err != nil {
				fail("iterator: %v", err)
			}
		}
		it := r.NewIter(&IterOptions{LowerBound: []byte("pair-"), UpperBound: []byte("pair.")})
		var a, b int
		for k := range it.All() {
			if k[5] == 'a' {
				a++
			} else {
				b++
			}
		}
		if err := it.Close(); err != nil {
			fail("iterator: %v", err)
		}
		if a != b {
			fail("view holds %d pair-a keys and %d pair-b keys: a torn batch", a, b)
		}
	}
	for range 2 {
		readers.Add(1)
		go func() {
			defer readers.Done()
			for !done.Load() {
				s := d.NewSnapshot()
				checkView(s)
				s.Close()
				checkView(d)
				// Visibility is monotonic: once a key is seen, it stays.
				for w := range writers {
					for i := perWriter - 1; i >= 0; i -= 97 {
						k := fmt.Appendf(nil, "w%d-%06d", w, i)
						if _, err := d.Get(k); err == nil {
							if _, err := d.Get(fmt.Appendf(nil, "w%d-%06d", w, i/2)); err != nil {
								fail("saw %s but not the earlier w%d-%06d: %v", k, w, i/2, err)
							}
							break
						}
					}
				}
			}
		}()
	}
	readers.Add(1)
	go func() {
		defer readers.Done()
		for !done.Load() {
			if err := d.Flush(); err != nil {
				fail("flush: %v", err)
			}
			time.Sleep(time.Millisecond) // let writers fill the memtable a little
		}
	}()
	wg.Wait()
	done.Store(true)
	readers.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	checkView(d)
	st := d.Stats()
	t.Logf("%d flushes, compactions %+v, files per level %v", st.Flushes, st.Compactions, levelFiles(st))
}
