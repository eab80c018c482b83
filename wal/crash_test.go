package wal

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/monbandb/monban/vfs"
)

// TestCrashKeepsSynced drives a Writer on the fault-injecting file system,
// crashes the machine at a random point, and reads the log that survives:
// every record appended before the last successful Sync is there, nothing
// else is returned but the model's next records, and the log ends cleanly.
func TestCrashKeepsSynced(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 0))
	for iter := 0; iter < 50; iter++ {
		fs := vfs.NewFault(vfs.NewMem())
		if err := fs.MkdirAll("db"); err != nil {
			t.Fatal(err)
		}
		f, err := fs.Create("db/000001.log")
		if err != nil {
			t.Fatal(err)
		}
		if err := fs.SyncDir("db"); err != nil {
			t.Fatal(err)
		}
		if err := fs.SyncDir("/"); err != nil {
			t.Fatal(err)
		}
		w := NewWriter(f)
		var model [][]byte
		synced := 0
		for range rng.IntN(60) {
			rec := randomRecord(rng, randomSize(rng, 50<<10))
			if _, err := w.Append(rec); err != nil {
				t.Fatalf("seed %d: Append: %v", seed, err)
			}
			model = append(model, rec)
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
		got := readFile(t, after, "db/000001.log")
		if got.err != io.EOF || len(got.records) < synced || len(got.records) > len(model) {
			t.Fatalf("seed %d iter %d: read %d records then %v; %d were synced of %d", seed, iter, len(got.records), got.err, synced, len(model))
		}
		for i, rec := range got.records {
			if !bytes.Equal(rec, model[i]) {
				t.Fatalf("seed %d iter %d: record %d is wrong", seed, iter, i)
			}
		}
	}
}

// TestTornWrite fails the Nth Write after half of its bytes reached the
// file (a disk that fills up mid-write): the Writer reports the error and
// refuses more, and the log reads back as every earlier record plus a torn
// tail of exactly the half-written bytes.
func TestTornWrite(t *testing.T) {
	for n := int64(1); n <= 6; n++ {
		mem := vfs.NewMem()
		fs := vfs.NewFault(mem)
		f, err := fs.Create("000002.log")
		if err != nil {
			t.Fatal(err)
		}
		fs.SetTornWrites(true)
		fs.FailNth(vfs.OpWrite, n)
		w := NewWriter(f)
		var model [][]byte
		var failedAt, size int64
		for i := range 6 {
			rec := bytes.Repeat([]byte{byte('a' + i)}, 10000*i)
			before := w.Size()
			if _, err := w.Append(rec); err != nil {
				if !errors.Is(err, vfs.ErrInjected) {
					t.Fatalf("Append %d: %v, want an injected fault", i, err)
				}
				failedAt, size = before, before+int64(len(w.buf))/2
				break
			}
			model = append(model, rec)
		}
		if _, err := w.Append([]byte("after")); err == nil {
			t.Fatalf("write %d: Append after a failed Append succeeded", n)
		}
		got := readFile(t, mem, "000002.log")
		if got.err != io.EOF || len(got.records) != len(model) || got.dropped != size-failedAt {
			t.Fatalf("write %d: %d records (want %d), %v, dropped %d (want %d)",
				n, len(got.records), len(model), got.err, got.dropped, size-failedAt)
		}
	}
}

func readFile(t *testing.T, fs vfs.FS, name string) readResult {
	t.Helper()
	f, err := fs.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return readAll(t, data)
}
