package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/lsm"
)

// The prefix workloads run iterators bounded to one prefix
// (lsm.IterOptions.Prefix): prefixmissing over prefixes that hold no key,
// prefixrandom over prefixes that hold written keys, each iterated to its
// end. A run that uses prefixes lays its keys out in runs of one prefix
// each (keySpace) and opens the DB with Options.Split cutting keys after
// -prefix_size bytes, so every table's filter holds its keys' prefixes
// and an iterator over an absent prefix leaves out the tables whose
// filter rules it out, without reading their index or data.

// maxPrefixDigits is the most digits -prefix_size may leave after the
// prefix: a prefix of 10^9 keys is already more than any -num.
const maxPrefixDigits = 9

func isPrefixWorkload(name string) bool { return strings.HasPrefix(name, "prefix") }

// usePrefixes sets -prefix_size to 0 unless it was given or a prefix
// workload runs: a Split adds each table's prefixes to its filter, which
// the other workloads do not ask for and would pay for in filter memory
// or false positives. A -prefix_size in use must leave the keys a prefix
// and at most maxPrefixDigits digits after it.
func (c *config) usePrefixes(given map[string]bool) error {
	if !given["prefix_size"] && !slices.ContainsFunc(c.benchmarks, isPrefixWorkload) {
		c.prefixSize = 0
		return nil
	}
	if lo := max(1, c.keySize-maxPrefixDigits); c.prefixSize < lo || c.prefixSize > c.keySize {
		return usageError("-prefix_size must be in %d..%d: leave at most %d digits of -key_size %d after the prefix", lo, c.keySize, maxPrefixDigits, c.keySize)
	}
	return nil
}

// keys is the run's key space: runs of 10^(key_size-prefix_size) numbers
// with prefixes, of -range_size big-endian integers with the range
// workloads (rangescan.go), of one number otherwise.
func (c *config) keys() keySpace {
	k := keySpace{num: c.num, keySize: c.keySize, group: 1}
	switch {
	case c.prefixSize > 0:
		for range c.keySize - c.prefixSize {
			k.group *= 10
		}
	case c.scanRanges:
		k.group, k.bigEndian = uint64(c.rangeSize), true
	}
	return k
}

// split is the Options.Split of a run with prefixes, nil without: a key's
// first -prefix_size bytes. Its Name carries the size, which a table
// records (property filter.prefix_split), so that a DB reopened with
// another -prefix_size never skips a table built with this one.
func (c *config) split() *filter.Split {
	if c.prefixSize == 0 {
		return nil
	}
	n := c.prefixSize
	return &filter.Split{Name: "kvbench.fixed" + strconv.Itoa(n), Len: func(k []byte) int { return min(len(k), n) }}
}

func digits(n uint64) int { return len(strconv.FormatUint(n, 10)) }

// prefixScan runs -reads iterators, each bounded to a random prefix: one
// that holds no key (missing) or one that holds written keys.
func (b *bench) prefixScan(name string, missing bool) (*record, error) {
	// A prefix is in the tables' Bloom filters: a missing one has the
	// filters' promise (Stats.ExpectedFalsePositives).
	rec, d, err := b.scanRuns(name, missing, missing, func(t *thread, n uint64) *lsm.IterOptions {
		return &lsm.IterOptions{Prefix: b.keys.key(t.key, n)[:b.cfg.prefixSize]}
	})
	if err != nil {
		return nil, err
	}
	rec.Reads.Prefixes = &tableSkips{Probes: d.PrefixProbes, Skips: d.PrefixSkips}
	if !missing {
		rec.Note = fmt.Sprintf("%s keys per prefix", fixed(2, perOp(uint64(rec.Found), rec.Ops)))
	}
	return rec, nil
}

// scanRuns runs -reads iterators, each over a random run of key numbers
// (a prefix, a range): a missing run or one of written keys, bounded by
// what bound returns for the run's first number n. An op is one
// iterator: NewIter, First, Next to its end, Close; found counts the keys
// the iterators returned. promised asks for the Bloom filters' promise
// (readRecord). It returns the record and the Stats difference across the
// workload, for the caller to add what its filter did.
func (b *bench) scanRuns(name string, missing, promised bool, bound func(t *thread, n uint64) *lsm.IterOptions) (*record, lsm.Stats, error) {
	keyOf := b.keys.numbers(missing)
	w, err := b.startWindow(false)
	if err != nil {
		return nil, lsm.Stats{}, err
	}
	r, err := b.runOps(name, b.cfg.reads, func(t *thread, i int) error {
		it := b.db.NewIter(bound(t, keyOf(t.rng.IntN(b.keys.runs())*int(b.keys.group))))
		for ok := it.First(); ok; ok = it.Next() {
			t.found++
			t.bytes += int64(len(it.Key()) + len(it.Value()))
		}
		return errors.Join(it.Err(), it.Close())
	})
	if err != nil {
		return nil, lsm.Stats{}, err
	}
	rec, d, err := b.readRecord(name, r, w, promised)
	if err != nil {
		return nil, lsm.Stats{}, err
	}
	b.scanReads(rec.Reads, d, w, r.ops)
	return rec, d, nil
}
