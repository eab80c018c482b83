package lsm

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/monbandb/monban/vfs"
)

// TestCloseRacesEverything closes a DB while goroutines put, get, iterate,
// take snapshots, flush and compact, in a loop: nothing panics, every call
// that fails after Close fails with ErrClosed (iterators and snapshots made
// before it too), nothing changes the directory once Close has returned,
// and a reopen
// of the same directory right away holds every acknowledged write.
func TestCloseRacesEverything(t *testing.T) {
	rounds := 8
	if testing.Short() {
		rounds = 4
	}
	seed := modelSeed(t)
	for round := range rounds {
		rng := rand.New(rand.NewPCG(seed, uint64(round)))
		fs := vfs.NewFault(vfs.NewMem())
		opts := &Options{MemtableSize: 4 << 10, TargetFileSize: 4 << 10, LBaseMaxBytes: 16 << 10, L0CompactionThreshold: 2}
		d := openMem(t, fs, opts)
		const writers, keysPerWriter = 3, 40
		// acked[w][k] is the last value writer w had acknowledged for key
		// k; inflight[w][k] the value of a put that had not returned when
		// Close came (it may or may not have landed).
		var acked, inflight [writers][keysPerWriter]int
		var closed atomic.Bool // set once Close has returned
		var puts atomic.Int64
		var wg sync.WaitGroup
		errc := make(chan error, 64)
		report := func(what string, err error) {
			if err != nil && !errors.Is(err, ErrClosed) && !errors.Is(err, ErrNotFound) {
				select {
				case errc <- fmt.Errorf("%s: %w", what, err):
				default:
				}
			}
		}
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 1; ; i++ {
					k := i % keysPerWriter
					inflight[w][k] = i
					err := d.Put(fmt.Appendf(nil, "w%d-%03d", w, k), fmt.Appendf(nil, "%d", i))
					if err != nil {
						report("Put", err)
						return
					}
					acked[w][k] = i
					puts.Add(1)
				}
			}()
		}
		readers := []func() error{
			func() error { _, err := d.Get([]byte("w0-001")); return err },
			func() error {
				it := d.NewIter(nil)
				for range it.All() {
				}
				return it.Close()
			},
			func() error {
				s := d.NewSnapshot()
				_, err := s.Get([]byte("w1-002"))
				it := s.NewIter(nil)
				for range it.All() {
				}
				return errors.Join(err, it.Close(), s.Close())
			},
			d.Flush,
			d.Compact,
			func() error { return d.CompactRange([]byte("w1"), []byte("w2")) },
		}
		for i, op := range readers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !closed.Load() {
					report(fmt.Sprintf("op %d", i), op())
				}
				// Once closed, each call reports ErrClosed.
				if err := op(); !errors.Is(err, ErrClosed) {
					report(fmt.Sprintf("op %d after Close (want ErrClosed)", i), errors.Join(err, errors.New("no ErrClosed")))
				}
			}()
		}
		// An iterator and a snapshot from before Close.
		oldIter, oldSnap := d.NewIter(nil), d.NewSnapshot()
		// Close at a random point of the work, flushes and compactions
		// included.
		for target := int64(rng.IntN(1000) + 50); puts.Load() < target; {
			if _, err := d.Get([]byte("w2-003")); err != nil && !errors.Is(err, ErrNotFound) {
				t.Fatal(err)
			}
		}
		t0 := time.Now()
		if err := d.Close(); err != nil {
			t.Fatalf("round %d: Close: %v", round, err)
		}
		t.Logf("round %d: %d puts, close %v", round, puts.Load(), time.Since(t0))
		closed.Store(true)
		// Reads still in flight may read and close their table files; nothing
		// may change the directory.
		var touched atomic.Value
		fs.SetTrace(func(_ int64, op vfs.Op, name string, _ error) {
			switch op {
			case vfs.OpOpen, vfs.OpRead, vfs.OpSize, vfs.OpClose, vfs.OpList:
			default:
				touched.CompareAndSwap(nil, fmt.Sprintf("%v %s", op, name))
			}
		})
		wg.Wait()
		fs.SetTrace(nil)
		if op := touched.Load(); op != nil {
			t.Fatalf("round %d: file system used after Close returned: %v", round, op)
		}
		close(errc)
		for err := range errc {
			t.Fatalf("round %d: %v", round, err)
		}
		if oldIter.First() || !errors.Is(oldIter.Err(), ErrClosed) {
			t.Fatalf("round %d: iterator from before Close: First, Error = %v; want ErrClosed", round, oldIter.Err())
		}
		if err := oldIter.Close(); !errors.Is(err, ErrClosed) {
			t.Fatalf("round %d: closing an iterator from before Close: %v; want ErrClosed", round, err)
		}
		if _, err := oldSnap.Get([]byte("w0-001")); !errors.Is(err, ErrClosed) {
			t.Fatalf("round %d: snapshot from before Close: %v; want ErrClosed", round, err)
		}
		oldSnap.Close()

		d = openMem(t, fs, opts)
		for w := range writers {
			for k := range keysPerWriter {
				key := fmt.Sprintf("w%d-%03d", w, k)
				v, err := d.Get([]byte(key))
				var got int
				if err == nil {
					fmt.Sscan(string(v), &got)
				} else if !errors.Is(err, ErrNotFound) {
					t.Fatalf("round %d: Get(%s) after reopen: %v", round, key, err)
				}
				if got != acked[w][k] && got != inflight[w][k] {
					t.Fatalf("round %d: %s = %d after reopen, acknowledged %d (in flight %d)", round, key, got, acked[w][k], inflight[w][k])
				}
			}
		}
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStickyBackgroundError: once a flush fails, the DB is read-only: every
// write returns the error — a Delete the filters prove unnecessary too,
// which writes nothing and would otherwise report success — and Stats
// shows it. A reopen on a healthy disk has every acknowledged write.
func TestStickyBackgroundError(t *testing.T) {
	fs := vfs.NewFault(vfs.NewMem())
	d := openMem(t, fs, nil)
	if err := d.Put([]byte("k"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	fs.FailNth(vfs.OpCreate, 2) // the new WAL succeeds, the flushed table fails
	if err := d.Flush(); err == nil {
		t.Fatal("Flush with table creation failing returned nil")
	}
	bgErr := d.Stats().BackgroundError
	if bgErr == nil {
		t.Fatal("Stats.BackgroundError is nil after a failed flush")
	}
	if err := d.Put([]byte("k2"), []byte("v")); err == nil {
		t.Fatal("Put after a failed flush returned nil")
	}
	if err := d.Delete([]byte("never-written")); err == nil {
		t.Fatal("Delete of an absent key after a failed flush returned nil")
	}
	var b Batch
	if err := d.Write(&b); err == nil {
		t.Fatal("empty Write after a failed flush returned nil")
	}
	mustGet(t, d, "k", "v") // reads go on
	d.Close()
	fs.Heal()
	d = openMem(t, fs, nil)
	defer d.Close()
	mustGet(t, d, "k", "v")
	if err := d.Stats().BackgroundError; err != nil {
		t.Fatalf("after reopen: BackgroundError %v", err)
	}
}
