package wal

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"syscall"
	"testing"
	"time"

	"github.com/monbandb/monban/vfs"
)

// TestBufferedCrash copies the file at random moments while Appends run,
// with no Flush: what a process crash would leave. Every copy, and every
// copy cut short inside its last Write (a crash during write(2)), reads as
// the first records appended, perhaps with a torn tail, never corruption.
func TestBufferedCrash(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	for iter := 0; iter < 10; iter++ {
		f := &bufFile{}
		w := newBufferedWriterSize(f, blockSize, []int{1, 4 << 10, bufferLimit}[rng.IntN(3)])
		n := 50 + rng.IntN(200)
		model := make([][]byte, n)
		for i := range model {
			model[i] = randomRecord(rng, randomSize(rng, 50<<10))
		}
		offs := make([]int64, n)
		appended := make(chan struct{})
		go func() {
			defer close(appended)
			for i, rec := range model {
				off, err := w.Append(rec)
				if err != nil {
					t.Errorf("seed %d: Append: %v", seed, err)
					return
				}
				offs[i] = off
			}
		}()
		var copies [][]byte
		for done := false; !done; {
			select {
			case <-appended:
				done = true
			default:
				time.Sleep(time.Duration(rng.IntN(50)) * time.Microsecond)
			}
			f.mu.Lock()
			c := bytes.Clone(f.data)
			if len(f.writes) > 0 {
				copies = append(copies, c[:len(c)-rng.IntN(f.writes[len(f.writes)-1]+1)])
			}
			f.mu.Unlock()
			copies = append(copies, c)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		copies = append(copies, f.data)
		for i, c := range copies {
			checkPrefix(t, "copy", readAll(t, c), model, offs)
			if t.Failed() {
				t.Fatalf("seed %d iter %d: copy %d of %d bytes", seed, iter, i, len(c))
			}
		}
		if res := readAll(t, f.data); len(res.records) != n {
			t.Fatalf("seed %d iter %d: the closed log has %d of %d records", seed, iter, len(res.records), n)
		}
	}
}

// TestBufferedCrashKeepsSynced is TestCrashKeepsSynced for a
// BufferedWriter: after a machine crash every record appended before the
// last Sync is there, the rest is a prefix of the later ones.
func TestBufferedCrashKeepsSynced(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	for iter := 0; iter < 30; iter++ {
		fs := vfs.NewFault(vfs.NewMem())
		if err := fs.MkdirAll("db"); err != nil {
			t.Fatal(err)
		}
		f, err := fs.Create("db/000001.log")
		if err != nil {
			t.Fatal(err)
		}
		for _, dir := range []string{"db", "/"} {
			if err := fs.SyncDir(dir); err != nil {
				t.Fatal(err)
			}
		}
		w := NewBufferedWriter(f)
		var model [][]byte
		var offs []int64
		synced := 0
		for range rng.IntN(60) {
			rec := randomRecord(rng, randomSize(rng, 50<<10))
			off, err := w.Append(rec)
			if err != nil {
				t.Fatalf("seed %d: Append: %v", seed, err)
			}
			model, offs = append(model, rec), append(offs, off)
			if rng.IntN(4) == 0 {
				if err := w.Sync(); err != nil {
					t.Fatalf("seed %d: Sync: %v", seed, err)
				}
				synced = len(model)
			}
		}
		after, err := fs.Crash()
		if err != nil {
			t.Fatal(err)
		}
		w.Close() // fails if records were still buffered: the machine is gone
		got := readFile(t, after, "db/000001.log")
		checkPrefix(t, "after a crash", got, model, offs)
		if len(got.records) < synced {
			t.Fatalf("seed %d iter %d: %d records survive, %d were synced", seed, iter, len(got.records), synced)
		}
	}
}

// TestBufferedErrorIsSticky fails a Write (torn: half its bytes land) or
// a Sync of a BufferedWriter on the fault-injecting file system with
// ENOSPC, the nth one or each with a probability, while records of random
// sizes are appended with random Flushes and Syncs between them. The error
// reaches a later Append, Flush or Sync, wraps its cause, never goes away,
// and Close reports it; the flusher is gone before Close; the file reads
// as a prefix of the records with a torn tail, holding at least those
// flushed before the failure.
func TestBufferedErrorIsSticky(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	var faults []vfs.Fault
	for _, op := range []vfs.Op{vfs.OpWrite, vfs.OpSync} {
		for n := int64(1); n <= 4; n++ {
			faults = append(faults, vfs.Fault{Op: op, Nth: n, Err: syscall.ENOSPC})
		}
		for i := range 8 {
			faults = append(faults, vfs.Fault{Op: op, P: []float64{0.05, 0.3}[i%2], Seed: seed + uint64(i), Err: syscall.ENOSPC})
		}
	}
	for _, fault := range faults {
		what := fmt.Sprintf("seed %d, %s fault nth %d p %g", seed, fault.Op, fault.Nth, fault.P)
		mem := vfs.NewMem()
		fs := vfs.NewFault(mem)
		f, err := fs.Create("000002.log")
		if err != nil {
			t.Fatal(err)
		}
		fs.SetTornWrites(true)
		fs.Inject(fault)
		w := NewBufferedWriter(f)
		var model [][]byte
		var offs []int64
		flushed := 0
		var failed error
		for i := 0; failed == nil; i++ {
			if i == 1000 {
				t.Fatalf("%s: no error after 1000 records", what)
			}
			rec := randomRecord(rng, randomSize(rng, 50<<10))
			off, err := w.Append(rec)
			if err != nil {
				failed = err
				break
			}
			model, offs = append(model, rec), append(offs, off)
			switch op := rng.IntN(3); {
			case op == 0 && i < 100:
				continue
			case op == 1 && i < 100:
				failed = w.Flush()
			default: // from the 100th record on, each brings a Write and a Sync
				failed = w.Sync()
			}
			if failed == nil {
				flushed = len(model)
			}
		}
		if !errors.Is(failed, syscall.ENOSPC) || !errors.Is(failed, vfs.ErrInjected) {
			t.Fatalf("%s: %v, want ENOSPC from an injected fault", what, failed)
		}
		select {
		case <-w.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the flusher is still running after the error", what)
		}
		_, aerr := w.Append([]byte("after"))
		for name, err := range map[string]error{"Append": aerr, "Flush": w.Flush(), "Sync": w.Sync(), "Close": w.Close()} {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("%s: %s after the failure: %v, want the sticky error", what, name, err)
			}
		}
		got := readFile(t, mem, "000002.log")
		checkPrefix(t, what, got, model, offs)
		if len(got.records) < flushed {
			t.Fatalf("%s: %d records in the file, %d were flushed", what, len(got.records), flushed)
		}
	}
}

// TestBufferedCloseReportsLoss: a record whose Append returned nil but
// whose Write fails at Close is not lost silently.
func TestBufferedCloseReportsLoss(t *testing.T) {
	fs := vfs.NewFault(vfs.NewMem())
	f, err := fs.Create("000003.log")
	if err != nil {
		t.Fatal(err)
	}
	fs.FailFromNth(vfs.OpWrite, 1)
	w := NewBufferedWriter(f)
	if _, err := w.Append([]byte("buffered")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); !errors.Is(err, vfs.ErrInjected) {
		t.Fatalf("Close: %v, want the failed Write's error", err)
	}
}
