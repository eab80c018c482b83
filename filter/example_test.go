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

// A table's writer adds the points of its keys (big-endian integers
// here), finishes the range filter into its block, and a reader asks it
// whether a range of keys may hold one. This is the worked example of
// docs/format.md, "Grafite range filter".
func ExampleGrafiteBuilder() {
	b := filter.NewGrafiteBuilder(6, 4, 3)
	for _, x := range []uint64{3, 5, 100} {
		b.Add(x)
	}
	block := b.Finish(nil)
	for off := 0; off < len(block); off += 16 {
		fmt.Printf("% x\n", block[off:min(off+16, len(block))])
	}

	g, err := filter.OpenGrafite(block)
	if err != nil {
		panic(err)
	}
	fmt.Println("[6, 7]:", g.MayContainRange(6, 7), "[4, 6]:", g.MayContainRange(4, 6))
	// Output:
	// 47 46 01 04 03 00 00 00 03 00 00 00 00 00 00 00
	// 04 00 00 00 00 00 00 00 30 00 00 00 00 00 00 00
	// c5 09 00 00 00 00 00 00 0b 00 00 00 00 00 00 00
	// 02 00 00 00
	// [6, 7]: false [4, 6]: true
}

// A table's writer keeps the hash of each of its keys and appends their
// key-hash set to its key-hash block; Open decodes the sets of every
// table to build the tree-wide maplet from. This is the worked example of
// docs/format.md, "Key-hash set".
func ExampleAppendKeyHashes() {
	var hashes []uint64
	for _, k := range []string{"cat", "cow", "dog"} {
		hashes = append(hashes, filter.Hash([]byte(k)))
	}
	block := filter.AppendKeyHashes(nil, hashes)
	for off := 0; off < len(block); off += 16 {
		fmt.Printf("% x\n", block[off:min(off+16, len(block))])
	}

	tops, err := filter.DecodeKeyHashes(block, nil)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%x\n", tops)
	// Output:
	// 4b 48 01 23 03 00 00 00 c5 56 52 bc 09 b3 47 65
	// f1 4d 69 87 8e 01 00 00 08 01 00 01 00 00 00 00
	// 00 00 00 00
	// [19bc5256c5000000 3e2ca8f661000000 b63a1da537000000]
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

// Two levels holding 10% and 90% of the keys, and three holding 1%, 9% and
// 90%, at an average of 10 bits per key: Monkey's allocation moves bits to
// the small levels, where each bit removes more false positives, and the
// false positives an absent key meets (Σ FPR over the filters it probes)
// fall by a third and by half. At 1 bit per key the large level is better
// off with no filter at all.
func ExampleAllocateBitsPerKey() {
	for _, c := range []struct {
		levels []float64 // keys per level
		avg    float64
	}{{[]float64{1e6, 9e6}, 10}, {[]float64{1e5, 9e5, 9e6}, 10}, {[]float64{1e6, 9e6}, 1}} {
		bits := filter.AllocateBitsPerKey(c.levels, c.avg)
		uniform := make([]float64, len(c.levels))
		for i := range uniform {
			uniform[i] = c.avg
		}
		fmt.Printf("%v bits/key: uniform Σ FPR %.5f; %.2f bits/key: Σ FPR %.5f\n",
			c.avg, filter.ExpectedFalsePositives(uniform), bits, filter.ExpectedFalsePositives(bits))
	}
	// Output:
	// 10 bits/key: uniform Σ FPR 0.01915; [14.55 9.49] bits/key: Σ FPR 0.01330
	// 10 bits/key: uniform Σ FPR 0.02873; [20.28 14.71 9.41] bits/key: Σ FPR 0.01380
	// 1 bits/key: uniform Σ FPR 1.26424; [10.00 0.00] bits/key: Σ FPR 1.00958
}
