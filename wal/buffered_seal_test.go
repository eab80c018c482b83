package wal

import (
	"bytes"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestBufferedSeal holds the flusher in a Write while records wait in the
// buffer: Seal returns only once they and the seal are written and
// synced, and the file reads back sealed. After it Append and Seal fail
// with ErrClosed; Flush, Sync and Close work. A legacy BufferedWriter has
// no seal and goes on as if Seal had not been called.
func TestBufferedSeal(t *testing.T) {
	f := &bufFile{hold: make(chan struct{}), entered: make(chan struct{}, 1)}
	w := NewRecyclableBufferedWriter(f, 5)
	recs := [][]byte{[]byte("held"), []byte("buffered"), bytes.Repeat([]byte{'x'}, 3*blockSize)}
	if _, err := w.Append(recs[0]); err != nil {
		t.Fatal(err)
	}
	<-f.entered
	for _, rec := range recs[1:] {
		if _, err := w.Append(rec); err != nil {
			t.Fatal(err)
		}
	}
	sealed := make(chan error)
	go func() { sealed <- w.Seal() }()
	select {
	case err := <-sealed:
		t.Fatalf("Seal returned (%v) while the flusher was held", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(f.hold)
	if err := <-sealed; err != nil {
		t.Fatal(err)
	}
	if n, synced := f.lengths(); n != w.Size() || synced != n {
		t.Fatalf("after Seal the file has %d bytes, %d synced; Size %d", n, synced, w.Size())
	}
	if _, err := w.Append([]byte("late")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Seal: %v, want ErrClosed", err)
	}
	if err := w.Seal(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Seal after Seal: %v, want ErrClosed", err)
	}
	if err := errors.Join(w.Flush(), w.Sync(), w.Close()); err != nil {
		t.Fatalf("Flush, Sync, Close after Seal: %v", err)
	}
	res := readLog(t, NewRecyclableReader(bytes.NewReader(f.data), "000005.log", 5), f.data)
	if len(res.records) != len(recs) || !res.sealed || !res.clean {
		t.Fatalf("read %d records, %v, sealed %v, ends cleanly %v", len(res.records), res.err, res.sealed, res.clean)
	}

	lf := &bufFile{}
	lw := NewBufferedWriter(lf)
	if err := lw.Seal(); err == nil || errors.Is(err, ErrClosed) {
		t.Fatalf("Seal of a legacy log: %v, want an error other than ErrClosed", err)
	}
	if _, err := lw.Append([]byte("hi")); err != nil {
		t.Fatalf("Append after a refused Seal: %v", err)
	}
	if err := lw.Close(); err != nil {
		t.Fatal(err)
	}
	if want, _ := logOf(t, [][]byte{[]byte("hi")}); !bytes.Equal(lf.data, want) || lf.synced != 0 {
		t.Fatalf("refused Seal changed the log (% x) or synced it", lf.data)
	}
}

// TestBufferedSealRacesAppends seals while four goroutines append: each
// Append either returned nil, and its record is in the file before the
// seal, or failed with ErrClosed, and it is not; each goroutine's records
// keep their order.
func TestBufferedSealRacesAppends(t *testing.T) {
	for iter := range 20 {
		f := &bufFile{}
		w := newBufferedWriterSize(f, 512, 1<<10)
		w.kind = recyclable(uint64(iter) + 1)
		acked := make([][]string, 4)
		var wg sync.WaitGroup
		for g := range acked {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					rec := fmt.Sprintf("g%d-%d", g, i)
					if _, err := w.Append([]byte(rec)); err != nil {
						if !errors.Is(err, ErrClosed) {
							t.Errorf("Append: %v, want ErrClosed", err)
						}
						return
					}
					acked[g] = append(acked[g], rec)
				}
			}()
		}
		time.Sleep(time.Millisecond)
		if err := w.Seal(); err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		r := newRecyclableReaderSize(bytes.NewReader(f.data), "race.log", uint64(iter)+1, 512)
		res := readLog(t, r, f.data)
		if !res.sealed {
			t.Fatalf("iter %d: log not sealed: %v", iter, res.err)
		}
		next := make([]int, len(acked))
		for _, rec := range res.records {
			var g, i int
			if _, err := fmt.Sscanf(string(rec), "g%d-%d", &g, &i); err != nil || next[g] >= len(acked[g]) || acked[g][next[g]] != string(rec) {
				t.Fatalf("iter %d: record %q not acknowledged, or out of order", iter, rec)
			}
			next[g]++
		}
		for g := range acked {
			if next[g] != len(acked[g]) {
				t.Fatalf("iter %d: goroutine %d had %d records acknowledged, %d are before the seal", iter, g, len(acked[g]), next[g])
			}
		}
	}
}
