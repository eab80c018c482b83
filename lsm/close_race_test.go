package lsm

import (
	"errors"
	"fmt"
	"testing"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/vfs"
)

// closingDB returns a DB reopened over tables whose range tombstones it
// has not read yet (MaxOpenFiles 2: an iterator's first step opens them),
// the read state a read took just before Close, with its reference, and
// the DB, closed since. A black-box attack raced iterators and Explain
// against Close: a read that had its view when Close came got the table
// cache's "sstable: closed", not ErrClosed.
func closingDB(t *testing.T) (*DB, *readState, base.SeqNum) {
	t.Helper()
	fs := vfs.NewMem()
	o := &Options{FS: fs, MemtableSize: 16 << 10, TargetFileSize: 4 << 10, MaxOpenFiles: 2}
	compactedKeys(t, fs, o, 3000)
	d := openMem(t, fs, o)
	rs, seq := d.currentView()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	return d, rs, seq
}

// compactedKeys writes n keys into a DB on fs, compacts them into the
// last level, and closes it.
func compactedKeys(t *testing.T, fs vfs.FS, o *Options, n int) {
	t.Helper()
	d := openMem(t, fs, o)
	for i := range n {
		if err := d.Put(fmt.Appendf(nil, "k%05d", i), []byte("value-value-value")); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestIterRacingCloseSaysErrClosed(t *testing.T) {
	d, rs, seq := closingDB(t)
	it := d.newIter(rs, seq, nil)
	it.First()
	if err := it.Err(); !errors.Is(err, ErrClosed) {
		t.Fatalf("an iterator whose view Close overtook: Err %v, want ErrClosed", err)
	}
	it.Close()
}

func TestExplainRacingCloseSaysErrClosed(t *testing.T) {
	d, rs, seq := closingDB(t)
	defer rs.unref()
	if _, err := d.explain(rs, seq, []byte("k01234")); !errors.Is(err, ErrClosed) {
		t.Fatalf("Explain whose view Close overtook: %v, want ErrClosed", err)
	}
}

// TestTransientTableErrorDoesNotStick: an iterator that fails to open a
// table (a disk error) fails; the next, once the disk answers, reads. The
// range tombstones of a read state's tables were gathered once, error
// included, so every iterator over that state failed with the first one's
// error, until the state changed, never on a read-only DB (a black-box
// attack).
func TestTransientTableErrorDoesNotStick(t *testing.T) {
	for _, readOnly := range []bool{false, true} {
		mem := vfs.NewMem()
		compactedKeys(t, mem, &Options{MemtableSize: 16 << 10, TargetFileSize: 4 << 10}, 2000)
		ff := vfs.NewFault(mem)
		d := openMem(t, ff, &Options{ReadOnly: readOnly, MaxOpenFiles: 2})
		ff.Inject(vfs.Fault{Op: vfs.OpOpen, Match: vfs.MatchBase("*.sst"), Nth: 1})
		it := d.NewIter(nil)
		for it.First(); it.Valid(); it.Next() {
		}
		first := it.Err()
		it.Close()
		ff.Heal()
		n := 0
		it = d.NewIter(nil)
		for it.First(); it.Valid(); it.Next() {
			n++
		}
		if err := it.Err(); err != nil || n != 2000 {
			t.Errorf("read-only %v: after a failed open (%v) and a healed disk, an iterator read %d keys, %v; want 2000", readOnly, first, n, err)
		}
		it.Close()
		d.Close()
	}
}
