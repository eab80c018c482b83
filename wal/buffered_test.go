package wal

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/monbandb/monban/vfs"
)

// bufFile is the vfs.File of the BufferedWriter tests: safe to inspect
// while the flusher writes, it records each Write's size and the length
// the last Sync covered, can hold Writes at a gate, and notes any call
// made while another is in progress (a vfs.File is for one goroutine at a
// time, and the flusher must keep it so).
type bufFile struct {
	mu     sync.Mutex
	data   []byte
	writes []int
	synced int
	closed bool

	busy    atomic.Int32
	overlap atomic.Bool

	// With hold set (before the writer starts), each Write signals entered
	// and waits until hold is closed.
	hold    chan struct{}
	entered chan struct{}
}

var _ vfs.File = (*bufFile)(nil)

func (f *bufFile) enter() {
	if f.busy.Add(1) > 1 {
		f.overlap.Store(true)
	}
}

func (f *bufFile) Write(p []byte) (int, error) {
	f.enter()
	defer f.busy.Add(-1)
	if f.hold != nil {
		select {
		case f.entered <- struct{}{}:
		default:
		}
		<-f.hold
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, errors.New("bufFile: closed")
	}
	f.data = append(f.data, p...)
	f.writes = append(f.writes, len(p))
	return len(p), nil
}

func (f *bufFile) Sync() error {
	f.enter()
	defer f.busy.Add(-1)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.synced = len(f.data)
	return nil
}

func (f *bufFile) Close() error {
	f.enter()
	defer f.busy.Add(-1)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

func (f *bufFile) Read(p []byte) (int, error)              { return 0, io.EOF }
func (f *bufFile) ReadAt(p []byte, off int64) (int, error) { return 0, io.EOF }
func (f *bufFile) Size() (int64, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return int64(len(f.data)), nil
}

// lengths returns how many bytes the file has and how many the last Sync
// covered.
func (f *bufFile) lengths() (written, synced int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return int64(len(f.data)), int64(f.synced)
}

// checkPrefix fails unless res holds the first records of model, at the
// offsets Append returned, and ends in io.EOF (perhaps after a torn tail).
func checkPrefix(t *testing.T, what string, res readResult, model [][]byte, offs []int64) {
	t.Helper()
	if res.err != io.EOF {
		t.Fatalf("%s: read ends in %v, want io.EOF", what, res.err)
	}
	if len(res.records) > len(model) {
		t.Fatalf("%s: read %d records, %d were appended", what, len(res.records), len(model))
	}
	for i, rec := range res.records {
		if !bytes.Equal(rec, model[i]) || res.offsets[i] != offs[i] {
			t.Fatalf("%s: record %d differs (len %d vs %d, offset %d vs %d)",
				what, i, len(rec), len(model[i]), res.offsets[i], offs[i])
		}
	}
}

// TestBufferedModel appends random records (0..100 KiB) under random
// buffer limits while a second goroutine calls Flush, Sync and Size, and
// checks each promise as it is made (after Flush the file holds what Size
// said before it; after Sync that much is synced; only a record larger
// than the limit makes the buffer larger) and, after Close, that
// the file reads back as exactly the model at the offsets Append returned.
// It also checks the flusher never used the file from two goroutines.
func TestBufferedModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	for iter := 0; iter < 20; iter++ {
		f := &bufFile{}
		limit := []int{1, 4 << 10, 64 << 10, bufferLimit}[rng.IntN(4)]
		w := newBufferedWriterSize(f, blockSize, limit)

		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func(rng *rand.Rand) {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				size := w.Size()
				switch rng.IntN(3) {
				case 0:
					if err := w.Flush(); err != nil {
						t.Errorf("seed %d: Flush: %v", seed, err)
						return
					}
					if n, _ := f.lengths(); n < size {
						t.Errorf("seed %d: after Flush the file has %d bytes, Size was %d before it", seed, n, size)
					}
				case 1:
					if err := w.Sync(); err != nil {
						t.Errorf("seed %d: Sync: %v", seed, err)
						return
					}
					if _, n := f.lengths(); n < size {
						t.Errorf("seed %d: after Sync %d bytes are synced, Size was %d before it", seed, n, size)
					}
				case 2:
					runtime.Gosched()
				}
			}
		}(rand.New(rand.NewPCG(seed, uint64(iter)+1)))

		var model [][]byte
		var offs []int64
		for range rng.IntN(80) {
			rec := randomRecord(rng, randomSize(rng, 100<<10))
			before := w.Size()
			off, err := w.Append(rec)
			if err != nil {
				t.Fatalf("seed %d iter %d: Append: %v", seed, iter, err)
			}
			if off < before || off > before+headerSize || w.Size() < off+int64(headerSize+len(rec)) {
				t.Fatalf("seed %d iter %d: Append at Size %d returned offset %d, then Size %d", seed, iter, before, off, w.Size())
			}
			w.mu.Lock()
			if n := len(w.buf); n > limit && int64(n) != w.Size()-before {
				t.Fatalf("seed %d iter %d: %d bytes buffered, limit %d, and not one record alone", seed, iter, n, limit)
			}
			w.mu.Unlock()
			model, offs = append(model, rec), append(offs, off)
			if rng.IntN(10) == 0 {
				if err := w.Flush(); err != nil {
					t.Fatalf("seed %d iter %d: Flush: %v", seed, iter, err)
				}
			}
		}
		close(stop)
		wg.Wait()
		size := w.Size()
		if err := w.Close(); err != nil {
			t.Fatalf("seed %d iter %d: Close: %v", seed, iter, err)
		}
		if int64(len(f.data)) != size || !f.closed || f.overlap.Load() {
			t.Fatalf("seed %d iter %d: file has %d bytes (Size %d), closed %v, overlapping calls %v",
				seed, iter, len(f.data), size, f.closed, f.overlap.Load())
		}
		res := readAll(t, f.data)
		checkPrefix(t, "model", res, model, offs)
		if len(res.records) != len(model) || res.dropped != 0 {
			t.Fatalf("seed %d iter %d: read %d of %d records, dropped %d", seed, iter, len(res.records), len(model), res.dropped)
		}
	}
}

