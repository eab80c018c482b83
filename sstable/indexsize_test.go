package sstable

import (
	"bytes"
	"slices"
	"testing"

	"github.com/monbandb/monban/internal/base"
)

// BenchmarkIndexBytes writes a table of bench/peers' shape (16-byte
// random keys, 100-byte random values, 4 KiB blocks, one version each)
// and reports what its index costs per data block and per key: the
// figure the compact index (format version 3) was built to shrink.
func BenchmarkIndexBytes(b *testing.B) {
	const n = 1 << 20
	rng := newRand(30)
	es := make([]entry, n)
	for i := range es {
		es[i] = entry{base.MakeInternalKey(randBytes(rng, 16), base.SeqNum(i+1), base.KindSet), randBytes(rng, 100)}
	}
	slices.SortFunc(es, func(a, b entry) int { return base.Compare(a.key, b.key) })
	var p Properties
	for b.Loop() {
		w := NewWriter(&memFile{}, WriterOptions{BloomBitsPerKey: 10})
		for _, e := range es {
			if err := w.Add(e.key, e.value); err != nil {
				b.Fatal(err)
			}
		}
		var err error
		if p, err = w.Finish(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(p.IndexBytes)/float64(p.NumDataBlocks), "index-B/block")
	b.ReportMetric(float64(p.IndexBytes)/float64(p.NumEntries), "index-B/key")
}

// BenchmarkSeekIndex is a Get's index work alone: find the block of a
// present key and its handle, in the pinned index of the bench table
// (sequential keys "k%015d", whose separators are long) and of a table of
// bench/peers' random 16-byte keys (short ones).
func BenchmarkSeekIndex(b *testing.B) {
	rng := newRand(30)
	random := make([][]byte, benchKeys)
	for i := range random {
		random[i] = randBytes(rng, 16)
	}
	slices.SortFunc(random, bytes.Compare)
	for _, tc := range []struct {
		name string
		key  func(i int) []byte
	}{
		{"sequential", func(i int) []byte { return benchKey(2 * i) }},
		{"random", func(i int) []byte { return random[i] }},
	} {
		b.Run(tc.name, func(b *testing.B) {
			w := NewWriter(&memFile{}, WriterOptions{})
			f := w.f.(*memFile)
			v := make([]byte, 100)
			for i := range benchKeys {
				if err := w.Add(base.MakeInternalKey(tc.key(i), base.SeqNum(i+1), base.KindSet), v); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := w.Finish(); err != nil {
				b.Fatal(err)
			}
			r := openTable(b, f.data, nil)
			defer r.Close()
			keys := make([][]byte, 4096)
			for i := range keys {
				keys[i] = tc.key(int(uint64(i) * 0x9e3779b97f4a7c15 % benchKeys))
			}
			trailer := base.SeekKey(nil, base.MaxSeqNum).Trailer
			var sum uint64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var c indexCursor
				j, err := r.seekIndex(&c, 0, keys[i%len(keys)], trailer)
				if err != nil {
					b.Fatal(err)
				}
				sum += r.blockHandle(&c, j).offset
				c.release()
			}
			seekSink = sum
		})
	}
}

var seekSink uint64 // keeps the benchmark's handles from being optimised away
