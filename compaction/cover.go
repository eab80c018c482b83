package compaction

import (
	"bytes"
	"sort"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/keyspan"
	"github.com/monbandb/monban/internal/manifest"
)

// Condition 1 of a delete-only compaction (deleteonly.go), without a
// merge. PickDeleteOnly runs after every flush and compaction; merging
// the spans of every table above a level on each pass cost time in all
// the tombstones of the tree, pass after pass. Instead each table f is
// held to the few tables above whose spans reach its range: a binary
// search per level (L1+ tables are disjoint) and a look at each L0 table.
// Their spans are asked at f's two ends, one Find each, which rules out
// nearly every table, and only when both ends are covered is the range
// walked from one span boundary to the next, over the spans inside it.
//
// Invariant: the walk sees exactly what a merge of the tables' spans
// (keyspan.Merge) holds over f's range. Between two consecutive
// boundaries of any of the spans, every key has the same tombstones over
// it, the union of each table's; a gap in coverage is a stretch where
// none of them has one above f's LargestSeq.

// above holds the range tombstones of the tables a read meets before the
// level being looked at, one tier per level: L0's (which an L0 table's
// older neighbours are held to as well), then each level's down to the
// one above.
type above struct {
	tiers []tier
	near  []cursor // scratch of cover, reused from table to table
}

// tier is the tables of one level that hold known range tombstones.
type tier struct {
	srcs []source
	// sorted: each source's spans end at or before the next one's start,
	// as the disjoint tables of L1+ do, so the few that reach a range are
	// found by a binary search. Otherwise (L0) each source is looked at.
	sorted bool
}

// source is one table's spans, and their bounds [start, end).
type source struct {
	spans      keyspan.Spans
	start, end []byte
}

// cursor is a position in one source's spans during a walk.
type cursor struct {
	spans keyspan.Spans
	i     int
}

// newTier gathers the spans of files, in their order. A table whose
// tombstones are unknown lends none.
func newTier(files []*manifest.FileMetadata) tier {
	t := tier{sorted: true}
	for _, f := range files {
		s, known := f.RangeDels()
		if !known || s.Len() == 0 {
			continue
		}
		start, end, _ := s.Bounds()
		if n := len(t.srcs); n > 0 && bytes.Compare(t.srcs[n-1].end, start) > 0 {
			t.sorted = false
		}
		t.srcs = append(t.srcs, source{s, start, end})
	}
	return t
}

// empty reports whether no table above holds a known range tombstone.
func (a *above) empty() bool {
	for _, t := range a.tiers {
		if len(t.srcs) > 0 {
			return false
		}
	}
	return true
}

// cover reports whether every user key of f's range, both bounds
// included, lies under a tombstone above f.LargestSeq (condition 1). If
// so, newest is the newest tombstone f relies on: over each key, the
// oldest tombstone above f.LargestSeq decides whether a snapshot sees f
// (if one separates it from f, every newer one is separated too), and
// newest is the newest of those over the whole range.
func (a *above) cover(f *manifest.FileMetadata) (newest base.SeqNum, ok bool) {
	lo, hi, seq := f.Smallest.UserKey, f.Largest.UserKey, f.LargestSeq
	a.near = a.reaching(a.near[:0], lo, hi)
	if !coveredAt(a.near, lo, seq) || !coveredAt(a.near, hi, seq) {
		return 0, false
	}
	return walk(a.near, lo, hi, seq)
}

// reaching appends to dst a cursor on each source whose spans reach into
// [lo, hi]: the others hold no tombstone over a key of it.
func (a *above) reaching(dst []cursor, lo, hi []byte) []cursor {
	for _, t := range a.tiers {
		srcs := t.srcs
		if t.sorted {
			// Their ends ascend as their starts do.
			i := sort.Search(len(srcs), func(i int) bool { return bytes.Compare(srcs[i].end, lo) > 0 })
			srcs = srcs[i:]
		}
		for _, s := range srcs {
			if bytes.Compare(s.start, hi) > 0 {
				if t.sorted {
					break // and so does every source after it
				}
				continue
			}
			if bytes.Compare(s.end, lo) > 0 {
				dst = append(dst, cursor{spans: s.spans})
			}
		}
	}
	return dst
}

// coveredAt reports whether a tombstone of cs above seq covers key.
func coveredAt(cs []cursor, key []byte, seq base.SeqNum) bool {
	for _, c := range cs {
		if sp, ok := c.spans.Find(key); ok && sp.Seqs[0] > seq {
			return true
		}
	}
	return false
}

// walk steps through [lo, hi] from one boundary of cs's spans to the
// next, and returns what cover does.
func walk(cs []cursor, lo, hi []byte, seq base.SeqNum) (newest base.SeqNum, ok bool) {
	for i := range cs {
		cs[i].i = cs[i].spans.Seek(lo)
	}
	for key := lo; ; {
		// The keys from key up to next, the nearest boundary after it,
		// all lie under the same spans; oldest is the oldest of their
		// seqs above seq. Every boundary lies above key, so none is
		// empty, and nil means none found yet.
		var oldest base.SeqNum
		var next []byte
		for i := range cs {
			c := &cs[i]
			for c.i < c.spans.Len() && bytes.Compare(c.spans.At(c.i).End, key) <= 0 {
				c.i++
			}
			if c.i == c.spans.Len() {
				continue
			}
			sp := c.spans.At(c.i)
			bound := sp.End
			if bytes.Compare(sp.Start, key) > 0 {
				bound = sp.Start // not yet over key
			} else if t := oldestAbove(sp.Seqs, seq); t != 0 && (oldest == 0 || t < oldest) {
				oldest = t
			}
			if next == nil || bytes.Compare(bound, next) < 0 {
				next = bound
			}
		}
		if oldest == 0 {
			return 0, false // a gap, or tombstones no newer than f's keys
		}
		newest = max(newest, oldest)
		if bytes.Compare(hi, next) < 0 {
			return newest, true
		}
		key = next
	}
}

// oldestAbove returns the oldest of seqs (newest first) above seq, 0 if
// none is.
func oldestAbove(seqs []base.SeqNum, seq base.SeqNum) base.SeqNum {
	var t base.SeqNum
	for _, s := range seqs {
		if s <= seq {
			break
		}
		t = s
	}
	return t
}
