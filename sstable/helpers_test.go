package sstable

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/vfs"
)

// memFile is a vfs.File over a byte slice, so tests can corrupt a table
// byte by byte.
type memFile struct {
	data   []byte
	closed bool
}

var _ vfs.File = (*memFile)(nil)

func (f *memFile) Read([]byte) (int, error) { return 0, io.EOF }
func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if f.closed {
		return 0, errors.New("memFile: closed")
	}
	if off < 0 || off > int64(len(f.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
func (f *memFile) Write(p []byte) (int, error) { f.data = append(f.data, p...); return len(p), nil }
func (f *memFile) Close() error                { f.closed = true; return nil }
func (f *memFile) Sync() error                 { return nil }
func (f *memFile) Size() (int64, error)        { return int64(len(f.data)), nil }

type entry struct {
	key   base.InternalKey
	value []byte
}

func buildTable(t testing.TB, entries []entry, opts WriterOptions) ([]byte, Properties) {
	t.Helper()
	f := &memFile{}
	w := NewWriter(f, opts)
	for _, e := range entries {
		if err := w.Add(e.key, e.value); err != nil {
			t.Fatalf("Add(%v): %v", e.key, err)
		}
	}
	est := w.EstimatedSize()
	p, err := w.Finish()
	if err != nil {
		t.Fatalf("Finish: %v", err)
	}
	// The estimate covers data and index blocks, not filter, properties
	// and footer; it exceeds the file only by what snappy saves on the
	// pending block.
	slack := uint64(0)
	if opts.Compression {
		slack = p.RawKeyBytes + p.RawValueBytes
	}
	if est > p.FileSize+slack || est+4096 < p.DataBytes {
		t.Fatalf("EstimatedSize %d before Finish; file %d, data %d", est, p.FileSize, p.DataBytes)
	}
	if !f.closed {
		t.Fatal("Finish did not close the file")
	}
	return f.data, p
}

func openTable(t testing.TB, data []byte, c *Cache) *Reader {
	t.Helper()
	r, err := Open(&memFile{data: data}, ReaderOptions{Cache: c, FileNum: 7})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return r
}

// model answers Get from a sorted slice of entries.
func modelGet(entries []entry, ukey []byte, seq base.SeqNum) (value []byte, kind base.Kind, found bool) {
	i, _ := slices.BinarySearchFunc(entries, base.SeekKey(ukey, seq), func(e entry, k base.InternalKey) int {
		return base.Compare(e.key, k)
	})
	if i < len(entries) && bytes.Equal(entries[i].key.UserKey, ukey) {
		return entries[i].value, entries[i].key.Kind(), true
	}
	return nil, 0, false
}

func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// randEntries draws one of the shapes the issue lists: empty, one key,
// huge keys and values, many versions of one key, a general mix with
// tombstones, or (shape 5) keys with long shared prefixes, an empty one,
// ones that extend the key before, and versions of one key that span
// blocks. Entries come back sorted and unique.
func randEntries(rng *rand.Rand, shape int) []entry {
	var es []entry
	add := func(uk []byte, seq base.SeqNum, kind base.Kind, v []byte) {
		if kind == base.KindDelete {
			v = nil
		}
		es = append(es, entry{base.MakeInternalKey(uk, seq, kind), v})
	}
	kind := func() base.Kind { return base.Kind(rng.IntN(4)/3 ^ 1) } // 1 in 4 a tombstone
	switch shape {
	case 0: // empty
	case 1: // one key
		add(randBytes(rng, rng.IntN(8)), base.SeqNum(rng.IntN(100)+1), base.KindSet, randBytes(rng, rng.IntN(50)))
	case 2: // huge keys and values, 1 MiB
		for i := 0; i < 3; i++ {
			uk := append(bytes.Repeat([]byte{byte('a' + i)}, 1<<20-1), byte(rng.IntN(256)))
			add(uk, base.SeqNum(i+1), base.KindSet, randBytes(rng, 1<<20))
		}
		add([]byte("small"), 9, base.KindSet, []byte("v"))
	case 3: // many versions of one key
		uk := []byte("the-key")
		for s := 1; s <= 600; s++ {
			add(uk, base.SeqNum(s), kind(), randBytes(rng, rng.IntN(20)))
		}
	case 5: // keys that make every kind of separator (compactIndexModel's)
		for _, k := range ascendingKeys(rng, rng.IntN(2000)+1) {
			ik, _ := base.DecodeInternalKey(k)
			add(ik.UserKey, ik.Seq(), kind(), randBytes(rng, rng.IntN(60)))
		}
	default: // general mix
		n := rng.IntN(3000) + 1
		for i := 0; i < n; i++ {
			uk := []byte{byte('a' + rng.IntN(6)), byte('a' + rng.IntN(26)), byte('a' + rng.IntN(26))}
			uk = append(uk, randBytes(rng, rng.IntN(3))...)
			add(uk, base.SeqNum(rng.IntN(1000)+1), kind(), randBytes(rng, rng.IntN(120)))
		}
	}
	slices.SortFunc(es, func(a, b entry) int { return base.Compare(a.key, b.key) })
	return slices.CompactFunc(es, func(a, b entry) bool { return base.Compare(a.key, b.key) == 0 })
}

func randOptions(rng *rand.Rand) WriterOptions {
	return WriterOptions{
		BlockSize:            []int{1, 64, 512, 4096}[rng.IntN(4)],
		BlockRestartInterval: []int{1, 2, 16}[rng.IntN(3)],
		BloomBitsPerKey:      []float64{0, 10, 7.3, 12.3456}[rng.IntN(4)],
		Compression:          rng.IntN(2) == 0,
		TableID:              []uint64{0, rng.Uint64() | 1}[rng.IntN(2)],
		KeyHashes:            rng.IntN(2) == 0,
	}
}

func errorsIs(err, target error) bool { return errors.Is(err, target) }

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed)) }

func putLE32(b []byte, v uint32) { binary.LittleEndian.PutUint32(b, v) }

func leUint64(b []byte) uint64 { return binary.LittleEndian.Uint64(b) }

func crc32Castagnoli(b []byte) uint32 { return crc32.Checksum(b, crcTable) }

// pinnedIndexBytes is the memory a pinned Reader's index partitions lie
// in.
func pinnedIndexBytes(r *Reader) int { return len(r.ix.keep[len(r.ix.keep)-1].Bytes()) }
