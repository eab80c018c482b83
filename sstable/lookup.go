package sstable

import (
	"fmt"
	"strings"
)

// Lookup is what one table lookup (Get; Probe, then Find or FindNext) did, the one
// record of it: the lookup fills it in place, every field every time, and
// its caller counts from it and explains from it after the fact — lsm's
// per-level counters and Explain's steps are made from it, and Get counts
// the Reader's ReadStats from it. It is small and holds no pointer, so a
// lookup fills one on the caller's stack and allocates nothing for it.
type Lookup struct {
	// Outcome is how the lookup ended: never OutcomeSearchEach or
	// OutcomeRangeDeleted, which are the read path's above the tables.
	Outcome Outcome
	// FilterAsked: the table's filter was asked (by the lookup, or for
	// Find and FindNext by its caller). It said absent when Outcome is
	// OutcomeFilteredOut, maybe otherwise.
	FilterAsked bool
	// From says where the data block looked at came from, BlockNone if the
	// lookup ended before one (sub-steps a–c). Block, Offset and Length
	// locate it (the index's handle: stored bytes, trailer excluded) when
	// From is not BlockNone.
	From           BlockSource
	Block          int
	Offset, Length uint64
	// Seq is the sequence number of the version found (OutcomeFound,
	// OutcomeTombstone), 0 otherwise.
	Seq SeqNum
}

// LookupCounts are what table lookups did, counted from their Lookups
// as plain integers, so that a caller sums a batch of lookups and adds
// the sums to shared counters once, as lsm does for its per-level Stats.
// The Reader counts a Get's Lookup the same way in its ReadStats.
type LookupCounts struct {
	// FilterProbes counts lookups that asked the table's filter;
	// FilterNegatives those it answered absent, FilterFalsePositives those
	// it answered maybe for a key the table holds no version of.
	FilterProbes, FilterNegatives, FilterFalsePositives uint64
	// CacheHits and BlocksRead count data blocks found in the block cache
	// and read from the file (a block held from the lookup before,
	// BlockFromCursor, was counted for that one); BytesRead the stored
	// bytes of the latter, block trailers excluded.
	CacheHits, BlocksRead, BytesRead uint64
}

// Count adds one lookup.
func (c *LookupCounts) Count(l *Lookup) {
	if l.FilterAsked {
		c.FilterProbes++
		switch l.Outcome {
		case OutcomeFilteredOut:
			c.FilterNegatives++
		case OutcomeNoVersion:
			c.FilterFalsePositives++
		}
	}
	switch l.From {
	case BlockFromCache:
		c.CacheHits++
	case BlockFromFile:
		c.BlocksRead++
		c.BytesRead += l.Length
	}
}

// BlockSource says where a lookup's data block came from.
type BlockSource uint8

const (
	// BlockNone: no data block was looked at.
	BlockNone BlockSource = iota
	// BlockFromFile: read from the file (then cached).
	BlockFromFile
	// BlockFromCache: found in the block cache.
	BlockFromCache
	// BlockFromCursor: the block the lookup before read (FindNext), from
	// neither the cache nor the file again; counted once, for that lookup.
	BlockFromCursor
)

func (s BlockSource) String() string {
	switch s {
	case BlockNone:
		return "no block"
	case BlockFromFile:
		return "read from file"
	case BlockFromCache:
		return "block cache hit"
	case BlockFromCursor:
		return "held from the key before"
	}
	return fmt.Sprintf("source(%d)", uint8(s))
}

// Outcome is how a lookup in one source ended: a table's (Lookup), and
// in lsm's Explain a memtable's and the read path's above them too — one
// type, so that a table step's outcome is its lookup's, unconverted. A
// table lookup ends in one of the first six.
type Outcome uint8

const (
	// OutcomeOutOfRange: the source's key range does not cover the key
	// (sub-step a; in lsm also a level none of whose tables covers it).
	// Nothing was read.
	OutcomeOutOfRange Outcome = iota
	// OutcomeFilteredOut: the filter said absent (sub-step b): no index or
	// block lookup, no tree search.
	OutcomeFilteredOut
	// OutcomeNoVersion: the source holds no version of the key. After a
	// filter's maybe, that answer was a false positive.
	OutcomeNoVersion
	// OutcomeNotVisible: the source holds only versions newer than the
	// read's sequence number.
	OutcomeNotVisible
	// OutcomeFound: the newest visible version is a value.
	OutcomeFound
	// OutcomeTombstone: the newest visible version is a point tombstone.
	OutcomeTombstone
	// OutcomeSearchEach (lsm's read path only): the immutable memtables'
	// combined filter said maybe, so each one is asked in turn.
	OutcomeSearchEach
	// OutcomeRangeDeleted (lsm's read path only): a range tombstone met at
	// this source or a newer one is newer than the source's version, or
	// covers a key the source has none of.
	OutcomeRangeDeleted
)

func (o Outcome) String() string {
	switch o {
	case OutcomeOutOfRange:
		return "out of key range"
	case OutcomeFilteredOut:
		return "filtered out"
	case OutcomeSearchEach:
		return "each memtable asked"
	case OutcomeNoVersion:
		return "no version"
	case OutcomeNotVisible:
		return "only newer versions"
	case OutcomeFound:
		return "found"
	case OutcomeTombstone:
		return "tombstone"
	case OutcomeRangeDeleted:
		return "covered by a range tombstone"
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

// String renders the lookup's sub-steps as lsm's Explain prints a table's
// step, "; " between two: "in range; bloom: maybe; block 3 @8192+4011
// read from file; no version (false positive)".
func (l *Lookup) String() string {
	if l.Outcome == OutcomeOutOfRange {
		return "key range: out"
	}
	parts := []string{"in range", "no filter asked"}
	if l.FilterAsked {
		parts[1] = "bloom: maybe"
		if l.Outcome == OutcomeFilteredOut {
			return parts[0] + "; bloom: absent"
		}
	}
	if l.From == BlockNone {
		parts = append(parts, "index: no block")
	} else {
		parts = append(parts, fmt.Sprintf("block %d @%d+%d %s", l.Block, l.Offset, l.Length, l.From))
	}
	return strings.Join(append(parts, l.Outcome.Text(l.Seq, l.FilterAsked)), "; ")
}

// Text is o as the last sub-step of a step prints it: with seq, the
// version's sequence number, for OutcomeFound and OutcomeTombstone, and
// marked a false positive for OutcomeNoVersion after a filter's maybe.
func (o Outcome) Text(seq SeqNum, filterSaidMaybe bool) string {
	switch {
	case o == OutcomeFound:
		return fmt.Sprintf("found #%d,SET", seq)
	case o == OutcomeTombstone:
		return fmt.Sprintf("tombstone #%d,DEL", seq)
	case o == OutcomeNoVersion && filterSaidMaybe:
		return o.String() + " (false positive)"
	}
	return o.String()
}
