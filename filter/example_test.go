package filter_test

import (
	"fmt"

	"github.com/monbandb/monban/filter"
)

// An SSTable writer adds its user keys, finishes the filter into the filter
// block, and a reader opens the block bytes in place. This is the worked
// example of docs/format.md, "Cache-line Bloom filter".
func ExampleCacheLineBuilder() {
	b := filter.NewCacheLineBuilder(10)
	b.AddKey([]byte("cat"))
	b.AddKey([]byte("dog"))
	block := b.Finish(nil)
	for off := 0; off < len(block); off += 16 {
		fmt.Printf("% x\n", block[off:min(off+16, len(block))])
	}

	f, err := filter.OpenCacheLine(block)
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Lines(), "line,", f.Probes(), "probes")
	fmt.Println("cat:", f.MayContain([]byte("cat")), "cow:", f.MayContain([]byte("cow")))
	// Output:
	// 00 00 00 10 00 40 00 10 0a 00 00 00 00 00 00 01
	// 00 00 00 00 20 00 10 02 00 00 00 00 00 00 00 00
	// 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00
	// 00 01 00 00 00 40 00 00 00 20 00 00 00 00 00 00
	// 01 00 00 00 06 01 43 4c
	// 1 line, 6 probes
	// cat: true cow: false
}

// A filter sized for 1,000 keys at 1% tells on itself when overfilled:
// EstimatedFPR reads the damage off the bits.
func ExampleBloom_EstimatedFPR() {
	f, err := filter.NewBloom(1000, 0.01)
	if err != nil {
		panic(err)
	}
	fmt.Println(f.Bits(), "bits,", f.Hashes(), "hashes")
	for i := range 2000 {
		f.Add(fmt.Appendf(nil, "key-%d", i))
	}
	fmt.Printf("added %d: fill %.2f, estimated FPR %.2f\n", f.Added(), f.FillRatio(), f.EstimatedFPR())
	// Output:
	// 9586 bits, 7 hashes
	// added 2000: fill 0.77, estimated FPR 0.16
}
