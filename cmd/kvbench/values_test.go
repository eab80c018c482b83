package main

import (
	"testing"

	"github.com/golang/snappy"
)

// TestValueSourceCompressionRatio: values compress to about the fraction
// -compression_ratio asks for.
func TestValueSourceCompressionRatio(t *testing.T) {
	for _, ratio := range []float64{1, 0.5, 0.25} {
		v := newValueSource(100, ratio, 1)
		var raw []byte
		for i := range uint64(1000) {
			raw = append(raw, v.value(i)...)
		}
		got := float64(len(snappy.Encode(nil, raw))) / float64(len(raw))
		if got < ratio-0.1 || got > ratio+0.1 {
			t.Errorf("-compression_ratio %.2f: values compress to %.2f", ratio, got)
		}
	}
}
