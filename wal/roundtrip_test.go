package wal

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"time"
)

// TestRoundTrip appends random records (0..100 KiB, biased toward block
// boundaries) and checks the Reader returns exactly the model: the same
// records, in order, at the offsets Append returned, and a clean end.
func TestRoundTrip(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	for iter := 0; iter < 30; iter++ {
		var model [][]byte
		for range rng.IntN(40) {
			model = append(model, randomRecord(rng, randomSize(rng, 100<<10)))
		}
		log, offs := logOf(t, model)
		res := readAll(t, log)
		if res.err != io.EOF || res.dropped != 0 {
			t.Fatalf("seed %d iter %d: end = %v, dropped %d; want io.EOF, 0", seed, iter, res.err, res.dropped)
		}
		if len(res.records) != len(model) {
			t.Fatalf("seed %d iter %d: read %d records, wrote %d", seed, iter, len(res.records), len(model))
		}
		for i := range model {
			if !bytes.Equal(res.records[i], model[i]) || res.offsets[i] != offs[i] {
				t.Fatalf("seed %d iter %d: record %d differs (len %d vs %d, offset %d vs %d)",
					seed, iter, i, len(res.records[i]), len(model[i]), res.offsets[i], offs[i])
			}
		}
	}
}

// TestBlockEdges writes a record that leaves each of 0..9 bytes in its
// block, then records of 0, 1 and 2 bytes: the cases where the writer pads
// a trailer or emits an empty FIRST.
func TestBlockEdges(t *testing.T) {
	for left := 0; left <= 9; left++ {
		for _, next := range []int{0, 1, 2, blockSize, 3 * blockSize} {
			model := [][]byte{
				bytes.Repeat([]byte{'a'}, blockSize-headerSize-left),
				bytes.Repeat([]byte{'b'}, next),
				{},
				[]byte("c"),
			}
			log, offs := logOf(t, model)
			res := readAll(t, log)
			if res.err != io.EOF || res.dropped != 0 || len(res.records) != len(model) {
				t.Fatalf("left %d next %d: %d records, %v, dropped %d", left, next, len(res.records), res.err, res.dropped)
			}
			for i := range model {
				if !bytes.Equal(res.records[i], model[i]) || res.offsets[i] != offs[i] {
					t.Fatalf("left %d next %d: record %d differs", left, next, i)
				}
			}
		}
	}
}

// TestOneWritePerAppend checks the write path's promise: one Write call per
// Append, whatever the record's size, and no Sync unless asked.
func TestOneWritePerAppend(t *testing.T) {
	f := &memFile{}
	w := NewWriter(f)
	sizes := []int{0, 1, blockSize, 5 << 20, 3}
	for _, n := range sizes {
		if _, err := w.Append(make([]byte, n)); err != nil {
			t.Fatal(err)
		}
	}
	if f.writes != len(sizes) || f.syncs != 0 {
		t.Fatalf("%d writes, %d syncs for %d appends; want %d, 0", f.writes, f.syncs, len(sizes), len(sizes))
	}
	if err := w.Sync(); err != nil || f.syncs != 1 {
		t.Fatalf("Sync: %v, %d syncs", err, f.syncs)
	}
	if err := w.Close(); err != nil || !f.closed {
		t.Fatalf("Close: %v", err)
	}
	if _, err := w.Append(nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Append after Close: %v, want ErrClosed", err)
	}
	if err := w.Sync(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Sync after Close: %v, want ErrClosed", err)
	}
	if err := w.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("second Close: %v, want ErrClosed", err)
	}
	if res := readAll(t, f.data); len(res.records) != len(sizes) || res.err != io.EOF {
		t.Fatalf("read back %d records, %v", len(res.records), res.err)
	}
}

// failFile fails every Write after the first `ok` ones.
type failFile struct {
	memFile
	ok int
}

func (f *failFile) Write(p []byte) (int, error) {
	if f.ok == 0 {
		return 0, errors.New("disk full")
	}
	f.ok--
	return f.memFile.Write(p)
}

// TestWriteErrorIsSticky: after a failed Write the Writer cannot know what
// reached the file, so it refuses further appends rather than write after
// an unknown tail.
func TestWriteErrorIsSticky(t *testing.T) {
	f := &failFile{ok: 1}
	w := NewWriter(f)
	if _, err := w.Append([]byte("one")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append([]byte("two")); err == nil {
		t.Fatal("Append on a failing file succeeded")
	}
	f.ok = 10
	if _, err := w.Append([]byte("three")); err == nil {
		t.Fatal("Append after a failed Append succeeded")
	}
}
