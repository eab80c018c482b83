package filter

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkKeyHashes encodes and decodes the key-hash sets of 1,000,
// 50,000 and 1,000,000 random hashes (a table's keys), per key, and
// reports the encoding's size in bits per key.
func BenchmarkKeyHashes(b *testing.B) {
	for _, n := range []int{1000, 50_000, 1_000_000} {
		rng := rand.New(rand.NewPCG(uint64(n), 31))
		hs := make([]uint64, n)
		for i := range hs {
			hs[i] = rng.Uint64()
		}
		enc := AppendKeyHashes(nil, hs)
		bits := float64(8*len(enc)) / float64(n)
		b.Run(fmt.Sprintf("n=%d/encode", n), func(b *testing.B) {
			buf := make([]byte, 0, len(enc))
			defer threadCPU(b, n, "key")()
			for b.Loop() {
				buf = AppendKeyHashes(buf[:0], hs)
			}
			b.ReportMetric(bits, "bits/key")
		})
		b.Run(fmt.Sprintf("n=%d/decode", n), func(b *testing.B) {
			dst := make([]uint64, 0, n)
			defer threadCPU(b, n, "key")()
			for b.Loop() {
				var err error
				if dst, err = DecodeKeyHashes(enc, dst[:0]); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(bits, "bits/key")
		})
	}
}
