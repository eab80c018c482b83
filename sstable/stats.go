package sstable

import "sync/atomic"

// ReadStats count what a table's reads through this Reader did. Each
// counter counts events, exactly, and they add up for every Reader:
// point lookups are counted only by Get, wholly — its filter probe, the
// probe's answer and the data block it cost, from its Lookup — and Find,
// FindNext and MayContainHashes count nothing, for their caller probes a
// filter the Reader may never see (lsm asks a copy of it, with no Reader
// open) and counts from the Lookups itself.
//
//   - FilterProbes: Get calls that consulted the filter (in key range, table
//     has a filter). MayContainHash is not counted.
//   - FilterNegatives: probes answered "no" — each one a data-block read
//     avoided.
//   - FilterFalsePositives: probes answered "maybe" for a user key of which
//     the table holds no version at all (each cost one data-block read).
//   - PrefixProbes, PrefixNegatives: MayContainPrefix calls that consulted
//     the filter (it holds the split's prefixes), and those answered "no".
//   - RangeProbes, RangeNegatives: MayContainRange calls that consulted
//     the range filter, and those answered "no".
//   - CacheHits: data blocks found in the block cache (Get and iterators).
//   - BlocksRead, BytesRead: data blocks read from the file by Get and
//     iterators, bytes including block trailers.
//   - OpenBlocksRead, OpenBytesRead: what Open read (footer, index, filter,
//     properties) — once per open — and each read of the key-hash block
//     (AppendKeyHashes), kept apart from the read path.
//   - MetaCacheHits, MetaBlocksRead, MetaBytesRead: a paged table's index
//     partitions and filter pages (MetaBudget) found in the block cache,
//     and read from the file on the read path (by every lookup and
//     iterator: the budget sums them for lsm's Stats).
type ReadStats struct {
	FilterProbes, FilterNegatives, FilterFalsePositives uint64
	PrefixProbes, PrefixNegatives                       uint64
	RangeProbes, RangeNegatives                         uint64
	CacheHits, BlocksRead, BytesRead                    uint64
	OpenBlocksRead, OpenBytesRead                       uint64
	MetaCacheHits, MetaBlocksRead, MetaBytesRead        uint64
}

// Add adds o's counters to s, so a level's tables can be summed.
func (s *ReadStats) Add(o ReadStats) {
	s.FilterProbes += o.FilterProbes
	s.FilterNegatives += o.FilterNegatives
	s.FilterFalsePositives += o.FilterFalsePositives
	s.PrefixProbes += o.PrefixProbes
	s.PrefixNegatives += o.PrefixNegatives
	s.RangeProbes += o.RangeProbes
	s.RangeNegatives += o.RangeNegatives
	s.CacheHits += o.CacheHits
	s.BlocksRead += o.BlocksRead
	s.BytesRead += o.BytesRead
	s.OpenBlocksRead += o.OpenBlocksRead
	s.OpenBytesRead += o.OpenBytesRead
	s.MetaCacheHits += o.MetaCacheHits
	s.MetaBlocksRead += o.MetaBlocksRead
	s.MetaBytesRead += o.MetaBytesRead
}

// readCounters are a Reader's ReadStats as they are counted. A filter
// probe is counted once, in filterMaybes or filterNegatives by its answer,
// and FilterProbes is their sum: one atomic add per probe, not two, on
// the path of a Get the filter rejects.
type readCounters struct {
	filterMaybes, filterNegatives, filterFalsePositives atomic.Uint64
	prefixProbes, prefixNegatives                       atomic.Uint64
	rangeProbes, rangeNegatives                         atomic.Uint64
	cacheHits, blocksRead, bytesRead                    atomic.Uint64
	openBlocksRead, openBytesRead                       atomic.Uint64
	metaCacheHits, metaBlocksRead, metaBytesRead        atomic.Uint64
}

func (c *readCounters) snapshot() ReadStats {
	negatives := c.filterNegatives.Load()
	return ReadStats{
		FilterProbes: c.filterMaybes.Load() + negatives, FilterNegatives: negatives,
		FilterFalsePositives: c.filterFalsePositives.Load(),
		PrefixProbes:         c.prefixProbes.Load(), PrefixNegatives: c.prefixNegatives.Load(),
		RangeProbes: c.rangeProbes.Load(), RangeNegatives: c.rangeNegatives.Load(),
		CacheHits: c.cacheHits.Load(), BlocksRead: c.blocksRead.Load(), BytesRead: c.bytesRead.Load(),
		OpenBlocksRead: c.openBlocksRead.Load(), OpenBytesRead: c.openBytesRead.Load(),
		MetaCacheHits: c.metaCacheHits.Load(), MetaBlocksRead: c.metaBlocksRead.Load(), MetaBytesRead: c.metaBytesRead.Load(),
	}
}

// count adds what one Get did, from its Lookup, after the fact: the
// lookup itself counts nothing, so that a caller that counts on its own
// (lsm, per level) pays no atomic add for counters it does not read. It
// counts as LookupCounts.Count does, straight into the atomics, with no
// LookupCounts built and added in between, which made a Get dearer
// (BenchmarkGet/absent/filter).
func (c *readCounters) count(l *Lookup) {
	c.countFilter(l)
	c.block(l.From, l.Length)
}

// countFilter adds l's filter probe, the whole of a Get the filter
// ended (no block looked at), which Get counts with it alone: it stays
// within the inliner's budget, and count, with the block too, does not
// (BenchmarkGet/absent/filter-no).
func (c *readCounters) countFilter(l *Lookup) {
	switch {
	case !l.FilterAsked:
	case l.Outcome == OutcomeFilteredOut:
		c.filterNegatives.Add(1)
	case l.Outcome == OutcomeNoVersion:
		c.filterFalsePositives.Add(1)
		fallthrough
	default:
		c.filterMaybes.Add(1)
	}
}

// block adds a data block of length stored bytes that a Get or an
// iterator looked at; ReadStats count the bytes read with the trailer.
func (c *readCounters) block(from BlockSource, length uint64) {
	switch from {
	case BlockFromCache:
		c.cacheHits.Add(1)
	case BlockFromFile:
		c.blocksRead.Add(1)
		c.bytesRead.Add(length + blockTrailerLen)
	}
}
