package compaction

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/keyspan"
	"github.com/monbandb/monban/internal/manifest"
)

// modelPickDeleteOnly is PickDeleteOnly as first written: it merges the
// spans of every table above a level (keyspan.Merge) and walks the merged
// fragments over each table's range. Slow, since it merges every pass,
// but it reads straight off the conditions in deleteonly.go, so
// TestPickDeleteOnlyMatchesModel holds the fast one to it.
func modelPickDeleteOnly(v *manifest.Version, snapshots func() []base.SeqNum, inProgress []*Compaction) (c *Compaction, waiting Waiting) {
	var above []keyspan.Spans
	add := func(files []*manifest.FileMetadata) {
		for _, f := range files {
			if s, known := f.RangeDels(); known && s.Len() > 0 {
				above = append(above, s)
			}
		}
	}
	add(v.Levels[0])
	var spans keyspan.Spans
	var seqs []base.SeqNum
	merged := 0
	for level := range manifest.NumLevels {
		if level > 1 {
			add(v.Levels[level-1])
		}
		if len(above) == 0 {
			continue
		}
		if merged == 0 {
			seqs = snapshots()
		}
		if merged != len(above) {
			spans, merged = keyspan.Merge(above...), len(above)
		}
		var dropped []*manifest.FileMetadata
		for _, f := range v.Levels[level] {
			if held(f, inProgress) {
				continue
			}
			switch got, newest := modelDeletable(spans, f, seqs); got {
			case modelCovered:
				dropped = append(dropped, f)
			case modelSnapshot:
				waiting.add(f.SmallestSeq, newest)
			}
		}
		if len(dropped) == 0 {
			continue
		}
		c = &Compaction{Level: level, OutputLevel: level, DeleteOnly: true}
		c.Inputs[0] = dropped
		if Conflicts(c, inProgress) {
			continue
		}
		return c, waiting
	}
	return nil, waiting
}

type modelVerdict uint8

const (
	modelKept     modelVerdict = iota // a key of the table is not covered by a newer tombstone
	modelCovered                      // deletable now (conditions 1 and 2)
	modelSnapshot                     // covered, but a snapshot between the table and the tombstone sees it
)

// modelDeletable checks conditions 1 and 2 for f against the merged spans
// fragment by fragment, each fragment's stripe on its own.
func modelDeletable(spans keyspan.Spans, f *manifest.FileMetadata, snapshots []base.SeqNum) (v modelVerdict, newest base.SeqNum) {
	lo, hi := f.Smallest.UserKey, f.Largest.UserKey
	i := spans.Seek(lo)
	if i == spans.Len() || bytes.Compare(spans.At(i).Start, lo) > 0 {
		return modelKept, 0
	}
	stripe := modelStripeOf(snapshots, f.SmallestSeq)
	v = modelCovered
	for ; i < spans.Len(); i++ {
		sp := spans.At(i)
		var t base.SeqNum
		for _, seq := range sp.Seqs {
			if seq <= f.LargestSeq {
				break
			}
			t = seq
		}
		if t == 0 {
			return modelKept, 0
		}
		if modelStripeOf(snapshots, t) != stripe {
			v = modelSnapshot
		}
		newest = max(newest, t)
		if bytes.Compare(hi, sp.End) < 0 {
			return v, newest
		}
		if i+1 < spans.Len() && !bytes.Equal(spans.At(i+1).Start, sp.End) {
			return modelKept, 0
		}
	}
	return modelKept, 0
}

// modelStripeOf counts the snapshots below seq, one by one.
func modelStripeOf(snapshots []base.SeqNum, seq base.SeqNum) int {
	n := 0
	for _, s := range snapshots {
		if s < seq {
			n++
		}
	}
	return n
}

