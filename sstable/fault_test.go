package sstable

import (
	"errors"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/vfs"
)

// TestIOFaults fails each write, sync, close and read in turn: Finish and
// Open/Get must report the injected error (wrapped), never succeed
// silently or panic.
func TestIOFaults(t *testing.T) {
	es := evenKeys(30000) // ~700 KiB: several 256 KiB buffer flushes
	write := func(fs vfs.FS) error {
		f, err := fs.Create("t.sst")
		if err != nil {
			return err
		}
		w := NewWriter(f, WriterOptions{BloomBitsPerKey: 10})
		for _, e := range es {
			if err := w.Add(e.key, e.value); err != nil {
				w.Abort()
				return err
			}
		}
		_, err = w.Finish()
		return err
	}
	for _, op := range []vfs.Op{vfs.OpWrite, vfs.OpSync, vfs.OpClose} {
		for n := int64(1); n <= 3; n++ {
			fs := vfs.NewFault(vfs.NewMem())
			fs.FailNth(op, n)
			err := write(fs)
			if fs.Count(op) >= n && !errors.Is(err, vfs.ErrInjected) {
				t.Fatalf("%v #%d failed: Finish returned %v", op, n, err)
			}
		}
	}
	// Reads: every read of Open and of a Get in turn.
	mem := vfs.NewMem()
	if err := write(mem); err != nil {
		t.Fatal(err)
	}
	k := []byte("k000100")
	for n := int64(1); n <= 8; n++ {
		fs := vfs.NewFault(mem)
		fs.FailNth(vfs.OpRead, n)
		f, err := fs.Open("t.sst")
		if err != nil {
			t.Fatal(err)
		}
		r, err := Open(f, ReaderOptions{FileNum: 3})
		if err != nil {
			if !errors.Is(err, vfs.ErrInjected) {
				t.Fatalf("read #%d failed: Open returned %v", n, err)
			}
			continue
		}
		v, _, found, err := r.Get(k, filter.Hash(k), base.MaxSeqNum, &Lookup{})
		if err != nil && !errors.Is(err, vfs.ErrInjected) || err == nil && (!found || string(v) != "value") {
			t.Fatalf("read #%d failed: Get = %q %v %v", n, v, found, err)
		}
		r.Close()
	}
}
