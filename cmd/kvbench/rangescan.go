package main

import (
	"fmt"
	"math"
	"slices"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/lsm"
)

// The range workloads run iterators with both bounds set
// (lsm.IterOptions.LowerBound and UpperBound) over -range_size adjacent
// key numbers: rangemissing over a run holding no key, rangerandom over a
// run of written keys, each iterated to its end. A run that uses them
// lays its keys out in runs of -range_size big-endian integers
// (keySpace) and opens the DB with Options.RangeFilter at
// -range_filter_bits bits per key, tuned for ranges of -range_size, so
// every table holds a range filter over its keys and an iterator over an
// empty range leaves out the tables whose range filter rules its bounds
// out, without reading their index or data.

func isRangeScan(name string) bool { return name == "rangemissing" || name == "rangerandom" }

// Defaults in a run with a range workload: the ranges of 32
// adjacent integers (filter.DefaultGrafiteRangeLen too), and 16 bits per
// key, where an empty range passes a table's filter with probability at
// most 32/2^14 (filter.Grafite's bound ℓ/2^(B−2)).
const (
	defaultScanRange       = 32
	defaultRangeFilterBits = 16
)

// maxScanRange bounds -range_size for the range workloads: a run longer
// than that is a scan, not a short range, and would cut the key space
// into too few runs to pick from.
const maxScanRange = 1 << 20

// useRanges settles the flags the range workloads share with the rest:
// with one in the run, -range_size (deleterange's 1000 otherwise) and
// -range_filter_bits (no range filter otherwise) default to 32 and 16
// unless given. Keys are then big-endian integers, which prefixes cannot
// share a run with: a prefix of decimal digits is no prefix of them.
func (c *config) useRanges(given map[string]bool) error {
	c.scanRanges = slices.ContainsFunc(c.benchmarks, isRangeScan)
	if c.scanRanges {
		if !given["range_size"] {
			c.rangeSize = defaultScanRange
		}
		if !given["range_filter_bits"] {
			c.rangeFilterBits = defaultRangeFilterBits
		}
	}
	switch b := c.rangeFilterBits; {
	case b != 0 && (b < filter.GrafiteMinBitsPerKey || b > filter.GrafiteMaxBitsPerKey):
		return usageError("-range_filter_bits must be 0 or in %d..%d", filter.GrafiteMinBitsPerKey, filter.GrafiteMaxBitsPerKey)
	case !c.scanRanges:
		return nil
	case c.prefixSize > 0:
		return usageError("the range workloads write big-endian integer keys, which have no -prefix_size prefixes: run them apart from prefixmissing and prefixrandom")
	case c.keySize < 8:
		return usageError("-key_size must be at least 8 for the range workloads: an 8-byte big-endian integer begins each key")
	case c.rangeSize < 1 || c.rangeSize > maxScanRange:
		return usageError("-range_size must be in 1..%d for the range workloads", maxScanRange)
	}
	return nil
}

// rangeFilter is the run's Options.RangeFilter: none without
// -range_filter_bits, else tuned for ranges of -range_size.
func (c *config) rangeFilter() filter.GrafiteOptions {
	if c.rangeFilterBits == 0 {
		return filter.GrafiteOptions{}
	}
	return filter.GrafiteOptions{BitsPerKey: c.rangeFilterBits, RangeLen: uint64(c.rangeSize)}
}

// rangeScan runs -reads iterators, each bounded to a random run of
// -range_size key numbers: one that holds no key (missing) or one of
// written keys.
func (b *bench) rangeScan(name string, missing bool) (*record, error) {
	// The Bloom filters answer keys, not ranges: no promise of theirs.
	rec, d, err := b.scanRuns(name, missing, false, b.rangeBounds)
	if err != nil {
		return nil, err
	}
	rs := &tableSkips{Probes: d.RangeProbes, Skips: d.RangeSkips}
	if p := perOp(d.RangeProbes, rec.Ops); missing && p != nil && !b.filtersOff && b.cfg.rangeFilterBits > 0 {
		rs.Promised = ptr(*p * float64(b.cfg.rangeSize) / math.Exp2(float64(b.cfg.rangeFilterBits-2)))
	}
	rec.Reads.Ranges = rs
	if !missing {
		rec.Note = fmt.Sprintf("%s keys per range", fixed(2, perOp(uint64(rec.Found), rec.Ops)))
	}
	return rec, nil
}

// rangeBounds bounds an iterator to the run of -range_size key numbers
// n … n+range_size-1, in t's key buffers.
//
// The upper bound is the last key of the run with a zero byte appended,
// the least key above it, not the key of n+range_size: a range filter
// sees a key as its first 8 bytes, and keys below key(n+range_size) but
// above the run's (a key of those 8 bytes followed by fewer zeros) would
// share that key's integer, so the filter would have to ask for it too,
// and it is the first written key above a missing run.
// (filter.GrafiteBounds drops it only for an upper bound of at most 8
// bytes whose last byte is not zero.)
func (b *bench) rangeBounds(t *thread, n uint64) *lsm.IterOptions {
	if t.upper == nil {
		t.upper = make([]byte, b.keys.keySize+1) // key only rewrites the first keySize: the last byte stays 0
	}
	b.keys.key(t.upper, n+b.keys.group-1)
	return &lsm.IterOptions{LowerBound: b.keys.key(t.key, n), UpperBound: t.upper}
}
