package lsm

import (
	"bytes"
	"fmt"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/memtable"
	"github.com/monbandb/monban/sstable"
)

// An iterator bounded to a prefix (IterOptions.Prefix) asks each source's
// filter once, before it reads anything of the source: a memtable whose
// filter rules the prefix out is left out of the merge, and a table whose
// filter does is read as empty by its levelIter, which moves on to the
// next table without reading its index or data. A Bloom filter can answer
// this question because a prefix is one value, hashed like a key
// (filter.PrefixHash); it cannot answer "is anything in [a, b)?" for a
// range that is no prefix, whose members are too many to hash.
//
// The bounds [Prefix, prefixEnd(Prefix)) hold every key that starts with
// the prefix's bytes, but not only the keys of that prefix: with a Split
// that cuts at a separator or at the whole key, "abc" starts with "ab"
// and has the prefix "abc". So the iterator also compares each key's
// prefix with Prefix, and as Split.Len is monotone (filter.Split,
// contract 2) it stops at the first key whose prefix lies beyond
// Prefix in its direction, instead of scanning on to the bound.

// prefixProbe is what an iterator bounded to a prefix asks of each
// source's filter: nil when no filter is asked (no Prefix, or
// Options.IgnoreFilters).
type prefixProbe struct {
	split *filter.Split
	hash  uint64 // filter.PrefixHash of the prefix, once for all sources
	stats *dbStats
}

// prefixFilter is a source's filter as the prefix probe asks it; a
// memtable and a table reader each answer "maybe" unless their filter
// was built with a Split of the probe's Name.
type prefixFilter interface {
	MayContainPrefix(split *filter.Split, prefixHash uint64) bool
}

var (
	_ prefixFilter = (*sstable.Reader)(nil)
	_ prefixFilter = (*memtable.Memtable)(nil)
)

// admits asks src's filter whether it may hold a key of the prefix, and
// counts the question and a "no" (Stats.PrefixProbes, PrefixSkips).
func (p *prefixProbe) admits(src prefixFilter) bool {
	p.stats.prefixProbes.Add(1)
	if src.MayContainPrefix(p.split, p.hash) {
		return true
	}
	p.stats.prefixSkips.Add(1)
	return false
}

// appendMemtable appends m's iterator to sources unless p rules m out;
// a nil p rules nothing out.
func (p *prefixProbe) appendMemtable(sources []base.InternalIterator, m *memtable.Memtable) []base.InternalIterator {
	if p != nil && !p.admits(m) {
		return sources
	}
	return append(sources, m.NewIter())
}

// prefixBounds returns the bounds of o narrowed to the keys that start
// with o.Prefix, or an error wrapping ErrInvalidOptions when there is no
// Split to cut keys with.
func (d *DB) prefixBounds(o *IterOptions) (lower, upper []byte, err error) {
	lower, upper = o.LowerBound, o.UpperBound
	if o.Prefix == nil {
		return lower, upper, nil
	}
	if d.opts.Split == nil {
		return nil, nil, fmt.Errorf("%w: IterOptions.Prefix without Options.Split", ErrInvalidOptions)
	}
	if lower == nil || bytes.Compare(lower, o.Prefix) < 0 {
		lower = o.Prefix
	}
	if end := prefixEnd(o.Prefix); end != nil && (upper == nil || bytes.Compare(end, upper) < 0) {
		upper = end
	}
	return lower, upper, nil
}

// prefixEnd returns the smallest key greater than every key that starts
// with p: p with its last byte below 0xff incremented and the bytes after
// it cut. nil when there is none (p is empty or all 0xff): no upper bound.
func prefixEnd(p []byte) []byte {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] != 0xff {
			end := append([]byte(nil), p[:i+1]...)
			end[i]++
			return end
		}
	}
	return nil
}

// prefixOrder compares key's prefix with the iterator's prefix: 0 when
// the iterator has none or they are equal.
func (it *Iter) prefixOrder(key []byte) int {
	if it.prefix == nil {
		return 0
	}
	return bytes.Compare(it.split.Prefix(key), it.prefix)
}
