package compaction

import (
	"fmt"
	"testing"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/manifest"
)

// BenchmarkPickElisionOnlyKeptTable is the pick a snapshot's Close makes
// (lsm.Snapshot.Close) on a last-level table of n overlapping range
// tombstones that snapshots between them kept whole, some 2n fragments of
// up to n sequence numbers each: what a pick costs must not grow with the
// sequence numbers (`go test -run XXX -bench PickElisionOnlyKeptTable
// ./compaction/`).
func BenchmarkPickElisionOnlyKeptTable(b *testing.B) {
	for _, n := range []int{100, 1000} {
		b.Run(fmt.Sprintf("tombstones=%d", n), func(b *testing.B) {
			var ts []any
			for i := range n {
				ts = append(ts, fmt.Sprintf("k%05d", i), fmt.Sprintf("k%05d", i+n), i+1)
			}
			var v manifest.Version
			v.Levels[manifest.NumLevels-1] = []*manifest.FileMetadata{tombs(table(1, "k", "l", 1), ts...)}
			snaps := snapshotsAt(1)
			b.ResetTimer()
			for range b.N {
				if c, waiting := PickElisionOnly(&v, snaps, nil); c != nil || waiting.Hi != base.SeqNum(n) {
					b.Fatalf("picked %v, waiting %v: want none, waiting up to %d", c, waiting, n)
				}
			}
		})
	}
}
