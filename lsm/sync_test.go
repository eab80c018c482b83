package lsm

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/monbandb/monban/vfs"
)

// TestWriteOptionsSync: a write made with Sync survives a machine crash
// whatever Options.Sync says; one made with NoSync, and nothing synced
// after it, does not, also under Options.Sync (the per-write option wins).
func TestWriteOptionsSync(t *testing.T) {
	for _, dbSync := range []bool{false, true} {
		t.Run(fmt.Sprintf("Options.Sync=%v", dbSync), func(t *testing.T) {
			fs := vfs.NewMem()
			d := openMem(t, fs, &Options{Sync: dbSync})
			if err := d.Put([]byte("synced"), []byte("1"), Sync); err != nil {
				t.Fatal(err)
			}
			var b Batch
			b.Put([]byte("batch"), []byte("2"))
			b.Delete([]byte("never"))
			if err := d.Write(&b, Sync); err != nil {
				t.Fatal(err)
			}
			if err := d.Put([]byte("unsynced"), []byte("3"), NoSync); err != nil {
				t.Fatal(err)
			}
			if err := d.Delete([]byte("synced"), NoSync); err != nil {
				t.Fatal(err)
			}
			crashed := fs.CrashClone()
			d.Close()
			d = openMem(t, crashed, nil)
			defer d.Close()
			mustGet(t, d, "synced", "1") // its NoSync delete went down with the crash
			mustGet(t, d, "batch", "2")
			mustGet(t, d, "unsynced", "")
		})
	}
}

// syncGateFS holds every WAL Sync until the test lets it go, while armed.
type syncGateFS struct {
	vfs.FS
	armed   atomic.Bool
	entered chan struct{} // a Sync is waiting
	release chan struct{}
}

func (g *syncGateFS) Create(name string) (vfs.File, error) {
	f, err := g.FS.Create(name)
	if err != nil || len(name) < 4 || name[len(name)-4:] != ".log" {
		return f, err
	}
	return gatedFile{File: f, g: g}, nil
}

type gatedFile struct {
	vfs.File
	g *syncGateFS
}

func (f gatedFile) Sync() error {
	if f.g.armed.Load() {
		f.g.entered <- struct{}{}
		<-f.g.release
	}
	return f.File.Sync()
}

// TestNoSyncDoesNotWaitForTheGroupsFsync: a NoSync write committed in the
// same group as a Sync write returns — its write visible — while that
// group's fsync is still running; the Sync write returns only after it.
// In either order in the queue: a NoSync write at its head led the group,
// made its fsync, and returned after it, with its error (a black-box
// attack found it).
func TestNoSyncDoesNotWaitForTheGroupsFsync(t *testing.T) {
	for _, syncFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("Sync queued first %v", syncFirst), func(t *testing.T) {
			g := &syncGateFS{FS: vfs.NewMem(), entered: make(chan struct{}), release: make(chan struct{})}
			d := openMem(t, g, nil)
			defer d.Close()
			g.armed.Store(true)
			defer func() { // before Close, which syncs; and frees a Sync a failure left waiting
				g.armed.Store(false)
				close(g.release)
			}()

			// The first Sync write holds the queue in its fsync, so the
			// two writes after it queue up behind it.
			first := make(chan error, 1)
			go func() { first <- d.Put([]byte("first"), []byte("1"), Sync) }()
			<-g.entered
			synced, unsynced := make(chan error, 1), make(chan error, 1)
			putSynced := func() { synced <- d.Put([]byte("synced"), []byte("2"), Sync) }
			putUnsynced := func() { unsynced <- d.Put([]byte("unsynced"), []byte("3"), NoSync) }
			if !syncFirst {
				putSynced, putUnsynced = putUnsynced, putSynced
			}
			go putSynced()
			waitQueued(t, d, 2)
			go putUnsynced()
			waitQueued(t, d, 3)
			g.release <- struct{}{} // the first fsync ends; the two writes commit
			if err := <-first; err != nil {
				t.Fatal(err)
			}
			<-g.entered // the Sync write's fsync is running
			select {
			case err := <-unsynced:
				if err != nil {
					t.Fatal(err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the NoSync write waited for the fsync of the Sync write it was committed with")
			}
			mustGet(t, d, "unsynced", "3")
			select {
			case err := <-synced:
				t.Fatalf("the Sync write returned (%v) before its fsync did", err)
			case <-time.After(10 * time.Millisecond):
			}
			mustGet(t, d, "synced", "") // not published before it is durable
			g.release <- struct{}{}
			if err := <-synced; err != nil {
				t.Fatal(err)
			}
			mustGet(t, d, "synced", "2")
			if s := d.Stats(); s.WALSyncs != 2 || s.Commits != 3 {
				t.Fatalf("Stats: %d WAL syncs for %d commits, want 2 for 3", s.WALSyncs, s.Commits)
			}
		})
	}
}

