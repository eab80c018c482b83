package compaction

import (
	"bytes"
	"fmt"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/manifest"
)

// Options shape the tree; the DB fills them from its own options.
type Options struct {
	// L0Threshold is the number of L0 tables that makes L0 due.
	L0Threshold int
	// LBaseMaxBytes bounds the base level's target (see Targets).
	LBaseMaxBytes int64
	Multiplier    int
}

// Compaction is one merge the picker chose: the inputs from Level and the
// tables of OutputLevel they overlap, which the merge replaces.
type Compaction struct {
	Level, OutputLevel int
	// Inputs[0] are the tables of Level, Inputs[1] those of OutputLevel.
	Inputs [2][]*manifest.FileMetadata
	// Score is how far over its target Level was (>= 1 when picked for
	// size; manual compactions use 0).
	Score float64
	// Pointer is where the next compaction of Level should start, so work
	// spreads evenly over the key space (LevelDB's compact pointer).
	Pointer base.InternalKey
}

// Trivial reports whether the compaction is a move: input tables that
// overlap nothing in the output level, nor (outside L0) one another, can
// change level without being rewritten.
func (c *Compaction) Trivial() bool {
	return c.Level != c.OutputLevel && len(c.Inputs[1]) == 0 && (c.Level > 0 || len(c.Inputs[0]) == 1)
}

// Rewrite returns the compaction of one table of level into the same level:
// the merge drops what no snapshot needs any more (shadowed versions, and
// at the last level tombstones), which a table no compaction overlaps
// would otherwise keep for good.
func Rewrite(level int, f *manifest.FileMetadata) *Compaction {
	return &Compaction{Level: level, OutputLevel: level, Inputs: [2][]*manifest.FileMetadata{{f}}, Pointer: f.Largest}
}

// Kind names the compaction for stats: "move", "L0", "rewrite" or "size".
func (c *Compaction) Kind() string {
	switch {
	case c.Trivial():
		return "move"
	case c.Level == 0:
		return "L0"
	case c.Level == c.OutputLevel:
		return "rewrite"
	}
	return "size"
}

func (c *Compaction) String() string {
	return fmt.Sprintf("L%d→L%d %s (score %.2f): %d+%d tables", c.Level, c.OutputLevel, c.Kind(), c.Score, len(c.Inputs[0]), len(c.Inputs[1]))
}

// Bounds returns the smallest and largest user keys of all inputs. The
// empty key is a key like any other, and may be stored as nil: "no bound
// yet" is a flag of its own, never a nil slice.
func (c *Compaction) Bounds() (lo, hi []byte) {
	first := true
	for _, files := range c.Inputs {
		for _, f := range files {
			if first || bytes.Compare(f.Smallest.UserKey, lo) < 0 {
				lo = f.Smallest.UserKey
			}
			if first || bytes.Compare(f.Largest.UserKey, hi) > 0 {
				hi = f.Largest.UserKey
			}
			first = false
		}
	}
	return lo, hi
}

// Targets returns the size target of every level of v, and the base
// level: the level L0 compacts into. Targets are dynamic, as in RocksDB's
// level_compaction_dynamic_level_bytes: the last level's target is its
// actual size, each level above it a Multiplier-th of the one below, up to
// the first level whose target is at most LBaseMaxBytes — the base level.
// Levels above the base have target 0 and stay empty. So about 90% of the
// data sits in the last level whatever the DB's size (space amplification
// about 1.1), and an L0 compaction rewrites a base level a Multiplier-th
// of the data or less, not a fixed-size L1 that holds most of it.
func (o Options) Targets(v *manifest.Version) (targets [manifest.NumLevels]int64, base int) {
	last := manifest.NumLevels - 1
	target := max(int64(v.LevelSize(last)), 1)
	base = last
	for l := last; l >= 1; l-- {
		targets[l] = target
		base = l
		if target <= o.LBaseMaxBytes {
			break
		}
		target /= int64(o.Multiplier)
	}
	return targets, base
}