// TestPickDeleteOnlyMatchesModel compares PickDeleteOnly with the merging
// model on random trees: tables of random ranges and seqs, range
// tombstones over all, part or none of them (cut at table boundaries that
// abut, or with gaps between), some unknown, random snapshots and running
// compactions. Both must pick the same tables of the same level, or
// nothing, and bound the same waiting snapshots.
func TestPickDeleteOnlyMatchesModel(t *testing.T) {
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 2))
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("seed %d", seed)
		}
	})
	var picked, waited int
	const rounds = 4000
	for round := range rounds {
		v := randDeleteOnlyTree(rng)
		var snaps []base.SeqNum
		for range rng.IntN(4) {
			snaps = append(snaps, base.SeqNum(1+rng.IntN(70)))
		}
		slices.Sort(snaps)
		running := randRunning(rng, v)

		// Each pick joins the running ones and the next is compared too,
		// so that every level's tables are judged, not only the first
		// level with any to drop.
		for {
			want, wantWait := modelPickDeleteOnly(v, snapshotsAt(snaps...), running)
			got, gotWait := PickDeleteOnly(v, snapshotsAt(snaps...), running)
			if describe(got) != describe(want) || gotWait != wantWait {
				t.Fatalf("round %d: snapshots %v, running %v\n%s\npicked %s, waiting %v; model %s, %v",
					round, snaps, running, dumpTree(v), describe(got), gotWait, describe(want), wantWait)
			}
			if wantWait != (Waiting{}) {
				waited++
			}
			if want == nil {
				break
			}
			picked++
			running = append(running, want)
		}
	}
	// The trees must reach both outcomes often, or the comparison says
	// little.
	if picked < rounds/10 || waited < rounds/20 {
		t.Fatalf("of %d trees, %d picked a delete-only and %d waited on snapshots: too few", rounds, picked, waited)
	}
}

func describe(c *Compaction) string {
	if c == nil {
		return "nothing"
	}
	return fmt.Sprintf("L%d→L%d delete-only %v, %v, %v", c.Level, c.OutputLevel, c.DeleteOnly, fileNums(c.Inputs[0]), fileNums(c.Inputs[1]))
}

// deleteOnlyKeys are the user keys of random trees, ascending: each
// letter and the key right after it, so that a tombstone ending at
// "c\x00" covers "c" and nothing beyond, and a table starting there abuts
// one ending at "c".
var deleteOnlyKeys = func() [][]byte {
	var keys [][]byte
	for c := byte('a'); c <= 'l'; c++ {
		keys = append(keys, []byte{c}, []byte{c, 0})
	}
	return keys
}()

// randDeleteOnlyTree returns a random tree.
// Deeper levels tend to hold older seqs, as in a real tree, but overlap
// the levels above them often enough that some tables stay for their
// newer keys.
func randDeleteOnlyTree(rng *rand.Rand) *manifest.Version {
	var v manifest.Version
	num := uint64(0)
	newTable := func(lo, hi int, level int) *manifest.FileMetadata {
		num++
		f := table(num, string(deleteOnlyKeys[lo]), string(deleteOnlyKeys[hi]), 10)
		band := base.SeqNum(10 * (manifest.NumLevels - level)) // L0: 70, L6: 10
		f.SmallestSeq = band - base.SeqNum(rng.IntN(9))
		f.LargestSeq = f.SmallestSeq + base.SeqNum(rng.IntN(6))
		randTombstones(rng, f, lo, hi)
		return f
	}
	for range rng.IntN(4) {
		lo := rng.IntN(len(deleteOnlyKeys))
		hi := lo + rng.IntN(len(deleteOnlyKeys)-lo)
		v.Levels[0] = append(v.Levels[0], newTable(lo, hi, 0))
	}
	// L0 is newest first (manifest invariant 5).
	slices.SortStableFunc(v.Levels[0], func(a, b *manifest.FileMetadata) int { return int(b.LargestSeq) - int(a.LargestSeq) })
	for level := 1; level < manifest.NumLevels; level++ {
		if rng.IntN(3) == 0 {
			continue
		}
		// Sorted, disjoint ranges, each starting at or after the key that
		// abuts the previous one's end.
		for lo := rng.IntN(4); lo < len(deleteOnlyKeys); {
			hi := lo + rng.IntN(min(5, len(deleteOnlyKeys)-lo))
			v.Levels[level] = append(v.Levels[level], newTable(lo, hi, level))
			lo = hi + 1 + rng.IntN(3)
		}
	}
	return &v
}

