package wal

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/monbandb/monban/vfs"
)

// TestBufferedCloseLosesNothing: Close without Flush writes every record,
// in fewer Writes than Appends, and later calls fail with ErrClosed.
func TestBufferedCloseLosesNothing(t *testing.T) {
	f := &bufFile{}
	w := NewBufferedWriter(f)
	var model [][]byte
	for i := range 1000 {
		rec := bytes.Repeat([]byte{byte(i)}, i%300)
		if _, err := w.Append(rec); err != nil {
			t.Fatal(err)
		}
		model = append(model, rec)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	res := readAll(t, f.data)
	if len(res.records) != len(model) || res.err != io.EOF || res.dropped != 0 || f.synced != 0 {
		t.Fatalf("read %d of %d records, %v, dropped %d, synced %d", len(res.records), len(model), res.err, res.dropped, f.synced)
	}
	t.Logf("%d Appends, %d Writes", len(model), len(f.writes))
	if _, err := w.Append(nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v, want ErrClosed", err)
	}
	if err := w.Flush(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Flush after Close: %v, want ErrClosed", err)
	}
	if err := w.Sync(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Sync after Close: %v, want ErrClosed", err)
	}
	if err := w.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Close: %v, want ErrClosed", err)
	}
}

// TestBufferedCloseDuringAppends closes a writer while another goroutine
// appends into a small buffer (so Appends wait for the flusher): every
// Append that returned nil is in the file, the ones after fail with
// ErrClosed.
func TestBufferedCloseDuringAppends(t *testing.T) {
	for iter := 0; iter < 200; iter++ {
		f := &bufFile{}
		w := newBufferedWriterSize(f, blockSize, 64)
		acked := make(chan int)
		go func() {
			n := 0
			for {
				if _, err := w.Append([]byte("a record of some 40 bytes, give or take")); err != nil {
					if !errors.Is(err, ErrClosed) {
						t.Errorf("Append: %v, want ErrClosed", err)
					}
					acked <- n
					return
				}
				n++
			}
		}()
		time.Sleep(time.Duration(iter%10) * 10 * time.Microsecond)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		n := <-acked
		if res := readAll(t, f.data); len(res.records) != n || res.err != io.EOF {
			t.Fatalf("iter %d: %d records in the file (%v), %d Appends returned nil", iter, len(res.records), res.err, n)
		}
	}
}

// flushers counts the goroutines running a BufferedWriter's flusher.
func flushers() int {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Count(string(buf), "wal.(*BufferedWriter).flush(")
}

// TestBufferedNoLeak: every flusher stops at Close, whether the writer
// was healthy, had failed, or was closed twice.
func TestBufferedNoLeak(t *testing.T) {
	before := flushers()
	for i := range 20 {
		var f vfs.File = &bufFile{}
		if i%2 == 1 {
			fs := vfs.NewFault(vfs.NewMem())
			g, err := fs.Create("x.log")
			if err != nil {
				t.Fatal(err)
			}
			fs.FailFromNth(vfs.OpAny, 1)
			f = g
		}
		w := NewBufferedWriter(f)
		for range i {
			w.Append([]byte("record"))
		}
		w.Flush()
		w.Close()
		w.Close()
	}
	for deadline := time.Now().Add(5 * time.Second); flushers() > before; {
		if time.Now().After(deadline) {
			t.Fatalf("%d flushers running, %d before the test", flushers(), before)
		}
		time.Sleep(time.Millisecond)
	}
}