// Score returns how far level is over its target: L0 by table count (each
// L0 table is another place every read must look), deeper levels by bytes.
// A non-empty level above the base level (left over from a larger DB) is
// due at once.
func (o Options) Score(v *manifest.Version, level int) float64 {
	if level == 0 {
		return float64(len(v.Levels[0])) / float64(o.L0Threshold)
	}
	targets, _ := o.Targets(v)
	size := v.LevelSize(level)
	if targets[level] == 0 {
		if size > 0 {
			return 100
		}
		return 0
	}
	return float64(size) / float64(targets[level])
}

// Pick returns the most urgent compaction of v, or nil when every level is
// within its target. pointer(level) is where the previous compaction of
// level ended. The last level is never an input: it has nowhere to go.
func Pick(v *manifest.Version, o Options, pointer func(level int) base.InternalKey) *Compaction {
	best, bestScore := -1, 1.0
	for level := 0; level < manifest.NumLevels-1; level++ {
		if s := o.Score(v, level); s >= bestScore {
			best, bestScore = level, s
		}
	}
	if best < 0 {
		return nil
	}
	c := &Compaction{Level: best, OutputLevel: best + 1, Score: bestScore}
	if best == 0 {
		// L0 tables overlap one another; taking them all keeps the L0
		// invariant (newer tables hold newer versions) trivially true.
		c.Inputs[0] = v.Levels[0]
		c.OutputLevel = l0OutputLevel(v, o)
	} else {
		c.Inputs[0] = []*manifest.FileMetadata{nextAfter(v.Levels[best], pointer(best))}
	}
	lo, hi := c.Bounds()
	c.Inputs[1] = v.Overlaps(c.OutputLevel, lo, hi)
	c.Pointer = c.Inputs[0][len(c.Inputs[0])-1].Largest
	return c
}

// l0OutputLevel is where L0 compacts: the base level, unless a level
// above it still holds tables (left over from when the DB was larger).
// Those tables are older than L0's and newer than the base level's, so L0
// must land on the first of them: reads look at levels top down, and data
// written below older data would be shadowed by it.
func l0OutputLevel(v *manifest.Version, o Options) int {
	_, base := o.Targets(v)
	for l := 1; l < base; l++ {
		if len(v.Levels[l]) > 0 {
			return l
		}
	}
	return base
}

// InRange reports whether f's user keys meet [lo, hi], the range a manual
// compaction names; a nil bound is open (the empty key, as a bound, is
// []byte{}).
func InRange(f *manifest.FileMetadata, lo, hi []byte) bool {
	return (lo == nil || bytes.Compare(f.Largest.UserKey, lo) >= 0) && (hi == nil || bytes.Compare(f.Smallest.UserKey, hi) <= 0)
}

// PickRange returns a compaction of level's tables overlapping [lo, hi]
// into level+1 (nil if none), for manual compaction. nil bounds are open.
func PickRange(v *manifest.Version, level int, lo, hi []byte) *Compaction {
	files := v.Levels[level]
	var in []*manifest.FileMetadata
	for _, f := range files {
		if InRange(f, lo, hi) {
			in = append(in, f)
		}
	}
	if len(in) == 0 {
		return nil
	}
	if level == 0 {
		in = files // see Pick: L0 compacts as a whole
	}
	c := &Compaction{Level: level, OutputLevel: level + 1, Inputs: [2][]*manifest.FileMetadata{in}}
	clo, chi := c.Bounds()
	c.Inputs[1] = v.Overlaps(c.OutputLevel, clo, chi)
	c.Pointer = in[len(in)-1].Largest
	return c
}

// nextAfter returns the first table of a level that starts after ptr, or
// the first table when ptr is past the end (round robin over the level).
func nextAfter(files []*manifest.FileMetadata, ptr base.InternalKey) *manifest.FileMetadata {
	if ptr.UserKey != nil {
		for _, f := range files {
			if base.Compare(f.Smallest, ptr) > 0 {
				return f
			}
		}
	}
	return files[0]
}
