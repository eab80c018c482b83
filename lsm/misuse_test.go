package lsm

import (
	"bytes"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestWriteNilBatch: a nil batch is an empty one, on an open DB and a
// closed one, never a nil dereference.
func TestWriteNilBatch(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	if err := d.Write(nil); err != nil {
		t.Fatalf("Write(nil) = %v, want nil (an empty batch)", err)
	}
	d.Close()
	if err := d.Write(nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Write(nil) after Close = %v, want ErrClosed", err)
	}
}

// TestReadOversizedKey: a read of a key no write could have stored gets
// the error the write would have, not ErrNotFound.
func TestReadOversizedKey(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	big := bytes.Repeat([]byte("k"), MaxKeySize+1)
	if err := d.Put([]byte("a"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Get(big); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("Get(oversized) = %v, want ErrInvalidKey", err)
	}
	values, errs := d.MultiGet([][]byte{[]byte("a"), big})
	if string(values[0]) != "1" || errs[0] != nil || values[1] != nil || !errors.Is(errs[1], ErrInvalidKey) {
		t.Errorf("MultiGet(a, oversized) = %q, %v; want 1, nil and nil, ErrInvalidKey", values, errs)
	}
	s := d.NewSnapshot()
	defer s.Close()
	if _, err := s.Get(big); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("Snapshot.Get(oversized) = %v, want ErrInvalidKey", err)
	}
	if _, errs := s.MultiGet([][]byte{big}); !errors.Is(errs[0], ErrInvalidKey) {
		t.Errorf("Snapshot.MultiGet(oversized) = %v, want ErrInvalidKey", errs)
	}
}

// TestCompactRangeInverted: a range whose start is above its end names
// no key; saying so beats compacting nothing in silence.
func TestCompactRangeInverted(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	defer d.Close()
	if err := d.CompactRange([]byte("z"), []byte("a")); !errors.Is(err, ErrInvalidRange) {
		t.Fatalf("CompactRange(z, a) = %v, want ErrInvalidRange", err)
	}
	for _, r := range [][2][]byte{{[]byte("a"), []byte("a")}, {[]byte("a"), []byte("z")}, {nil, []byte("a")}, {[]byte("z"), nil}} {
		if err := d.CompactRange(r[0], r[1]); err != nil {
			t.Fatalf("CompactRange(%q, %q) = %v", r[0], r[1], err)
		}
	}
}

// TestOpenEmptyName: Open("") says what is wrong with the argument.
func TestOpenEmptyName(t *testing.T) {
	_, err := Open("", &Options{FS: vfs.NewMem()})
	if !errors.Is(err, fs.ErrInvalid) || !strings.Contains(err.Error(), "directory") {
		t.Fatalf(`Open("") = %v, want an error wrapping fs.ErrInvalid that says a directory is needed`, err)
	}
	if _, err := Repair("", &Options{FS: vfs.NewMem()}); !errors.Is(err, fs.ErrInvalid) {
		t.Fatalf(`Repair("") = %v, want an error wrapping fs.ErrInvalid`, err)
	}
}

// TestWALBytesSavedExact: an elided delete saves exactly the bytes the
// same delete adds to Stats.WALBytes when it is written, for keys whose
// length takes one, two and three varint bytes.
func TestWALBytesSavedExact(t *testing.T) {
	for _, n := range []int{16, 200, 20000} {
		key := bytes.Repeat([]byte("x"), n)
		written := func() uint64 {
			d := openMem(t, vfs.NewMem(), &Options{KeepAbsentDeletes: true})
			defer d.Close()
			before := d.Stats().WALBytes
			if err := d.Delete(key); err != nil {
				t.Fatal(err)
			}
			return d.Stats().WALBytes - before
		}()
		d := openMem(t, vfs.NewMem(), nil)
		if err := d.Delete(key); err != nil {
			t.Fatal(err)
		}
		s := d.Stats()
		d.Close()
		if s.DeletesElided != 1 || s.WALBytesSaved != written {
			t.Errorf("key of %d bytes: %d elided, WALBytesSaved %d; want 1 elided saving the %d bytes the written delete took",
				n, s.DeletesElided, s.WALBytesSaved, written)
		}
	}
}

// TestClosedMeansErrClosed: an Iter once closed reports ErrClosed from
// Err and a second Close, rather than a clean end; a Snapshot closed once
// the DB is closed says so; and after Close a write or CompactRange that
// is also malformed reports ErrClosed, the error every call then gets,
// not what is wrong with its arguments.
func TestClosedMeansErrClosed(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	if err := d.Put([]byte("a"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	it := d.NewIter(nil)
	if !it.First() {
		t.Fatal(it.Err())
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	if it.First() || it.Next() || !errors.Is(it.Err(), ErrClosed) {
		t.Fatalf("a closed iterator: Err %v, want ErrClosed", it.Err())
	}
	if err := it.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("a second Close of an iterator: %v, want ErrClosed", err)
	}
	snap := d.NewSnapshot()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := snap.Close(); !errors.Is(err, ErrClosed) {
		t.Fatalf("closing a snapshot after the DB: %v, want ErrClosed", err)
	}
	var b Batch
	b.DeleteRange([]byte("b"), []byte("a"))
	for name, err := range map[string]error{
		"DeleteRange(b, a)":  d.DeleteRange([]byte("b"), []byte("a")),
		"Write(bad batch)":   d.Write(&b),
		"Put(oversized key)": d.Put(make([]byte, MaxKeySize+1), nil),
		"Delete(oversized)":  d.Delete(make([]byte, MaxKeySize+1)),
		"CompactRange(b, a)": d.CompactRange([]byte("b"), []byte("a")),
		"Put(two options)":   d.Put([]byte("a"), nil, Sync, NoSync),
		"Write(two options)": d.Write(&b, Sync, Sync),
	} {
		if !errors.Is(err, ErrClosed) {
			t.Errorf("%s after Close: %v, want ErrClosed", name, err)
		}
	}
}

// TestAnIteratorOnAKeySeesTheDBClose: an iterator left on a key when the
// DB closed went on reporting the key as valid and no error until its
// next move (a black-box attack found it). Every call after Close
// reports ErrClosed, the accessors Valid and Err included.
func TestAnIteratorOnAKeySeesTheDBClose(t *testing.T) {
	d := openMem(t, vfs.NewMem(), nil)
	if err := d.Put([]byte("a"), []byte("1")); err != nil {
		t.Fatal(err)
	}
	snap := d.NewSnapshot()
	its := []*Iter{d.NewIter(nil), snap.NewIter(nil)}
	for _, it := range its {
		if !it.First() {
			t.Fatal(it.Err())
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	for i, it := range its {
		if it.Valid() || !errors.Is(it.Err(), ErrClosed) {
			t.Errorf("iterator %d after the DB closed: Valid %v, Err %v; want false, ErrClosed", i, it.Valid(), it.Err())
		}
		if err := it.Close(); !errors.Is(err, ErrClosed) {
			t.Errorf("iterator %d: Close %v, want ErrClosed", i, err)
		}
	}
}
