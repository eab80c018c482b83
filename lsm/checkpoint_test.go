package lsm

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/vfs"
	"github.com/monbandb/monban/wal"
)

// TestCheckpoint: a checkpoint holds exactly the DB's state — keys in
// tables of several levels and keys only in memtables — opens as a DB of
// its own, read-only or not, and does not move when the original does.
func TestCheckpoint(t *testing.T) {
	mem := vfs.NewMem()
	d := openMem(t, mem, &Options{MemtableSize: 4 << 10})
	defer d.Close()
	want := model{}
	for i := range 800 {
		k, v := fmt.Sprintf("k%04d", i%500), fmt.Sprintf("v%d", i)
		if err := d.Put([]byte(k), []byte(v)); err != nil {
			t.Fatal(err)
		}
		want[k] = v
		if i == 300 {
			d.Compact()
		}
		if i%97 == 0 {
			d.Delete([]byte(k))
			delete(want, k)
		}
	}
	if err := d.Checkpoint("/ck"); err != nil {
		t.Fatal(err)
	}
	if err := d.Checkpoint("/ck"); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("checkpoint into a non-empty directory: %v, want fs.ErrExist", err)
	}
	d.Put([]byte("k0001"), []byte("after")) // the checkpoint must not see it
	checkCheckpointWAL(t, mem, "/ck")
	ro, err := Open("/ck", &Options{FS: mem, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := dbContents(t, ro); !maps.Equal(got, want) {
		t.Fatalf("checkpoint read-only:\n%s", diffModels(got, want))
	}
	ro.Close()
	ck, err := Open("/ck", &Options{FS: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	if got := dbContents(t, ck); !maps.Equal(got, want) {
		t.Fatalf("checkpoint:\n%s", diffModels(got, want))
	}
	if err := ck.Put([]byte("own"), []byte("write")); err != nil {
		t.Fatal(err)
	}
	mustGet(t, d, "own", "")
	// A checkpoint is a DB of its own from its first Open: the WALs each
	// writes begin with an identity the other's Open refuses.
	if ck.vs.DBID() == 0 || ck.vs.DBID() == d.vs.DBID() {
		t.Fatalf("checkpoint DB id %016x, the DB's %016x: want one of its own", ck.vs.DBID(), d.vs.DBID())
	}
}

// checkCheckpointWAL: the checkpoint in dir has one WAL, in the format
// the DB writes its WALs in (recyclable, docs/format.md), sealed as a
// clean Close leaves one, and it reads to its seal.
func checkCheckpointWAL(t *testing.T, mem vfs.FS, dir string) {
	t.Helper()
	names, err := mem.List(dir)
	if err != nil {
		t.Fatal(err)
	}
	var logs []uint64
	for _, name := range names {
		if kind, num, ok := manifest.ParseFilename(name); ok && kind == manifest.KindLog {
			logs = append(logs, num)
		}
	}
	if len(logs) != 1 {
		t.Fatalf("checkpoint holds WALs %v, want one", logs)
	}
	f, err := mem.Open(filepath.Join(dir, manifest.MakeFilename(manifest.KindLog, logs[0])))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := wal.NewRecyclableReader(f, "checkpoint WAL", logs[0])
	records := 0
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("checkpoint WAL, after %d records: %v", records, err)
		}
		records++
	}
	if r.Legacy() || !r.Sealed() {
		t.Fatalf("checkpoint WAL: legacy %v, sealed %v; want a recyclable, sealed WAL", r.Legacy(), r.Sealed())
	}
}

// TestCheckpointWhileWriting: checkpoints taken while a writer commits
// batches that keep a and b equal hold one whole batch, at least the last
// one acknowledged before the checkpoint began.
func TestCheckpointWhileWriting(t *testing.T) {
	mem := vfs.NewMem()
	d := openMem(t, mem, &Options{MemtableSize: 4 << 10, L0CompactionThreshold: 2})
	defer d.Close()
	var acked atomic.Int64
	var writerDone atomic.Bool
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer writerDone.Store(true)
		for n := int64(1); ; n++ {
			select {
			case <-stop:
				return
			default:
			}
			var b Batch
			v := []byte(strconv.FormatInt(n, 10))
			b.Put([]byte("a"), v)
			b.Put([]byte("b"), v)
			b.Put(fmt.Appendf(nil, "filler%04d", n%1000), make([]byte, 100))
			if err := d.Write(&b); err != nil {
				t.Error(err)
				return
			}
			acked.Store(n)
		}
	}()
	for i := range 8 {
		for start := acked.Load(); acked.Load() < start+200 && !writerDone.Load(); { // let flushes and compactions happen
			runtime.Gosched()
		}
		before := acked.Load()
		dir := fmt.Sprintf("/ck%d", i)
		if err := d.Checkpoint(dir); err != nil {
			t.Fatal(err)
		}
		ck, err := Open(dir, &Options{FS: mem, ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		a, errA := ck.Get([]byte("a"))
		b, errB := ck.Get([]byte("b"))
		ck.Close()
		n, _ := strconv.ParseInt(string(a), 10, 64)
		if errA != nil && before > 0 || string(a) != string(b) || errA != errB || n < before {
			t.Fatalf("checkpoint %d: a = %q (%v), b = %q (%v); batch %d was acknowledged before it began", i, a, errA, b, errB, before)
		}
	}
	close(stop)
	wg.Wait()
}

// TestCheckpointLinksTables: on the OS file system a checkpoint's tables
// are hard links to the DB's (the same file, no copy), and it opens.
func TestCheckpointLinksTables(t *testing.T) {
	dir := t.TempDir()
	d, err := Open(filepath.Join(dir, "db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for i := range 100 {
		d.Put(fmt.Appendf(nil, "k%03d", i), []byte("v"))
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	tables, _ := d.Tables()
	if err := d.Checkpoint(filepath.Join(dir, "ck")); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("%06d.sst", tables[0].FileNum)
	a, errA := os.Stat(filepath.Join(dir, "db", name))
	b, errB := os.Stat(filepath.Join(dir, "ck", name))
	if errA != nil || errB != nil || !os.SameFile(a, b) {
		t.Fatalf("checkpoint's %s is not a hard link to the DB's (%v, %v)", name, errA, errB)
	}
	ck, err := Open(filepath.Join(dir, "ck"), &Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ck.Close()
	mustGet(t, ck, "k042", "v")
}

// TestCheckpointsRaceForOneDirectory: Checkpoints of one DB racing into
// the same empty directory, on the OS (tables hard-linked) and in memory
// (copied). One makes the checkpoint; the others fail, and none writes
// over a file another made: on the OS such a file is the DB's own live
// table (a link to it), which a copy opened with Create would empty.
// After every round the DB reopens whole, and the checkpoint holds it.
// Listing a checkpoint's directory takes up to 20 ms, so that the racers
// find it empty and some go on when another has finished.
func TestCheckpointsRaceForOneDirectory(t *testing.T) {
	for _, c := range []struct {
		name string
		fs   vfs.FS
		root string
	}{{"os", vfs.Default, t.TempDir()}, {"mem", vfs.NewMem(), "/"}} {
		t.Run(c.name, func(t *testing.T) {
			slow := slowListFS{c.fs, new(sync.Map), new(atomic.Int32)}
			opts := &Options{FS: slow}
			src := filepath.Join(c.root, "db")
			d, err := Open(src, opts)
			if err != nil {
				t.Fatal(err)
			}
			want := model{}
			for round := range 20 {
				for i := range 50 {
					k, v := fmt.Sprintf("k%02d-%03d", round, i), strconv.Itoa(i)
					if err := d.Put([]byte(k), []byte(v)); err != nil {
						t.Fatal(err)
					}
					want[k] = v
				}
				if err := d.Flush(); err != nil {
					t.Fatal(err)
				}
				ck := filepath.Join(c.root, fmt.Sprintf("ck%02d", round))
				var made atomic.Int32
				slow.remade.Store(0) // the reopens below remake a checkpoint's CURRENT.tmp
				var wg sync.WaitGroup
				for range 3 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := d.Checkpoint(ck); err == nil {
							made.Add(1)
						} else if !errors.Is(err, fs.ErrExist) && !errors.Is(err, ErrLocked) {
							t.Errorf("round %d: a losing Checkpoint: %v", round, err)
						}
					}()
				}
				wg.Wait()
				if n := made.Load(); n != 1 {
					t.Fatalf("round %d: %d Checkpoints succeeded, want 1", round, n)
				}
				if n := slow.remade.Load(); n > 0 {
					t.Fatalf("round %d: %d files of a checkpoint made again", round, n)
				}
				for _, dir := range []string{ck, src} {
					if dir == src {
						if err := d.Close(); err != nil {
							t.Fatal(err)
						}
					}
					o, err := Open(dir, opts)
					if err != nil {
						t.Fatalf("round %d: opening %s: %v", round, dir, err)
					}
					if got := dbContents(t, o); !maps.Equal(got, want) {
						t.Fatalf("round %d: %s:\n%s", round, dir, diffModels(got, want))
					}
					if dir == src {
						d = o
					} else if err := o.Close(); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// slowListFS sleeps for up to 20 ms after listing a directory whose name
// starts with "ck", links files where its FS can, and counts the files in
// such directories made (created or linked) a second time.
type slowListFS struct {
	vfs.FS
	made   *sync.Map
	remade *atomic.Int32
}

func (s slowListFS) List(dir string) ([]string, error) {
	names, err := s.FS.List(dir)
	if strings.HasPrefix(filepath.Base(dir), "ck") {
		time.Sleep(rand.N(20 * time.Millisecond))
	}
	return names, err
}

func (s slowListFS) Create(name string) (vfs.File, error) {
	s.making(name)
	return s.FS.Create(name)
}

func (s slowListFS) Link(oldname, newname string) error {
	l, ok := s.FS.(vfs.Linker)
	if !ok {
		return errors.ErrUnsupported
	}
	err := l.Link(oldname, newname)
	if err == nil {
		s.making(newname)
	}
	return err
}

func (s slowListFS) making(name string) {
	if strings.HasPrefix(filepath.Base(filepath.Dir(name)), "ck") {
		if _, loaded := s.made.LoadOrStore(name, true); loaded {
			s.remade.Add(1)
		}
	}
}
