package sstable

import (
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
