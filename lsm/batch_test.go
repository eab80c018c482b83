package lsm

import (
	"bytes"
	"errors"
	"testing"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/doctest"
	"github.com/monbandb/monban/vfs"
)

// TestBatchFormatExample pins the worked example of docs/format.md, "Batch".
func TestBatchFormatExample(t *testing.T) {
	var b Batch
	b.Put([]byte("a"), []byte("x"))
	b.Delete([]byte("b"))
	want := doctest.Hex(t, "../docs/format.md", "Example: a batch at sequence 7")
	if got := b.encode(7); !bytes.Equal(got, want) {
		t.Fatalf("encoding\n got % x\nwant % x", got, want)
	}
	var seqs []base.SeqNum
	n, err := decodeBatch(want, func(e batchEntry) error {
		seqs = append(seqs, e.Seq)
		return nil
	})
	if err != nil || n != 2 || seqs[0] != 7 || seqs[1] != 8 {
		t.Fatalf("decode: n=%d seqs=%v err=%v", n, seqs, err)
	}

	b.Reset()
	b.DeleteRange([]byte("a"), []byte("c"))
	b.Put([]byte("b"), []byte("y"))
	want = doctest.Hex(t, "../docs/format.md", "A batch at sequence 7 that deletes")
	if got := b.encode(7); !bytes.Equal(got, want) {
		t.Fatalf("range delete encoding\n got % x\nwant % x", got, want)
	}
	var kinds []base.Kind
	if _, err := decodeBatch(want, func(e batchEntry) error {
		kinds = append(kinds, e.Kind)
		return nil
	}); err != nil || len(kinds) != 2 || kinds[0] != base.KindRangeDelete {
		t.Fatalf("decode range delete: kinds %v, err %v", kinds, err)
	}
}

// TestWALIdentityExample pins docs/format.md's identity record.
func TestWALIdentityExample(t *testing.T) {
	want := doctest.Hex(t, "../docs/format.md", "(`TestWALIdentityExample` reads these bytes)")
	if got := appendWALIdentity(nil, 0x0123456789abcdef); !bytes.Equal(got, want) {
		t.Fatalf("encoding\n got % x\nwant % x", got, want)
	}
	if id, ok := walIdentity(want); !ok || id != 0x0123456789abcdef {
		t.Fatalf("walIdentity = %#x, %v", id, ok)
	}
	var b Batch
	b.Put([]byte("k"), nil)
	if _, ok := walIdentity(b.encode(1)); ok {
		t.Fatal("a batch read as an identity")
	}
}

// TestWALSuccessorExample pins the successor record of docs/format.md.
func TestWALSuccessorExample(t *testing.T) {
	want := doctest.Hex(t, "../docs/format.md", "(`TestWALSuccessorExample` reads these bytes)")
	if got := appendWALSuccessor(nil, 0x0123456789abcdef, 12); !bytes.Equal(got, want) {
		t.Fatalf("encoding\n got % x\nwant % x", got, want)
	}
	if next, ok := walSuccessor(want); !ok || next != 12 {
		t.Fatalf("walSuccessor = %d, %v", next, ok)
	}
	if _, ok := walIdentity(want); ok {
		t.Fatal("a successor record read as an identity")
	}
	if _, ok := walSuccessor(appendWALIdentity(nil, 1)); ok {
		t.Fatal("an identity read as a successor record")
	}
	var b Batch
	b.Put([]byte("k"), nil)
	if _, ok := walSuccessor(b.encode(1)); ok {
		t.Fatal("a batch read as a successor record")
	}
}

// FuzzDecodeBatch: WAL records are read from disk, so decodeBatch must
// reject every malformed record with ErrCorruption and never panic; what
// it accepts re-encodes to the same bytes.
func FuzzDecodeBatch(f *testing.F) {
	var b Batch
	f.Add(b.encode(1))
	b.Put([]byte("key"), []byte("value"))
	b.Delete(nil)
	b.Put(nil, bytes.Repeat([]byte{0xff}, 300))
	b.DeleteRange(nil, []byte("z"))
	f.Add(append([]byte(nil), b.encode(42)...))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, rec []byte) {
		var re Batch
		var first base.SeqNum
		n, err := decodeBatch(rec, func(e batchEntry) error {
			if re.Len() == 0 {
				first = e.Seq
			}
			switch e.Kind {
			case base.KindSet:
				re.Put(e.Key, e.Value)
			case base.KindRangeDelete:
				re.DeleteRange(e.Key, e.Value)
			default:
				re.Delete(e.Key)
			}
			return nil
		})
		if err != nil {
			if !errors.Is(err, base.ErrCorruption) {
				t.Fatalf("error %v does not wrap ErrCorruption", err)
			}
			return
		}
		if n != re.Len() {
			t.Fatalf("decoded %d entries, visited %d", n, re.Len())
		}
		if n > 0 && !bytes.Equal(re.encode(first), rec) {
			t.Fatalf("accepted % x, re-encodes as % x", rec, re.encode(first))
		}
	})
}

// TestBatchSizeBound: a write that would take a batch past MaxBatchSize
// (lowered here) makes the whole batch fail with ErrBatchTooLarge, for
// Put, Delete and DeleteRange alike, and nothing of it is applied; a
// batch of exactly MaxBatchSize commits, and survives a reopen.
func TestBatchSizeBound(t *testing.T) {
	defer func(n int) { maxBatchSize = n }(maxBatchSize)
	maxBatchSize = 1000
	fs := vfs.NewMem()
	d := openMem(t, fs, nil)

	// filled returns a batch of one Put whose value takes it to size.
	filled := func(key string, size int) *Batch {
		var b Batch
		b.Put([]byte(key), make([]byte, size-batchHeaderLen-1-1-len(key)-2))
		if b.Size() != size {
			t.Fatalf("batch of %d bytes, want %d", b.Size(), size)
		}
		return &b
	}
	for name, last := range map[string]func(*Batch){
		"put":         func(b *Batch) { b.Put([]byte("y"), nil) },
		"delete":      func(b *Batch) { b.Delete([]byte("y")) },
		"deleterange": func(b *Batch) { b.DeleteRange([]byte("y"), []byte("z")) },
	} {
		b := filled("x", maxBatchSize-2)
		last(b)
		if err := d.Write(b); !errors.Is(err, ErrBatchTooLarge) {
			t.Fatalf("%s past the bound: %v, want ErrBatchTooLarge", name, err)
		}
		if _, err := d.Get([]byte("x")); !errors.Is(err, ErrNotFound) {
			t.Fatalf("%s past the bound: x = %v, want ErrNotFound", name, err)
		}
	}
	if err := d.Put([]byte("x"), make([]byte, maxBatchSize)); !errors.Is(err, ErrBatchTooLarge) {
		t.Fatalf("Put past the bound: %v, want ErrBatchTooLarge", err)
	}
	if err := d.Write(filled("x", maxBatchSize)); err != nil {
		t.Fatalf("a batch of MaxBatchSize: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = openMem(t, fs, nil)
	defer d.Close()
	if v, err := d.Get([]byte("x")); err != nil || len(v) != maxBatchSize-batchHeaderLen-5 {
		t.Fatalf("after a reopen: %d bytes, %v", len(v), err)
	}
}
