package keyspan_test

import (
	"fmt"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/keyspan"
)

// The package doc's example: two overlapping tombstones, their fragments,
// what a reader sees at three snapshots, and the 19 bytes of the block.
func ExampleFragment() {
	spans := keyspan.Fragment([]keyspan.Tombstone{
		{Start: []byte("a"), End: []byte("c"), Seq: 5},
		{Start: []byte("b"), End: []byte("d"), Seq: 7},
	})
	for sp := range spans.All() {
		fmt.Println(sp)
	}
	for _, snap := range []base.SeqNum{4, 6, 7} {
		seq, ok := spans.Covering([]byte("b"), snap)
		fmt.Printf("\"b\" at %d: %d %v\n", snap, seq, ok)
	}
	fmt.Printf("% x\n", keyspan.Encode(nil, spans))
	// Output:
	// ["a", "b") #[5]
	// ["b", "c") #[7 5]
	// ["c", "d") #[7]
	// "b" at 4: 0 false
	// "b" at 6: 5 true
	// "b" at 7: 7 true
	// 01 03 01 61 01 62 01 05 00 01 63 02 07 02 00 01 64 01 07
}
