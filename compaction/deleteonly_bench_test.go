package compaction

import (
	"fmt"
	"testing"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/keyspan"
	"github.com/monbandb/monban/internal/manifest"
)

// BenchmarkPickDeleteOnly is one scheduling pass over a tree whose every
// table holds range tombstones, none of which deletes a table wholly, so
// that each pass looks at everything and drops nothing, as after every
// flush of a DeleteRange-heavy load: 8 L0 tables, 100 in L5 and 1000 in
// L6, of 1000 tombstones each.
//
//   - points: each tombstone deletes one key (lsm's BenchmarkDeleteRange).
//   - halves: each L0 tombstone covers the first half of an L6 table's
//     range, newer than it, so every L6 table is covered at its first key
//     and not at its last.
func BenchmarkPickDeleteOnly(b *testing.B) {
	key := func(i int) []byte { return fmt.Appendf(nil, "%010d", i) }
	const (
		perTable = 1000
		l6Width  = 4 * perTable // keys per L6 table
		keys     = 1000 * l6Width
	)
	build := func(halves bool) *manifest.Version {
		var v manifest.Version
		num := uint64(0)
		// level puts n tables of perTable tombstones at seq in level,
		// table i over keys [i*width, (i+1)*width) (width 0: all keys),
		// tombstone j of it over key first+j*stride.
		level := func(l, n, width, first, stride int, seq base.SeqNum) {
			for i := range n {
				num++
				lo, hi := i*width, (i+1)*width-1
				if width == 0 {
					hi = keys
				}
				ts := make([]keyspan.Tombstone, perTable)
				for j := range ts {
					k := lo + first + j*stride
					ts[j] = keyspan.Tombstone{Start: key(k), End: append(key(k), 0), Seq: seq}
				}
				f := table(num, string(key(lo)), string(key(hi)), 1<<20)
				f.SmallestSeq, f.LargestSeq = seq, seq
				f.SetRangeDels(keyspan.Fragment(ts))
				v.Levels[l] = append(v.Levels[l], f)
			}
		}
		level(6, 1000, l6Width, 0, 4, 10)
		level(5, 100, 10*l6Width, 1, 40, 20)
		for i := range 8 {
			// L0 tables each span the whole key space.
			level(0, 1, 0, 2+i%2, keys/perTable, base.SeqNum(100-i))
		}
		if halves {
			num++
			var ts []keyspan.Tombstone
			for i := range 1000 {
				lo := i * l6Width
				ts = append(ts, keyspan.Tombstone{Start: key(lo), End: key(lo + l6Width/2), Seq: 200})
			}
			f := table(num, string(key(0)), string(key(keys)), 1<<20)
			f.SmallestSeq, f.LargestSeq = 200, 200
			f.SetRangeDels(keyspan.Fragment(ts))
			v.Levels[0] = append([]*manifest.FileMetadata{f}, v.Levels[0]...)
		}
		return &v
	}
	for _, bc := range []struct {
		name   string
		halves bool
	}{{"points", false}, {"halves", true}} {
		b.Run(bc.name, func(b *testing.B) {
			v := build(bc.halves)
			b.ReportAllocs()
			for b.Loop() {
				if c, _ := PickDeleteOnly(v, noSnapshots, nil); c != nil {
					b.Fatalf("picked %v", c)
				}
			}
		})
	}
}