// randTombstones gives f, whose range is keys lo..hi, range tombstones
// at seqs within its own, or leaves them unknown or empty. Most lie
// within its range, often over the whole of it (to its end's successor,
// so that they abut the next table's where it starts there); a few reach
// past it, as no table's should, to show the search copes anyway.
func randTombstones(rng *rand.Rand, f *manifest.FileMetadata, lo, hi int) {
	switch rng.IntN(10) {
	case 0:
		return // unknown: no reader opened
	case 1:
		f.SetRangeDels(keyspan.Spans{})
		return
	}
	past := func(k []byte) []byte { return append(slices.Clone(k), 0) }
	var ts []keyspan.Tombstone
	for range 1 + rng.IntN(3) {
		seq := f.SmallestSeq + base.SeqNum(rng.IntN(int(f.LargestSeq-f.SmallestSeq)+1))
		start, end := deleteOnlyKeys[lo], past(deleteOnlyKeys[hi])
		switch rng.IntN(8) {
		case 0, 1, 2: // the whole table
		case 3, 4: // part of it: a gap at one end or both
			i := lo + rng.IntN(hi-lo+1)
			j := i + rng.IntN(hi-i+1)
			start, end = deleteOnlyKeys[i], deleteOnlyKeys[j]
			if rng.IntN(2) == 0 {
				end = past(end)
			}
		case 5: // a point
			i := lo + rng.IntN(hi-lo+1)
			start, end = deleteOnlyKeys[i], past(deleteOnlyKeys[i])
		case 6: // past the end
			end = deleteOnlyKeys[min(hi+1+rng.IntN(4), len(deleteOnlyKeys)-1)]
		case 7: // before the start
			start = deleteOnlyKeys[max(lo-1-rng.IntN(3), 0)]
		}
		if bytes.Compare(start, end) < 0 {
			ts = append(ts, keyspan.Tombstone{Start: start, End: end, Seq: seq})
		}
	}
	f.SetRangeDels(keyspan.Fragment(ts))
}

// randRunning returns random compactions in progress over the tree's
// tables: rewrites of single tables, merges of one level into the next,
// and earlier delete-only compactions.
func randRunning(rng *rand.Rand, v *manifest.Version) []*Compaction {
	var running []*Compaction
	for range rng.IntN(3) {
		level := rng.IntN(manifest.NumLevels)
		files := v.Levels[level]
		if len(files) == 0 {
			continue
		}
		i := rng.IntN(len(files))
		j := i + 1 + rng.IntN(min(3, len(files)-i))
		switch rng.IntN(3) {
		case 0:
			running = append(running, Rewrite(level, files[i]))
		case 1:
			c := &Compaction{Level: level, OutputLevel: min(level+1, manifest.NumLevels-1)}
			c.Inputs[0] = files[i:j]
			if c.OutputLevel != level && len(v.Levels[c.OutputLevel]) > 0 {
				c.Inputs[1] = v.Levels[c.OutputLevel][:1]
			}
			running = append(running, c)
		case 2:
			c := &Compaction{Level: level, OutputLevel: level, DeleteOnly: true}
			c.Inputs[0] = files[i:j]
			running = append(running, c)
		}
	}
	return running
}

func dumpTree(v *manifest.Version) string {
	var b bytes.Buffer
	for level, files := range v.Levels {
		for _, f := range files {
			spans, known := f.RangeDels()
			fmt.Fprintf(&b, "L%d %d [%q, %q] seqs %d-%d", level, f.FileNum, f.Smallest.UserKey, f.Largest.UserKey, f.SmallestSeq, f.LargestSeq)
			if !known {
				b.WriteString(" tombstones unknown\n")
				continue
			}
			fmt.Fprintf(&b, " %v\n", slices.Collect(spans.All()))
		}
	}
	return b.String()
}
