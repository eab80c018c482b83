package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/lsm"
)

// rangeLesson shows iterators with both bounds set asking the tables'
// range filters, on a DB of its own in dir with Options.RangeFilter at 16
// bits per key tuned for ranges of 32, whose keys are 8-byte big-endian
// integers (what the range filter separates): the runs 0–31, 64–95, …
// 448–479 compacted into the last level, and 40 and 490, in runs the
// last level does not hold, flushed to L0 above them. As in prefixLesson
// there is no block cache and the tables' reads are counted.
//
// [288, 320) is an empty run inside both tables' key ranges: both
// filters rule it out, no block is read. [224, 256) is empty too, but
// its upper bound, 256 as 8 bytes, ends in a zero byte: a shorter key,
// 0 0 0 0 0 0 1, sorts below it and zero-pads to 256, so the filter must
// be asked for 256 as well, which L6 holds, and L6 reads a block to find
// the range empty (filter.GrafiteBounds). [256, 288) holds 32 keys: L6
// reads them, L0's filter rules the run out.
func rangeLesson(dir string) (string, error) {
	db, files, err := openCounted(dir, 64<<10, func(o *lsm.Options) {
		o.RangeFilter = filter.GrafiteOptions{BitsPerKey: 16, RangeLen: 32}
	})
	if err != nil {
		return "", err
	}
	t := &teacher{db: db}
	put := func(n uint64) {
		t.check(db.Put(binary.BigEndian.AppendUint64(nil, n), []byte(strings.Repeat("v", 40))))
	}
	for n := uint64(0); n < 512; n++ {
		if n/32%2 == 0 {
			put(n)
		}
	}
	t.check(db.Compact())
	put(40)
	put(490)
	t.check(db.Flush())
	name := func(k []byte) string { return strconv.FormatUint(binary.BigEndian.Uint64(k), 10) }
	var b strings.Builder
	b.WriteString(t.treeOf(nil, name))
	filters := func(before, after lsm.Stats) string {
		return fmt.Sprintf("range filters asked %d, ruled the range out %d (Stats.RangeProbes, RangeSkips)",
			after.RangeProbes-before.RangeProbes, after.RangeSkips-before.RangeSkips)
	}
	for _, r := range [][2]uint64{{288, 320}, {224, 256}, {256, 288}} {
		lo, hi := binary.BigEndian.AppendUint64(nil, r[0]), binary.BigEndian.AppendUint64(nil, r[1])
		t.scanTrace(&b, files, fmt.Sprintf("LowerBound %d, UpperBound %d", r[0], r[1]),
			lsm.IterOptions{LowerBound: lo, UpperBound: hi}, filters, name, lo, hi)
	}
	return b.String(), errors.Join(t.err, db.Close())
}
