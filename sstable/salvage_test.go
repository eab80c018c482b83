package sstable

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"syscall"
	"testing"

	"github.com/monbandb/monban/internal/base"
)

// TestSalvageIterStepsOverDamagedBlocks: with data blocks damaged (the
// first, one in the middle, the last, two at once), an Iter stops with
// corruption at the first, and a salvage iterator yields every entry of
// every other block, in order, and one Lost error, wrapping corruption,
// for each damaged block. A block the disk fails to read is no damage: the
// salvage iterator stops there with the disk's error.
func TestSalvageIterStepsOverDamagedBlocks(t *testing.T) {
	es, data, _ := sealTwin(t, 'a', 1)
	// The block each entry is in, from an intact reader.
	r := openTable(t, data, nil)
	blockOf := make([]int, len(es))
	it := r.NewIter(nil, nil)
	i := 0
	for ok := it.First(); ok; ok = it.Next() {
		blockOf[i] = it.idx
		i++
	}
	if err := it.Close(); err != nil || i != len(es) {
		t.Fatalf("intact table: %d of %d entries, %v", i, len(es), err)
	}
	n := r.ix.numBlocks()
	handles := make([]handle, n)
	for b := range n {
		if err := r.holdPart(&it.ic, r.ix.partOf(b)); err != nil {
			t.Fatal(err)
		}
		handles[b] = r.blockHandle(&it.ic, b)
	}
	it.ic.release()
	r.Close()
	if n < 4 {
		t.Fatalf("%d data blocks, want a few", n)
	}

	for _, damaged := range [][]int{{0}, {n / 2}, {n - 1}, {1, n - 2}} {
		t.Run(fmt.Sprint(damaged), func(t *testing.T) {
			bad := slices.Clone(data)
			for _, b := range damaged {
				bad[handles[b].offset+handles[b].length/2] ^= 0x10
			}
			r, err := Open(&memFile{data: bad}, ReaderOptions{FileNum: 7})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			plain := r.NewIter(nil, nil)
			for ok := plain.First(); ok; ok = plain.Next() {
			}
			if err := plain.Close(); !errors.Is(err, base.ErrCorruption) {
				t.Fatalf("an Iter over the damage: %v, want corruption", err)
			}
			var want []entry
			for i, e := range es {
				if !slices.Contains(damaged, blockOf[i]) {
					want = append(want, e)
				}
			}
			s := r.NewSalvageIter()
			var got []entry
			for ok := s.First(); ok; ok = s.Next() {
				k := s.Key()
				got = append(got, entry{base.InternalKey{UserKey: slices.Clone(k.UserKey), Trailer: k.Trailer}, slices.Clone(s.Value())})
			}
			lost := s.Lost()
			if err := s.Close(); err != nil {
				t.Fatalf("salvage: %v", err)
			}
			if len(got) != len(want) || !slices.EqualFunc(got, want, func(a, b entry) bool {
				return base.Compare(a.key, b.key) == 0 && bytes.Equal(a.value, b.value)
			}) {
				t.Fatalf("salvaged %d entries, want the %d outside blocks %v", len(got), len(want), damaged)
			}
			if len(lost) != len(damaged) {
				t.Fatalf("%d blocks lost (%v), want %d", len(lost), lost, len(damaged))
			}
			for _, err := range lost {
				if !errors.Is(err, base.ErrCorruption) {
					t.Fatalf("lost block: %v, want corruption", err)
				}
			}
		})
	}

	t.Run("disk error", func(t *testing.T) {
		h := handles[n/2]
		r, err := Open(&eioFile{memFile: memFile{data: data}, from: int64(h.offset), to: int64(h.end())}, ReaderOptions{FileNum: 7})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		s := r.NewSalvageIter()
		for ok := s.First(); ok; ok = s.Next() {
		}
		if err := s.Close(); !errors.Is(err, syscall.EIO) || len(s.Lost()) != 0 {
			t.Fatalf("salvage over a block the disk cannot read: %v, %d lost; want EIO, none lost", err, len(s.Lost()))
		}
	})
}

// eioFile fails every read that touches [from, to).
type eioFile struct {
	memFile
	from, to int64
}

func (f *eioFile) ReadAt(p []byte, off int64) (int, error) {
	if off < f.to && off+int64(len(p)) > f.from {
		return 0, syscall.EIO
	}
	return f.memFile.ReadAt(p, off)
}
