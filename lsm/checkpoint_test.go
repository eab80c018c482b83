package lsm

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/monbandb/monban/vfs"
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
