package compaction

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/manifest"
)

// Options shape the tree; the DB fills them from its own options.
type Options struct {
	// L0Threshold is the number of L0 tables that makes L0 due while L0
	// holds at least half the bytes of the level it compacts into;
	// L0MaxTables the number that makes it due regardless (see Score).
	L0Threshold, L0MaxTables int
	// IntraL0MinTables is the fewest L0 tables an intra-L0 compaction
	// merges (see pickIntraL0); 0 never merges L0 into itself.
	IntraL0MinTables int
	// LBaseMaxBytes bounds the base level's target (see Targets).
	LBaseMaxBytes int64
	Multiplier    int
	// TargetFileSize is where a compaction into the base level splits its
	// outputs, FileSizeMultiplier how much larger they get per level below
	// it (see FileSize).
	TargetFileSize     int64
	FileSizeMultiplier int
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
	// Rest marks a rest compaction (PickRest): L0 merged down, though not
	// due, because the DB is at rest.
	Rest bool
	// DeleteOnly marks a delete-only compaction (PickDeleteOnly): the
	// tables of Inputs[0], in Level (= OutputLevel), are dropped from the
	// manifest unread, and nothing is written.
	DeleteOnly bool
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
// actual size, and the base level is the first level, going up, at which
// dividing that size by Multiplier once per level gets to LBaseMaxBytes or
// below. Levels above the base have target 0 and stay empty, so an L0
// compaction never rewrites a fixed-size L1 that holds most of the data.
//
// The base level's target is LBaseMaxBytes itself, and the levels between
// it and the last grow by one ratio, (last / LBaseMaxBytes)^(1/levels),
// as Pebble smooths them — not last/Multiplier^k. Just after the base moves
// up, last/Multiplier^k would give it a target of barely a Multiplier-th
// of LBaseMaxBytes, and the level below it would be compacted into the
// last level almost byte by byte as it fills: bench/peers' 1M-key random
// fill wrote 5.7 table bytes per flushed byte so (WA(tables/flushed)), and
// 4.3 with smoothed targets.
// The cost is space: the levels above the last may hold up to about half
// the data rather than a tenth, which matters only when those bytes are
// overwritten or deleted versions waiting to be dropped.
func (o Options) Targets(v *manifest.Version) (targets [manifest.NumLevels]int64, base int) {
	last := manifest.NumLevels - 1
	bottom := max(int64(v.LevelSize(last)), 1)
	target := bottom
	base = last
	for l := last; l >= 1; l-- {
		base = l
		if target <= o.LBaseMaxBytes {
			break
		}
		target /= int64(o.Multiplier)
	}
	targets[last] = bottom
	if base == last {
		return targets, base
	}
	// Smooth: the base level gets LBaseMaxBytes, the levels between grow
	// geometrically to the last level's size.
	m := math.Pow(float64(bottom)/float64(o.LBaseMaxBytes), 1/float64(last-base))
	size := float64(o.LBaseMaxBytes)
	for l := base; l < last; l++ {
		targets[l] = int64(size)
		size *= m
	}
	return targets, base
}

// Score returns how far level is over its target: L0 by table count (each
// L0 table is another place every read must look), deeper levels by bytes.
// A non-empty level above the base level (left over from a larger DB) is
// due at once. What compactions in inProgress are already taking out of
// the level does not count: it is on its way down, and counting it would
// start a second compaction for the same excess.
//
// Range tombstones weigh in by the bytes below that they cover
// (compensation.go): added to a deeper level's bytes, and making L0 due
// once they reach LBaseMaxBytes, as RocksDB makes L0 due by its
// compensated bytes over max_bytes_for_level_base. Point tombstones weigh
// only in the choice of a level's table (CompensatedSize): their weight
// guesses an entry's size per tombstone rather than measuring the bytes
// below, and scores built on it would make a level of deletes due for
// data that may not be there.
func (o Options) Score(v *manifest.Version, level int, inProgress []*Compaction) float64 {
	leaving := 0
	var leavingBytes, leavingCover uint64
	for _, p := range inProgress {
		if p.Level == level && p.OutputLevel != level {
			leaving += len(p.Inputs[0])
			leavingBytes += sumSize(p.Inputs[0])
			leavingCover += rangeDelBytes(p.Inputs[0])
		}
	}
	cover := rangeDelBytes(v.Levels[level])
	cover -= min(leavingCover, cover)
	if level == 0 {
		score := o.l0Score(v, len(v.Levels[0])-leaving, v.LevelSize(0)-min(leavingBytes, v.LevelSize(0)), inProgress)
		if cover > 0 && o.LBaseMaxBytes > 0 {
			score = max(score, float64(cover)/float64(o.LBaseMaxBytes))
		}
		return score
	}
	targets, _ := o.Targets(v)
	size := v.LevelSize(level) - min(leavingBytes, v.LevelSize(level)) + cover
	if targets[level] == 0 {
		if size > 0 {
			return 100
		}
		return 0
	}
	return float64(size) / float64(targets[level])
}

// l0Score scores n L0 tables of l0Bytes. An L0 compaction rewrites every
// table of the output level that it overlaps — with random keys, the whole
// level — so it writes 1 + out/l0Bytes bytes per L0 byte. Compacting as
// soon as L0 has L0Threshold tables into a base level of LBaseMaxBytes
// rewrote that level many times over for little new data. So below half
// the output level's bytes the score shrinks in proportion, which lets L0
// grow until one compaction writes at most three bytes per L0 byte — but
// never past L0MaxTables, which bounds the tables a read must probe.
func (o Options) l0Score(v *manifest.Version, n int, l0Bytes uint64, inProgress []*Compaction) float64 {
	score := l0Count(v, inProgress) / float64(o.L0Threshold)
	if out := v.LevelSize(l0OutputLevel(v, o)); out > 0 {
		score *= min(1, 2*float64(l0Bytes)/float64(out))
	}
	if o.L0MaxTables > 0 && n >= o.L0MaxTables {
		score = max(score, float64(n)/float64(o.L0MaxTables))
	}
	return score
}

// l0Count counts the L0 tables no compaction into a lower level holds,
// each one smaller than half the median of them in proportion to its
// size. A table a Flush cut short adds a filter probe to a read like any
// other, but little data, and counted as one it can make L0 due: the
// compaction then rewrites the whole base level for it (in one of three
// 1M-key bench/peers runs, the delmiss phase's Flush of the few thousand
// deletes it kept did, and the phase wrote 450 bytes per delete). Tables
// that are all small, as a test's, count one each.
func l0Count(v *manifest.Version, inProgress []*Compaction) float64 {
	var sizes []uint64
	for _, f := range v.Levels[0] {
		if !slices.ContainsFunc(inProgress, func(p *Compaction) bool { return p.OutputLevel != 0 && p.Holds(f) }) {
			sizes = append(sizes, f.Size)
		}
	}
	if len(sizes) == 0 {
		return 0
	}
	slices.Sort(sizes)
	half := float64(sizes[len(sizes)/2]) / 2
	var n float64
	for _, size := range sizes {
		n += min(1, float64(size)/half)
	}
	return n
}

func sumSize(files []*manifest.FileMetadata) (n uint64) {
	for _, f := range files {
		n += f.Size
	}
	return n
}

func rangeDelBytes(files []*manifest.FileMetadata) (n uint64) {
	for _, f := range files {
		n += f.RangeDelBytes()
	}
	return n
}

// Pick returns the most urgent compaction of v that can run beside the
// compactions in inProgress (Conflicts), or nil when no level is over its
// target or every due compaction would conflict. pointer(level) is where
// the previous compaction of level ended. The last level is never an
// input: it has nowhere to go.
//
// Levels are tried most urgent first. In L1..L5 the input is the table
// whose overlap with the next level is smallest against its own size,
// tombstones weighed in (RocksDB's kMinOverlappingRatio): the fewest bytes rewritten per byte
// moved down, so the least write amplification. Ties, such as tables that
// overlap nothing below, go round robin from pointer, so work still spreads
// over the key space.
func Pick(v *manifest.Version, o Options, pointer func(level int) base.InternalKey, inProgress []*Compaction) *Compaction {
	type due struct {
		level int
		score float64
	}
	var levels []due
	for level := 0; level < manifest.NumLevels-1; level++ {
		if s := o.Score(v, level, inProgress); s >= 1 {
			levels = append(levels, due{level, s})
		}
	}
	slices.SortStableFunc(levels, func(a, b due) int { return cmp.Compare(b.score, a.score) })
	for _, l := range levels {
		var c *Compaction
		if l.level == 0 {
			if c = pickL0(v, o, inProgress); c == nil {
				c = pickIntraL0(v, o, inProgress)
			}
		} else {
			c = pickMinOverlap(v, l.level, pointer(l.level), inProgress)
		}
		if c != nil {
			c.Score = l.score
			return c
		}
	}
	return nil
}

// pickL0 compacts every L0 table no compaction in progress holds into the
// L0 output level. Those are all newer than the held ones (a compaction
// takes all of L0 that is free when it starts), so no older table that
// overlaps one of them stays behind in L0 — which a read, visiting L0
// before the level below, would otherwise take for the newer version.
// With random keys every L0 table spans the key space and a second L0
// compaction conflicts with the first at the output level; with keys
// written in order, later tables can compact beside earlier ones.
func pickL0(v *manifest.Version, o Options, inProgress []*Compaction) *Compaction {
	c := &Compaction{Level: 0, OutputLevel: l0OutputLevel(v, o)}
	for _, f := range v.Levels[0] {
		if !held(f, inProgress) {
			c.Inputs[0] = append(c.Inputs[0], f)
		}
	}
	if len(c.Inputs[0]) == 0 {
		return nil
	}
	lo, hi := c.Bounds()
	c.Inputs[1] = v.Overlaps(c.OutputLevel, lo, hi)
	c.Pointer = c.Inputs[0][len(c.Inputs[0])-1].Largest
	if Conflicts(c, inProgress) {
		return nil
	}
	return c
}

// pickIntraL0 merges the L0 tables no compaction holds into one L0 table
// while a compaction of L0 into the level below holds the others, as
// RocksDB does. With random keys every L0 table spans the key space, so a
// second compaction into the base level must wait for the first, and
// meanwhile each flush adds a table that every read must probe and that
// counts toward the write slowdown. The free tables are all newer than the
// held ones (pickL0 took all of L0 when it started, and no L0 compaction
// starts beside an intra-L0 one), so the merged table, which L0 orders by
// its largest sequence number, sits where they did: above the held tables
// and below every later flush. Its merge keeps every tombstone, since the
// older tables held below it may hold what they delete, and it is written
// as one table however large, since splitting it would give back the
// tables it merged.
func pickIntraL0(v *manifest.Version, o Options, inProgress []*Compaction) *Compaction {
	if o.IntraL0MinTables <= 0 {
		return nil
	}
	intoBase := false
	for _, p := range inProgress {
		switch {
		case p.Level == 0 && p.OutputLevel == 0:
			return nil // one at a time: a second would merge tables newer than the first's output
		case p.Level == 0:
			intoBase = true
		}
	}
	if !intoBase {
		return nil // pickL0 found L0 free and chose against it, or conflicts elsewhere
	}
	// Newest first, as L0 is ordered, and not past a table larger than
	// all the newer ones together: an earlier merge's output is rewritten
	// only once as much has arrived beside it, so a byte is merged again
	// a logarithmic number of times while one compaction into the base
	// level runs, not once per flush. The inputs stay the newest free
	// tables, so they remain newer than every table left out.
	c := &Compaction{Level: 0, OutputLevel: 0}
	var newer uint64
	for _, f := range v.Levels[0] {
		if held(f, inProgress) || len(c.Inputs[0]) > 0 && f.Size > newer {
			break
		}
		c.Inputs[0] = append(c.Inputs[0], f)
		newer += f.Size
	}
	if len(c.Inputs[0]) < max(o.IntraL0MinTables, 2) {
		return nil
	}
	c.Pointer = c.Inputs[0][len(c.Inputs[0])-1].Largest
	return c
}

// IntraL0 reports whether c merges L0 tables into L0.
func (c *Compaction) IntraL0() bool { return c.Level == 0 && c.OutputLevel == 0 && !c.DeleteOnly }

// pickMinOverlap returns the compaction of one table of level (>= 1) into
// level+1 with the least overlap ratio that does not conflict with
// inProgress, or nil.
func pickMinOverlap(v *manifest.Version, level int, ptr base.InternalKey, inProgress []*Compaction) *Compaction {
	files := v.Levels[level]
	// Round robin: scan from the first table after ptr, wrapping, and keep
	// a candidate only when it is strictly better, so ties go to the table
	// nearest after ptr.
	start := 0
	if ptr.UserKey != nil {
		start = len(files)
		for i, f := range files {
			if base.Compare(f.Smallest, ptr) > 0 {
				start = i
				break
			}
		}
		if start == len(files) {
			start = 0
		}
	}
	var best *Compaction
	bestRatio := math.Inf(1)
	for n := range files {
		f := files[(start+n)%len(files)]
		if held(f, inProgress) {
			continue
		}
		c := &Compaction{Level: level, OutputLevel: level + 1, Inputs: [2][]*manifest.FileMetadata{{f}}, Pointer: f.Largest}
		c.Inputs[1] = v.Overlaps(level+1, f.Smallest.UserKey, f.Largest.UserKey)
		// Tombstones weigh: a table whose deletes would reclaim space
		// below goes down sooner (CompensatedSize, as RocksDB and Pebble
		// weigh them), and range tombstones by the bytes below they cover,
		// so a table deleting what it overlaps comes first.
		ratio := float64(sumSize(c.Inputs[1])) / float64(max(f.CompensatedSize(), 1))
		if ratio < bestRatio && !Conflicts(c, inProgress) {
			best, bestRatio = c, ratio
		}
	}
	return best
}

// held reports whether f is an input of a compaction in inProgress.
func held(f *manifest.FileMetadata, inProgress []*Compaction) bool {
	for _, p := range inProgress {
		if p.Holds(f) {
			return true
		}
	}
	return false
}

// Holds reports whether f is one of c's inputs.
func (c *Compaction) Holds(f *manifest.FileMetadata) bool {
	for _, files := range c.Inputs {
		if slices.Contains(files, f) {
			return true
		}
	}
	return false
}

// Conflicts reports whether c cannot run beside the compactions in
// inProgress. Two compactions may run at once when (1) no table is an
// input of both — each would otherwise install an edit deleting it —, (2)
// when they write into the same level, their key ranges are disjoint:
// their outputs must not overlap there (manifest invariant 2), and (3) two
// compactions of L0 write into the same level: L0's output level moves
// with the base level, and a newer L0 table written below an older one's
// output would be shadowed by it wherever their keys meet. A delete-only
// compaction of L0 counts as one into L0 under (3) and is no intra-L0
// one: while it holds an L0 table, newer L0 tables — the tombstone's
// among them — must not go below it, or, should its edit fail, the table
// it meant to drop would be read before the tombstone that deletes it.
// (2) does not apply to a delete-only compaction, which writes nothing;
// beside an intra-L0 merge, which keeps L0's order, it may run. Nothing else
// can go wrong: a table of c's input level that is not an input of a
// compaction writing into that level lies outside that compaction's range,
// so their keys are disjoint, and data only moves down, so the deeper
// tables that c's tombstone proof consults (tombstoneElider, from c's
// Version) still hold every key in c's range that they held when c began.
func Conflicts(c *Compaction, inProgress []*Compaction) bool {
	lo, hi := c.Bounds()
	for _, p := range inProgress {
		for _, files := range c.Inputs {
			if slices.ContainsFunc(files, p.Holds) {
				return true
			}
		}
		// Two compactions of L0 into different levels would reorder its
		// data, except an intra-L0 one beside a compaction into the base
		// level, whose inputs are older than all of its own (pickIntraL0).
		if p.Level == 0 && c.Level == 0 && p.OutputLevel != c.OutputLevel && !(c.IntraL0() && p.OutputLevel > 0) {
			return true
		}
		if p.OutputLevel == c.OutputLevel && !p.DeleteOnly && !c.DeleteOnly {
			plo, phi := p.Bounds()
			if bytes.Compare(lo, phi) <= 0 && bytes.Compare(plo, hi) <= 0 {
				return true
			}
		}
	}
	return false
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