// waitQueued waits until n writers are in the commit queue.
func waitQueued(t *testing.T, d *DB, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Microsecond) {
		d.mu.Lock()
		queued := len(d.mu.writers)
		d.mu.Unlock()
		if queued >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writers queued after 10 s, want %d", queued, n)
		}
	}
}

// TestSyncedWritersShareFsyncs: concurrent Sync writers are all durable,
// and never cost more than one fsync per commit (how many fewer is the
// benchmark's to measure).
func TestSyncedWritersShareFsyncs(t *testing.T) {
	fs := vfs.NewMem()
	d := openMem(t, fs, nil)
	const writers, each = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				errs <- d.Put(fmt.Appendf(nil, "w%d-%03d", w, i), []byte("v"), Sync)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	s := d.Stats()
	crashed := fs.CrashClone()
	d.Close()
	if s.Commits != writers*each || s.WALSyncs == 0 || s.WALSyncs > s.Commits {
		t.Fatalf("Stats: %d commits, %d WAL syncs; want %d commits and 1..%d syncs", s.Commits, s.WALSyncs, writers*each, writers*each)
	}
	d = openMem(t, crashed, nil)
	defer d.Close()
	for w := range writers {
		for i := range each {
			mustGet(t, d, fmt.Sprintf("w%d-%03d", w, i), "v")
		}
	}
	if err := d.Put([]byte("k"), []byte("v"), nil); err != nil {
		t.Fatalf("Put with nil WriteOptions: %v", err)
	}
	if err := d.Put([]byte("k"), []byte("v"), Sync, NoSync); !errors.Is(err, ErrInvalidOptions) {
		t.Fatalf("Put with two WriteOptions: %v, want ErrInvalidOptions", err)
	}
}

// TestGroupWaitsForTheWritersItsFsyncReleased: the writers that queue
// during one fsync do not start the next while the writers it released
// are queuing again, so one fsync covers both (awaitReturning). Without
// the wait, N concurrent Sync writers alternate in groups of N/2.
func TestGroupWaitsForTheWritersItsFsyncReleased(t *testing.T) {
	g := &syncGateFS{FS: vfs.NewMem(), entered: make(chan struct{}), release: make(chan struct{})}
	d := openMem(t, g, nil)
	defer d.Close()
	g.armed.Store(true)
	defer func() {
		if g.armed.Swap(false) {
			close(g.release)
		}
	}()
	put := func(key string) chan error {
		done := make(chan error, 1)
		go func() { done <- d.Put([]byte(key), []byte("v"), Sync) }()
		return done
	}

	first := put("a1")
	<-g.entered
	b, c := put("b"), put("c")
	waitQueued(t, d, 3)
	// A long first fsync: the wait it allows (a quarter of it) is far
	// longer than a returning writer needs to queue, however loaded the
	// machine.
	time.Sleep(400 * time.Millisecond)
	g.release <- struct{}{}
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	// The released writer comes back after a moment, well within the
	// wait, in which b would otherwise have started its group's fsync.
	time.Sleep(20 * time.Millisecond)
	second := put("a2")
	<-g.entered // one fsync for b, c and a2
	g.armed.Store(false)
	g.release <- struct{}{}
	for _, done := range []chan error{b, c, second} {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if s := d.Stats(); s.WALSyncs != 2 || s.Commits != 4 {
		t.Fatalf("Stats: %d WAL syncs for %d commits, want 2 for 4: the group did not wait for the writer the first fsync released", s.WALSyncs, s.Commits)
	}
}
