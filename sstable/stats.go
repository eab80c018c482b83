package sstable

import (
	"fmt"
	"strings"
	"sync/atomic"
)

// ReadStats count what a table's reads did. Each counter counts events,
// exactly:
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
//     properties) — once per open, kept apart from the read path.
//   - MetaCacheHits, MetaBlocksRead, MetaBytesRead: a paged table's index
//     partitions and filter pages (MetaBudget) found in the block cache,
//     and read from the file on the read path.
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

type readCounters struct {
	filterProbes, filterNegatives, filterFalsePositives atomic.Uint64
	prefixProbes, prefixNegatives                       atomic.Uint64
	rangeProbes, rangeNegatives                         atomic.Uint64
	cacheHits, blocksRead, bytesRead                    atomic.Uint64
	openBlocksRead, openBytesRead                       atomic.Uint64
	metaCacheHits, metaBlocksRead, metaBytesRead        atomic.Uint64
}

func (c *readCounters) snapshot() ReadStats {
	return ReadStats{
		FilterProbes: c.filterProbes.Load(), FilterNegatives: c.filterNegatives.Load(),
		FilterFalsePositives: c.filterFalsePositives.Load(),
		PrefixProbes:         c.prefixProbes.Load(), PrefixNegatives: c.prefixNegatives.Load(),
		RangeProbes: c.rangeProbes.Load(), RangeNegatives: c.rangeNegatives.Load(),
		CacheHits: c.cacheHits.Load(), BlocksRead: c.blocksRead.Load(), BytesRead: c.bytesRead.Load(),
		OpenBlocksRead: c.openBlocksRead.Load(), OpenBytesRead: c.openBytesRead.Load(),
		MetaCacheHits: c.metaCacheHits.Load(), MetaBlocksRead: c.metaBlocksRead.Load(), MetaBytesRead: c.metaBytesRead.Load(),
	}
}

// GetOutcome is how a Get ended in one table.
type GetOutcome uint8

const (
	// OutcomeOutOfRange: the key is outside [Smallest, Largest]; nothing
	// was consulted.
	OutcomeOutOfRange GetOutcome = iota
	// OutcomeFilterNegative: the filter said no; no block was read.
	OutcomeFilterNegative
	// OutcomeAbsent: the table holds no version of the key; if the filter
	// was consulted this was a false positive.
	OutcomeAbsent
	// OutcomeNotVisible: the table holds only versions newer than the
	// snapshot.
	OutcomeNotVisible
	// OutcomeFound: a version visible at the snapshot was found (its kind
	// says set or tombstone).
	OutcomeFound
)

func (o GetOutcome) String() string {
	switch o {
	case OutcomeOutOfRange:
		return "out of key range"
	case OutcomeFilterNegative:
		return "filter: absent"
	case OutcomeAbsent:
		return "not in table"
	case OutcomeNotVisible:
		return "only newer versions"
	case OutcomeFound:
		return "found"
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// GetTrace records the steps of one Reader.Get, for lsm's Explain. Get
// fills it in place and allocates nothing for it.
type GetTrace struct {
	Table            string // ReaderOptions.Name or the table file name
	InRange          bool
	FilterConsulted  bool
	FilterMayContain bool
	// BlockIndex is the data block looked at, -1 if none; BlockOffset and
	// BlockLength locate its stored bytes.
	BlockIndex               int
	BlockOffset, BlockLength uint64
	CacheHit                 bool // block came from the block cache, not the file
	// SharedBlock: the block was the one the lookup before read
	// (Reader.FindNext), from neither the cache nor the file again.
	SharedBlock bool
	Outcome     GetOutcome
	Found       InternalKey // the version found (UserKey nil)
}

// String renders the trace the way the read path is taught:
// "000007.sst: in range; filter: maybe; block 3 @8192+4011 read from file; not in table (false positive)".
func (t *GetTrace) String() string {
	var b strings.Builder
	b.WriteString(t.Table)
	b.WriteString(": ")
	if !t.InRange {
		b.WriteString("out of key range")
		return b.String()
	}
	b.WriteString("in range")
	if t.FilterConsulted {
		if !t.FilterMayContain {
			b.WriteString("; filter: absent (read avoided)")
			return b.String()
		}
		b.WriteString("; filter: maybe")
	} else {
		b.WriteString("; no filter")
	}
	if t.BlockIndex >= 0 {
		src := "read from file"
		switch {
		case t.SharedBlock:
			src = "held from the key before"
		case t.CacheHit:
			src = "block cache hit"
		}
		fmt.Fprintf(&b, "; block %d @%d+%d %s", t.BlockIndex, t.BlockOffset, t.BlockLength, src)
	}
	b.WriteString("; ")
	b.WriteString(t.Outcome.String())
	switch {
	case t.Outcome == OutcomeFound:
		fmt.Fprintf(&b, " #%d,%s", t.Found.Seq(), t.Found.Kind())
	case t.Outcome == OutcomeAbsent && t.FilterConsulted:
		b.WriteString(" (false positive)")
	}
	return b.String()
}
