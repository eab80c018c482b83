package lsm

import "github.com/monbandb/monban/sstable"

// An iterator with both bounds set asks each table's range filter
// (Options.RangeFilter, sstable.Reader.MayContainRange) before it reads
// the table's index, the same place a prefix iterator asks the prefix
// filter: a table whose filter rules [LowerBound, UpperBound) out is read
// as empty by its levelIter. A range filter answers for the table's point
// keys only. That is enough: the iterator takes every table's range
// tombstones from the read state (readState.tableRangeDels), not from the
// levelIter, so a skipped table still deletes what its tombstones cover
// in the tables that are read. Memtables are not asked: they have no
// range filter, and are in memory anyway.

// rangeProbe asks a table's range filter about the iterator's bounds.
type rangeProbe struct {
	lower, upper []byte
	stats        *dbStats
}

// admits asks r's range filter whether it may hold a key in the bounds,
// and counts the question and a "no" (Stats.RangeProbes, RangeSkips).
func (p *rangeProbe) admits(r *sstable.Reader) bool {
	p.stats.rangeProbes.Add(1)
	if r.MayContainRange(p.lower, p.upper) {
		return true
	}
	p.stats.rangeSkips.Add(1)
	return false
}

// tableProbe is what a levelIter asks of each table before it reads it:
// the prefix filter when the iterator is bounded to a prefix, the range
// filter when both its bounds are set, either or both; nil asks nothing.
type tableProbe struct {
	prefix *prefixProbe
	ranges *rangeProbe
}

// admits reports whether neither filter asked rules r out. The range
// filter is asked only when the prefix filter says maybe.
func (t *tableProbe) admits(r *sstable.Reader) bool {
	return (t.prefix == nil || t.prefix.admits(r)) && (t.ranges == nil || t.ranges.admits(r))
}
