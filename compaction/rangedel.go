package compaction

import (
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/keyspan"
)

// Range tombstones in a compaction. A version at seq p under a tombstone at
// seq t > p of the same snapshot stripe is seen by no reader: a snapshot
// at or above p is, in that stripe, at or above t too, and sees it deleted
// (internal/keyspan, "Visibility"), and current reads see everything. So
// Iter drops it, as it drops a version shadowed by a newer one of its
// stripe (invariant 1, counted as DropShadowed). A tombstone of another
// stripe leaves it: a snapshot between the two still reads it. The
// tombstones themselves stay in the output (the caller writes them, cut
// by keyspan.Truncate and thinned by keyspan.Compact), where they go on
// hiding the older versions below the compaction, which are older than p.
// That is why dropping a point tombstone this way uncovers nothing: what
// it hid, the range tombstone hides.

// SetRangeDels gives the iterator the range tombstones of its inputs,
// merged (keyspan.Merge), before First. It keeps them, immutable.
func (c *Iter) SetRangeDels(spans keyspan.Spans) { c.rangeDels = spans }

// rangeDeleted reports whether a tombstone of c's stripe-mates covers k:
// the oldest tombstone over k's user key above k's seq lies in k's stripe.
func (c *Iter) rangeDeleted(k base.InternalKey) bool {
	if c.rangeDels.Len() == 0 {
		return false
	}
	i := c.rangeDels.Seek(k.UserKey)
	if i == c.rangeDels.Len() {
		return false
	}
	sp := c.rangeDels.At(i)
	if !sp.Contains(k.UserKey) {
		return false
	}
	// Seqs descend: the last one above k's seq is the oldest above it.
	var above base.SeqNum
	for _, t := range sp.Seqs {
		if t <= k.Seq() {
			break
		}
		above = t
	}
	return above != 0 && c.stripe(above) == c.stripe(k.Seq())
}