// TestBufferedSameBytes: for the same records a BufferedWriter writes the
// file a Writer writes, byte for byte, whatever the batches were, and
// returns the same offsets; on the block edges of TestBlockEdges, random
// records, and small blocks; as a legacy log, and as a recyclable one
// that each then seals.
func TestBufferedSameBytes(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	var cases [][][]byte
	for left := 0; left <= 9; left++ {
		cases = append(cases, [][]byte{
			bytes.Repeat([]byte{'a'}, blockSize-headerSize-left), make([]byte, 2*blockSize), {}, []byte("c"),
		})
	}
	for range 10 {
		var recs [][]byte
		for range rng.IntN(60) {
			recs = append(recs, randomRecord(rng, randomSize(rng, 100<<10)))
		}
		cases = append(cases, recs)
	}
	for i, recs := range cases {
		for _, bs := range []int{blockSize, 64} {
			for _, k := range []logKind{{}, recyclable(uint64(i) + 1)} {
				sameBytes(t, fmt.Sprintf("seed %d case %d bs %d recyclable %v", seed, i, bs, k.recyclable), rng, bs, k, recs)
			}
		}
	}
}

// sameBytes writes recs with a Writer and a BufferedWriter of kind k on
// blocks of bs bytes, flushing at random, and compares offsets and files.
func sameBytes(t *testing.T, what string, rng *rand.Rand, bs int, k logKind, recs [][]byte) {
	t.Helper()
	uf, bf := &memFile{}, &bufFile{}
	u, b := newWriterSize(uf, bs), newBufferedWriterSize(bf, bs, 1+rng.IntN(8<<10))
	u.kind, b.kind = k, k
	for j, rec := range recs {
		uo, err := u.Append(rec)
		if err != nil {
			t.Fatal(err)
		}
		bo, err := b.Append(rec)
		if err != nil {
			t.Fatal(err)
		}
		if uo != bo {
			t.Fatalf("%s: record %d at %d unbuffered, %d buffered", what, j, uo, bo)
		}
		if rng.IntN(8) == 0 {
			if err := b.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if k.recyclable {
		if err := u.Seal(); err != nil {
			t.Fatal(err)
		}
		if err := b.Seal(); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(uf.data, bf.data) {
		t.Fatalf("%s: files differ (%d vs %d bytes)", what, len(uf.data), len(bf.data))
	}
}

// TestBufferedCoalesces holds the flusher in its first Write and appends
// ten records meanwhile: all ten reach the file in the next Write.
func TestBufferedCoalesces(t *testing.T) {
	f := &bufFile{hold: make(chan struct{}), entered: make(chan struct{}, 1)}
	w := NewBufferedWriter(f)
	if _, err := w.Append([]byte("first")); err != nil {
		t.Fatal(err)
	}
	<-f.entered
	for i := range 10 {
		if _, err := w.Append(bytes.Repeat([]byte{'x'}, i)); err != nil {
			t.Fatal(err)
		}
	}
	close(f.hold)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := []int{headerSize + 5, 10*headerSize + 45}
	if f.mu.Lock(); !slices.Equal(f.writes, want) {
		t.Fatalf("Writes of %v bytes, want %v", f.writes, want)
	}
	f.mu.Unlock()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestBufferedBackPressure holds the flusher in a Write: Appends go on
// until the buffer reaches the limit, then the next one waits, and it
// returns once the Write completes and the flusher takes the buffer.
func TestBufferedBackPressure(t *testing.T) {
	const limit = 1000
	f := &bufFile{hold: make(chan struct{}), entered: make(chan struct{}, 1)}
	w := newBufferedWriterSize(f, blockSize, limit)
	if _, err := w.Append([]byte("held")); err != nil {
		t.Fatal(err)
	}
	<-f.entered
	rec := make([]byte, 93) // 100 bytes framed
	for range limit / 100 {
		if _, err := w.Append(rec); err != nil {
			t.Fatal(err)
		}
	}
	returned := make(chan error)
	go func() {
		_, err := w.Append(rec)
		returned <- err
	}()
	select {
	case err := <-returned:
		t.Fatalf("Append past the limit returned (%v) while the flusher was held", err)
	case <-time.After(20 * time.Millisecond):
	}
	close(f.hold)
	if err := <-returned; err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if res := readAll(t, f.data); len(res.records) != 2+limit/100 || res.err != io.EOF {
		t.Fatalf("read %d records, %v", len(res.records), res.err)
	}
}
