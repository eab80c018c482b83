package lsm

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/monbandb/monban/compaction"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/keyspan"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/internal/merge"
	"github.com/monbandb/monban/sstable"
)

func (d *DB) compactionOptions() compaction.Options {
	return compaction.Options{
		L0Threshold: d.opts.L0CompactionThreshold,
		L0MaxTables: max(d.opts.L0CompactionThreshold, d.opts.L0SlowdownWritesThreshold-2),
		// As many as make L0 due: merging fewer would barely lower the
		// count a read probes.
		IntraL0MinTables:   d.opts.L0CompactionThreshold,
		LBaseMaxBytes:      d.opts.LBaseMaxBytes,
		Multiplier:         d.opts.LevelMultiplier,
		TargetFileSize:     d.opts.TargetFileSize,
		FileSizeMultiplier: d.opts.TargetFileSizeMultiplier,
	}
}

// Compact flushes the memtable and compacts the whole key space down the
// tree, so that every table ends in the last level and every tombstone and
// shadowed version that no snapshot needs is gone, then starts the
// manifest afresh from a snapshot of that tree, so that it no longer logs
// the edits that built it. It waits for the work.
func (d *DB) Compact() error { return d.CompactRange(nil, nil) }

// CompactRange flushes the memtable and compacts the tables overlapping the
// user keys [lo, hi] (nil bounds are open) level by level down to the last
// level. lo above hi is ErrInvalidRange. First it drops, unread, every
// table that range tombstones above it delete wholly, wherever it lies
// (compaction.PickDeleteOnly): a merge would read it only to drop it.
func (d *DB) CompactRange(lo, hi []byte) error {
	if err := d.checkOpen(); err != nil {
		return err // before what is wrong with the range: every write gets it
	}
	if lo != nil && hi != nil && bytes.Compare(lo, hi) > 0 {
		return fmt.Errorf("%w: CompactRange from %q to %q", ErrInvalidRange, lo, hi)
	}
	if err := d.Flush(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for len(d.mu.compactions) > 0 || d.mu.manualCompaction {
		d.mu.flushCond.Wait()
	}
	if d.closed.Load() {
		return ErrClosed
	}
	d.mu.manualCompaction = true
	// The tree it leaves is as compacted as it can be, like a new DB's:
	// rest compactions wait, as after Open, until L0 is due (restDue).
	d.stats.l0WasDue.Store(false)
	defer func() {
		d.mu.manualCompaction = false
		d.mu.flushCond.Broadcast()
		d.maybeScheduleCompaction()
	}()
	run := func(c *compaction.Compaction) error {
		d.startCompaction(c)
		err := d.compactLocked(c)
		d.stats.compactionsRunning.Add(-1)
		if err != nil {
			if d.closed.Load() {
				return ErrClosed
			}
			d.setBgErr(fmt.Errorf("monban: compaction %v: %w", c, err))
		}
		return nil
	}
	// First what range tombstones delete wholly, so that the merges below
	// neither read those tables nor rewrite them.
	for d.mu.bgErr == nil && !d.closed.Load() {
		c, _ := compaction.PickDeleteOnly(d.rs.Load().version, d.snapshotSeqs, nil)
		if c == nil {
			break
		}
		if err := run(c); err != nil {
			return err
		}
	}
	for level := 0; level < NumLevels-1 && d.mu.bgErr == nil && !d.closed.Load(); level++ {
		v := d.rs.Load().version
		c := compaction.PickRange(v, level, lo, hi)
		if c == nil {
			continue
		}
		if err := run(c); err != nil {
			return err
		}
	}
	// The last level: no compaction above overlaps a table there that was
	// alone in its range, yet it may hold versions and tombstones that a
	// snapshot kept when it was written and nobody needs now.
	last := d.rs.Load().version.Levels[NumLevels-1]
	for _, f := range last {
		if d.mu.bgErr != nil || d.closed.Load() {
			break
		}
		// A table a snapshot keeps would be rewritten whole, each time.
		if !compaction.InRange(f, lo, hi) || compaction.KeptBySnapshot(f, d.snapshotSeqs()) || !d.mayHoldGarbage(f) {
			continue
		}
		c := compaction.Rewrite(NumLevels-1, f)
		d.startCompaction(c)
		err := d.compactLocked(c)
		d.stats.compactionsRunning.Add(-1)
		if err != nil {
			if d.closed.Load() {
				return ErrClosed
			}
			d.setBgErr(fmt.Errorf("monban: rewriting table %06d: %w", f.FileNum, err))
		}
	}
	if d.closed.Load() {
		return ErrClosed
	}
	if d.mu.bgErr == nil && lo == nil && hi == nil {
		// The whole tree is compacted: the manifest's log of the edits
		// that built it describes nothing left.
		d.manifestMu.Lock()
		err := d.vs.Rollover()
		d.manifestMu.Unlock()
		if err != nil {
			d.setBgErr(fmt.Errorf("monban: manifest rollover: %w", err))
		}
	}
	return d.mu.bgErr
}

// mayHoldGarbage reports whether a last-level table holds anything a
// rewrite could drop: a tombstone (point or range), or an older version of
// a key, which only
// a snapshot open when the table was written could have kept. A table that
// cannot be opened counts as yes: the rewrite reports its error.
func (d *DB) mayHoldGarbage(f *manifest.FileMetadata) bool {
	if spans, known := f.RangeDels(); f.NumDeletions > 0 || !known || spans.Len() > 0 {
		return true
	}
	r, release, err := d.table(f)
	if err != nil {
		return true
	}
	defer release()
	return r.Properties().OlderVersions > 0
}

// compactLocked runs c, which startCompaction registered, installs its
// result and unregisters it (finishCompaction). d.mu is held on entry and
// exit, released meanwhile.
func (d *DB) compactLocked(c *compaction.Compaction) error {
	defer d.finishCompaction(c)
	v := d.rs.Load().version
	v.Ref()
	snapshots := d.snapshotSeqs()
	d.mu.Unlock()
	info := CompactionInfo{Level: c.Level, OutputLevel: c.OutputLevel, Kind: c.Kind()}
	for i, level := range [2]int{c.Level, c.OutputLevel} {
		for _, f := range c.Inputs[i] {
			info.Inputs = append(info.Inputs, TableFileInfo{FileNum: f.FileNum, Size: f.Size, Level: level})
		}
	}
	d.opts.EventListener.CompactionBegin(info)
	start := time.Now()
	added, err := d.runCompaction(c, v, snapshots)
	for _, nf := range added {
		info.Outputs = append(info.Outputs, TableFileInfo{FileNum: nf.Meta.FileNum, Size: nf.Meta.Size, Level: nf.Level})
	}
	info.Duration, info.Err = time.Since(start), err
	d.opts.EventListener.CompactionEnd(info)
	v.Unref()
	d.mu.Lock()
	if err != nil {
		return err
	}
	old := d.installReadState(d.rs.Load().mem, d.vs.Current())
	d.mu.Unlock()
	old.unref()
	d.reloadTables(c, added)
	d.estimateRangeDels() // before the caller asks the picker what is due
	d.mu.Lock()
	return nil
}

// reloadTables opens a compaction's outputs once its inputs have left the
// table cache. Opened beside the inputs they replace, the outputs were
// admitted to the meta budget while the inputs still held their bytes,
// and, at a full budget, paged for good: nothing admits an open table
// again. A table moved down is input and output both: it opens again as a
// table of its new level (the last level pins its index first,
// sstable.MetaBudget). A read of an older version that still needs an
// input opens it again.
func (d *DB) reloadTables(c *compaction.Compaction, added []manifest.NewFile) {
	for _, files := range c.Inputs {
		for _, f := range files {
			d.tables.Evict(f.FileNum)
		}
	}
	d.loadTables(added)
}

// startCompaction registers c as running, so Pick keeps later
// compactions apart from it. d.mu is held.
func (d *DB) startCompaction(c *compaction.Compaction) {
	d.mu.compactions = append(d.mu.compactions, c)
	d.stats.compactionsRunning.Add(1)
}

// finishCompaction unregisters c and wakes whoever waits for compactions
// to end (CompactRange, Close, stalled writers). d.mu is held. The caller
// of compactLocked stops counting c in Stats.CompactionsRunning.
func (d *DB) finishCompaction(c *compaction.Compaction) {
	d.mu.compactions = slices.DeleteFunc(d.mu.compactions, func(p *compaction.Compaction) bool { return p == c })
	d.mu.flushCond.Broadcast()
}

// maybeScheduleCompaction starts background compactions, each in its own
// goroutine, while a delete-only compaction can drop tables or a level is
// over its target, a due compaction does not conflict with those running,
// and fewer than MaxConcurrentCompactions run — or, when nothing is due,
// a rest compaction (restDue). d.mu is held.
func (d *DB) maybeScheduleCompaction() {
	for len(d.mu.compactions) < d.opts.MaxConcurrentCompactions && !d.mu.manualCompaction && d.mu.bgErr == nil && !d.closed.Load() {
		closes := d.snapshotCloses.Load()
		v := d.rs.Load().version
		// Delete-only first: it reads nothing, and what it drops no merge
		// after it need read.
		c, waiting := compaction.PickDeleteOnly(v, d.snapshotSeqs, d.mu.compactions)
		if c == nil {
			c = compaction.Pick(v, d.compactionOptions(), d.vs.CompactPointer, d.mu.compactions)
			switch {
			case c != nil && c.Level == 0:
				d.stats.l0WasDue.Store(true)
			case c == nil && d.restDue():
				c = compaction.PickRest(v, d.compactionOptions(), d.mu.compactions)
			}
		}
		if c == nil {
			// Last, as it reclaims space no read is slowed by.
			var elisionWaiting compaction.Waiting
			c, elisionWaiting = compaction.PickElisionOnly(v, d.snapshotSeqs, d.mu.compactions)
			waiting = waiting.Union(elisionWaiting)
		}
		if h := d.hooks.beforeWaitedStore; h != nil {
			h()
		}
		if waiting == (compaction.Waiting{}) {
			d.snapshotsWaited.Store(nil)
		} else {
			d.snapshotsWaited.Store(&waiting)
		}
		if c == nil {
			if d.snapshotCloses.Load() != closes {
				continue // a snapshot closed meanwhile, maybe unseen
			}
			return
		}
		d.startCompaction(c)
		d.bg.Add(1)
		go d.backgroundCompaction(c)
	}
}

// restDue reports whether the DB is at rest, so that L0 may be compacted
// though not due (compaction.PickRest): no compaction runs, nothing is
// waiting to be flushed (the active memtable is empty and none is
// queued), and L0 has been due at least once since Open or the last
// Compact or CompactRange. d.mu is held.
//
// Every condition is a fact of the DB's state when a flush or compaction
// ends, not a timer, so a test reaches rest deterministically. The first
// two keep the rest compaction out of a write load's way: it starts only
// when the last flush of the writes so far has ended and no due
// compaction is left to run. If writes resume while it runs, it is an L0
// compaction like the others: flushes go on beside it, an intra-L0 merge
// may run beside it (compaction.Conflicts), and the next L0 compaction
// waits for it as for any other. The last keeps the rest rule to the
// tables a write load left: a DB whose L0 has not reached its threshold
// since it opened or was compacted by hand — a test's or a lesson's few
// flushed tables, or any DB that asks for a deep L0 with a high
// L0CompactionThreshold — keeps its L0 as built.
func (d *DB) restDue() bool {
	mem := d.rs.Load().mem
	return len(d.mu.compactions) == 0 && mem.Active().Empty() && len(mem.Immutables()) == 0 && d.stats.l0WasDue.Load()
}

// backgroundCompaction runs c, then starts whatever its result made due,
// and only then stops counting c as running: Stats reads the count
// without d.mu, and a look between c's end and the start of what follows
// it — a rest compaction, which adds no debt — would otherwise find the
// DB settled (kvbench's settle, bench/peers' waitQuiet).
func (d *DB) backgroundCompaction(c *compaction.Compaction) {
	defer d.bg.Done()
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.compactLocked(c); err != nil {
		d.setBgErr(fmt.Errorf("monban: compaction %v: %w", c, err))
	}
	d.maybeScheduleCompaction()
	d.stats.compactionsRunning.Add(-1)
}

// runCompaction merges c's inputs into new tables of c.OutputLevel and
// logs the edit that swaps them in. A trivial compaction just moves its
// table.
func (d *DB) runCompaction(c *compaction.Compaction, v *manifest.Version, snapshots []base.SeqNum) ([]manifest.NewFile, error) {
	edit := &manifest.VersionEdit{Deleted: map[manifest.DeletedFile]bool{}}
	for i, level := range [2]int{c.Level, c.OutputLevel} {
		for _, f := range c.Inputs[i] {
			edit.Deleted[manifest.DeletedFile{Level: level, FileNum: f.FileNum}] = true
		}
	}
	d.stats.compactions[c.Kind()].Add(1)
	if c.DeleteOnly {
		// The edit alone: nothing is read or written, and the level's
		// compact pointer stays where its last merge left it. The files
		// go once no live Version holds them (deleter.go).
		for _, f := range c.Inputs[0] {
			d.stats.spaceReclaimed.Add(f.Size)
		}
		return nil, d.logAndApply(edit)
	}
	edit.CompactPointers = []manifest.CompactPointer{{Level: c.Level, Key: c.Pointer}}
	if c.Trivial() {
		for _, f := range c.Inputs[0] {
			edit.Added = append(edit.Added, manifest.NewFile{Level: c.OutputLevel, Meta: f})
		}
		return edit.Added, d.logAndApply(edit)
	}

	var inBytes, inEntries uint64
	for i, files := range c.Inputs {
		var levelBytes uint64
		for _, f := range files {
			levelBytes += f.Size
			inEntries += f.NumEntries
		}
		level := c.Level // Inputs[0]'s; Inputs[1] are the output level's
		if i > 0 {
			level = c.OutputLevel
		}
		d.stats.levels[level].compactedBytesRead.Add(levelBytes)
		inBytes += levelBytes
	}

	// Only the levels below the output hold data older than the inputs —
	// and, for an intra-L0 merge, the older L0 tables it leaves, so it
	// keeps every tombstone, and writes one table (pickIntraL0).
	var elide compaction.Elider
	split := compaction.NewSplitter(math.MaxInt64, nil)
	if !c.IntraL0() {
		elide = d.tombstoneElider(v, c.OutputLevel+1)
		var grandparents []*manifest.FileMetadata
		if c.OutputLevel+1 < NumLevels {
			lo, hi := c.Bounds()
			grandparents = v.Overlaps(c.OutputLevel+1, lo, hi)
		}
		split = compaction.NewSplitter(d.compactionOptions().FileSize(v, c.OutputLevel), grandparents)
	}
	spans, err := d.compactionRangeDels(c.Inputs)
	if err != nil {
		return nil, err
	}
	it := compaction.NewIter(merge.NewIter(d.compactionInputs(c)...), snapshots, elide)
	defer it.Close()
	it.SetRangeDels(spans)
	bottom := !c.IntraL0() && spansAtBottom(v, c.OutputLevel, spans)
	bits := d.filterBitsPerKey(v, c.OutputLevel, inEntries, c)
	outputs, err := d.writeTables(it, keyspan.Compact(spans, snapshots, bottom), split, c.OutputLevel, bits)
	d.stats.countDrops(it.Drops(), false)
	if err != nil {
		return nil, err
	}
	var outBytes uint64
	for _, meta := range outputs {
		edit.Added = append(edit.Added, manifest.NewFile{Level: c.OutputLevel, Meta: meta})
		d.stats.levels[c.OutputLevel].compactedBytesWritten.Add(meta.Size)
		outBytes += meta.Size
	}
	if inBytes > outBytes {
		d.stats.spaceReclaimed.Add(inBytes - outBytes)
	}
	return edit.Added, d.logAndApply(edit)
}

// logAndApply logs and installs an edit of a flush or compaction. The
// tree-wide filter files the added tables' keys first: a reader of the
// Version it installs may ask it at once (tree_filter.go, the superset
// rule). It does so before taking manifestMu, which only orders edits:
// another flush's or compaction's edit need not wait for the filing.
func (d *DB) logAndApply(edit *manifest.VersionEdit) error {
	if d.tree != nil {
		d.tree.enter(edit.Added, edit.Deleted)
	}
	d.manifestMu.Lock()
	defer d.manifestMu.Unlock()
	err := d.vs.LogAndApply(edit)
	if err != nil && d.tree != nil {
		d.tree.abandon(edit.Added, edit.Deleted)
	}
	if h := d.hooks.afterInstall; h != nil && err == nil {
		h()
	}
	return err
}

// compactionInputs returns an iterator per input of c: one per L0 table
// (they overlap), one levelIter per deeper level, which opens that level's
// tables one at a time as the merge reaches them.
func (d *DB) compactionInputs(c *compaction.Compaction) []base.InternalIterator {
	var inputs []base.InternalIterator
	add := func(files []*manifest.FileMetadata) {
		l := new(levelIter)
		l.init(compactionTables{d}, files, nil, nil, nil)
		inputs = append(inputs, l)
	}
	for i, level := range [2]int{c.Level, c.OutputLevel} {
		switch files := c.Inputs[i]; {
		case level == 0:
			for j := range files {
				add(files[j : j+1])
			}
		case len(files) > 0:
			add(files)
		}
	}
	return inputs
}

// compactionTables opens a compaction's input tables as private readers
// (sstable.Reader.WithFile) of the table cache's: they share its index and
// filter, so no meta block is read or held twice; they skip the block
// cache, which a compaction, reading each block once, must not flush of
// what reads are using, and their iterators read ahead as any does
// (sstable/readahead.go). Their read counters are the compaction's reads
// (blocks, as the tables count them; the file sees fewer, larger reads).
type compactionTables struct{ d *DB }

func (c compactionTables) table(f *manifest.FileMetadata) (*sstable.Reader, func(), error) {
	shared, release, err := c.d.table(f)
	if err != nil {
		return nil, nil, err
	}
	defer release()
	file, err := c.d.fs.Open(c.d.path(manifest.KindTable, f.FileNum))
	if err != nil {
		return nil, nil, err
	}
	r, err := shared.WithFile(file)
	if err != nil {
		return nil, nil, err // WithFile closed file
	}
	return r, func() {
		st := r.Stats()
		c.d.stats.compactionBlocksRead.Add(st.BlocksRead)
		c.d.stats.compactionBytesRead.Add(st.BytesRead)
		r.Close()
	}, nil
}

// writeTables writes it's entries and the range tombstones spans as
// tables of level, cut where split says, which is only ever between user
// keys, with filters of bitsPerKey. Each table takes the spans over its
// own key range (rangedel_write.go); spans with no entry make one table.
func (d *DB) writeTables(it *compaction.Iter, spans keyspan.Spans, split *compaction.Splitter, level int, bitsPerKey float64) ([]*manifest.FileMetadata, error) {
	var outputs []*manifest.FileMetadata
	var w *tableWriter
	var lastKey []byte
	cuts := outputSpans{spans: spans}
	finish := func(final bool) error {
		meta, err := w.finish(cuts.next(lastKey, final))
		w = nil
		if err == nil && meta != nil {
			outputs = append(outputs, meta)
			d.opts.EventListener.TableCreated(TableFileInfo{FileNum: meta.FileNum, Size: meta.Size, Level: level})
		}
		return err
	}
	for ok := it.First(); ok; ok = it.Next() {
		if d.closed.Load() {
			// Close waits for this: stop now, the inputs stay live.
			if w != nil {
				w.abort()
			}
			return nil, ErrClosed
		}
		k := it.Key()
		if w == nil || string(k.UserKey) != string(lastKey) {
			var written int64
			if w != nil {
				written = int64(w.w.EstimatedSize())
			}
			if split.SplitBefore(k.UserKey, written) {
				if err := finish(false); err != nil {
					return nil, err
				}
			}
		}
		if w == nil {
			var err error
			if w, err = d.newTableWriter(bitsPerKey); err != nil {
				return nil, err
			}
		}
		if err := w.w.Add(k, it.Value()); err != nil {
			w.abort()
			return nil, err
		}
		lastKey = append(lastKey[:0], k.UserKey...)
	}
	if err := it.Error(); err != nil {
		if w != nil {
			w.abort()
		}
		return nil, err
	}
	if w == nil && len(outputs) == 0 && spans.Len() > 0 {
		var err error
		if w, err = d.newTableWriter(bitsPerKey); err != nil {
			return nil, err
		}
	}
	if w != nil {
		if err := finish(true); err != nil {
			return nil, err
		}
	}
	return outputs, nil
}
