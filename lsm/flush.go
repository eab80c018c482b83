package lsm

import (
	"fmt"
	"math"
	"time"

	"github.com/monbandb/monban/compaction"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/keyspan"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/memtable"
	"github.com/monbandb/monban/vfs"
)

// Full memtables may queue for flush: one is normal (it is being written),
// slowdownImmutableMemtables slows each commit by a millisecond, and
// stopImmutableMemtables stalls writers — enough to absorb a burst, few
// enough to bound memory to stop+1 memtables.
const (
	slowdownImmutableMemtables = 2
	stopImmutableMemtables     = 3
)

// Flush makes the active memtable immutable (if it holds anything) and
// waits until it and every memtable queued before it are written to L0.
func (d *DB) Flush() error {
	if err := d.commit(&writer{}); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	target := d.mu.rotations
	for d.mu.flushes < target && d.mu.bgErr == nil && !d.closed.Load() {
		d.mu.flushCond.Wait()
	}
	if d.closed.Load() {
		return ErrClosed
	}
	return d.mu.bgErr
}

// makeRoomForWrite runs in the commit leader with d.mu held. It rotates a
// full active memtable (or, with force, any non-empty one), and stalls
// while too many memtables wait for flush or L0 has too many tables.
func (d *DB) makeRoomForWrite(force bool) error {
	var stallStart time.Time
	defer func() {
		if !stallStart.IsZero() {
			d.stats.stalls.Add(1)
			d.stats.stallNanos.Add(uint64(time.Since(stallStart)))
			d.opts.EventListener.WriteStallEnd()
		}
	}()
	slowedDown := false
	for {
		switch mem := d.rs.Load().mem; {
		case d.mu.bgErr != nil:
			return d.mu.bgErr
		case d.closed.Load():
			return ErrClosed
		case !force && !slowedDown && d.slowdownDue(mem):
			// Delay this commit once, rather than let L0 or the flush queue
			// reach its stop threshold and halt every writer for a whole
			// compaction or flush.
			slowedDown = true
			d.stats.slowdowns.Add(1)
			d.mu.Unlock()
			time.Sleep(time.Millisecond)
			d.mu.Lock()
		case force && mem.Active().Empty():
			return nil
		// Before the room the active memtable has: at a stop threshold
		// every commit waits, not only the one that would rotate.
		case len(mem.Immutables()) >= stopImmutableMemtables,
			d.rs.Load().version.NumFiles(0) >= d.opts.L0StopWritesThreshold:
			if stallStart.IsZero() {
				stallStart = time.Now()
				reason := "L0 full"
				if len(mem.Immutables()) >= stopImmutableMemtables {
					reason = "flush queue full"
				}
				d.opts.EventListener.WriteStallBegin(WriteStallInfo{Reason: reason})
			}
			d.mu.flushCond.Wait()
		case !force && mem.Active().ApproximateSize() < d.opts.MemtableSize:
			return nil
		default:
			return d.rotateMemtable()
		}
	}
}

// slowdownDue reports whether L0 or the flush queue is past its slowdown
// threshold but short of its stop threshold. d.mu is held.
func (d *DB) slowdownDue(mem *memtable.Level) bool {
	l0, queued := d.rs.Load().version.NumFiles(0), len(mem.Immutables())
	if l0 >= d.opts.L0StopWritesThreshold || queued >= stopImmutableMemtables {
		return false
	}
	return l0 >= d.opts.L0SlowdownWritesThreshold || queued >= slowdownImmutableMemtables
}

// rotateMemtable makes the active memtable immutable behind a new one with
// a new WAL, and schedules its flush. d.mu is held; the file system calls
// run without it (only the commit leader gets here, so nothing else
// changes the active memtable meanwhile).
func (d *DB) rotateMemtable() error {
	num := d.vs.NextFileNum()
	oldWAL := d.mu.wal
	reuse := d.takeRecycledWAL()
	d.mu.Unlock()
	// The next WAL exists before the old one is sealed, so that a failure
	// to create it leaves the old one whole: every write it acknowledged
	// is still in it. Sealing syncs the old WAL and marks its end, so only the
	// newest WAL holding records can have a torn tail after a crash
	// (recovery relies on it), even in a recycled file, where the bytes
	// after the seal are an older log's.
	var w walWriter
	f, err := d.createWAL(num, reuse)
	var sealErr error
	if err == nil {
		w, err = d.newWALWriter(f, num) // maps its first window: not under d.mu
	}
	if err == nil {
		// The successor record, then the seal that syncs it: the next
		// WAL's name is durable already (createWAL synced the directory).
		if _, sealErr = oldWAL.Append(appendWALSuccessor(nil, d.dbID, num)); sealErr == nil {
			sealErr = oldWAL.Seal()
		}
	}
	d.mu.Lock()
	if sealErr != nil {
		// After a failed fsync the kernel may have dropped the WAL's dirty
		// pages, and the writer refuses more: nothing more can be made
		// durable in this WAL, so the DB turns read-only, and says so. The
		// new WAL stays, empty: recovery replays nothing from it.
		w.Close()
		d.setBgErr(fmt.Errorf("monban: sealing WAL %06d: %w", d.mu.walNum, sealErr))
		return d.mu.bgErr
	}
	if err != nil {
		// A failed step of the write path is not retried (the README's
		// "Errors stop writes"): the DB turns read-only, and a reopen
		// finds every acknowledged write in the old WAL.
		d.setBgErr(err)
		return d.mu.bgErr
	}
	d.syncedSeq.Store(uint64(d.mu.lastSeq)) // the seal synced the old WAL, which holds them all
	next := d.newMemtable(d.expectedEntries())
	level, err := d.rs.Load().mem.Rotate(next)
	if err != nil {
		// The old WAL is sealed and takes no more records, and Rotate
		// froze the active memtable before it failed: nothing can take
		// the next commit, so the DB turns read-only.
		w.Close()
		d.setBgErr(fmt.Errorf("monban: rotating the memtable: %w", err))
		return d.mu.bgErr
	}
	if err := oldWAL.Close(); err != nil {
		d.opts.Logger.Warn("monban: closing a WAL", "file", manifest.MakeFilename(manifest.KindLog, d.mu.walNum), "err", err)
	}
	d.mu.wal, d.mu.walNum = w, num
	d.mu.logNums[next] = num
	d.rs.Load().version.Ref()
	// The old state shares its version with the new one, so this unref
	// cannot release a version, and no file is deleted under d.mu.
	d.installReadState(level, d.rs.Load().version).unref()
	d.mu.rotations++
	d.maybeScheduleFlush()
	return nil
}

// newMemtable returns an empty memtable whose filter is sized for
// expected entries.
func (d *DB) newMemtable(expected int) *memtable.Memtable {
	return memtable.New(memtable.Options{ExpectedEntries: expected, DisableFilter: d.opts.IgnoreFilters, OffHeap: true,
		Split: d.opts.Split})
}

// createWAL creates WAL num and makes its name durable: a synced record
// in a file whose directory entry a crash can take away is not durable.
// With reuse, an obsolete WAL taken from takeRecycledWAL, WAL num is that
// file renamed, and its writer writes over it (recycleWAL says why); a
// file that cannot be reused is removed, and a new one created instead.
func (d *DB) createWAL(num, reuse uint64) (vfs.File, error) {
	var f vfs.File
	var err error
	if reuse != 0 {
		f, err = d.fs.(vfs.Reuser).Reuse(d.path(manifest.KindLog, reuse), d.path(manifest.KindLog, num))
		if err != nil {
			d.opts.Logger.Warn("monban: reusing a WAL's file", "file", manifest.MakeFilename(manifest.KindLog, reuse), "err", err)
			d.removeFile(manifest.KindLog, reuse)
			reuse = 0
		}
	}
	if f == nil {
		f, err = d.fs.Create(d.path(manifest.KindLog, num))
	}
	if err == nil {
		if err = d.fs.SyncDir(d.dir); err != nil {
			f.Close()
		}
	}
	if err != nil {
		return nil, fmt.Errorf("monban: starting WAL %06d: %w", num, err)
	}
	d.opts.EventListener.WALCreated(WALFileInfo{FileNum: num, RecycledFrom: reuse})
	return f, nil
}

// maxRecycledWALs bounds the obsolete WALs kept for their files: two, so
// that one is at hand at a rotation even when the flush before it has
// just retired another.
const maxRecycledWALs = 2

// recycleWAL retires WAL num, whose memtable is flushed and which an
// edit above it made obsolete: it keeps the file for a later WAL to write
// over, or deletes it if enough are kept or the file system cannot reuse
// files. A WAL's space is reserved with fallocate (vfs.Mapper), which on
// ext4 leaves unwritten extents: every fsync into fresh space must also
// write their conversion (to the journal, or the extent blocks). Writing
// over a file whose blocks were written skips that (docs/write-path.md,
// "Recycled WALs"). A kept file is obsolete, so Open deletes it after a
// crash; Close deletes it too.
func (d *DB) recycleWAL(num uint64) {
	d.mu.Lock()
	_, reusable := d.fs.(vfs.Reuser)
	keep := reusable && len(d.mu.recycledWALs) < maxRecycledWALs && !d.closed.Load()
	if keep {
		d.mu.recycledWALs = append(d.mu.recycledWALs, num)
	}
	d.mu.Unlock()
	if !keep {
		d.removeFile(manifest.KindLog, num)
	}
}

// takeRecycledWAL returns the oldest WAL kept by recycleWAL, or 0 if none
// is. d.mu is held.
func (d *DB) takeRecycledWAL() uint64 {
	if len(d.mu.recycledWALs) == 0 {
		return 0
	}
	num := d.mu.recycledWALs[0]
	d.mu.recycledWALs = d.mu.recycledWALs[1:]
	return num
}

// expectedEntries sizes a new memtable's filter from the entries the last
// one held when it filled, so it rarely has to grow.
func (d *DB) expectedEntries() int {
	if n := d.rs.Load().mem.Active().Len(); n > 0 {
		return n + n/8
	}
	return 1024
}

// maybeScheduleFlush starts the flush goroutine if memtables wait and it
// is not running. d.mu is held.
func (d *DB) maybeScheduleFlush() {
	if d.mu.flushing || len(d.rs.Load().mem.Immutables()) == 0 || d.mu.bgErr != nil || d.closed.Load() {
		return
	}
	d.mu.flushing = true
	d.bg.Add(1)
	go d.flushLoop()
}

// flushLoop writes the oldest immutable memtable to an L0 table, records it
// in the manifest, and repeats while memtables wait.
func (d *DB) flushLoop() {
	defer d.bg.Done()
	d.mu.Lock()
	defer d.mu.Unlock()
	for d.mu.bgErr == nil && !d.closed.Load() {
		imms := d.rs.Load().mem.Immutables()
		if len(imms) == 0 {
			break
		}
		m := imms[len(imms)-1]
		// WALs older than the next memtable's are obsolete once m is flushed.
		nextLog := d.mu.walNum
		if len(imms) > 1 {
			nextLog = d.mu.logNums[imms[len(imms)-2]]
		}
		v := d.rs.Load().version
		v.Ref()
		snapshots := d.snapshotSeqs()
		d.mu.Unlock()

		info := FlushInfo{Entries: m.Len()}
		d.opts.EventListener.FlushBegin(info)
		start := time.Now()
		out, err := d.flushMemtable(m, v, snapshots, nextLog)
		if out != nil {
			info.Output = []TableFileInfo{{FileNum: out.FileNum, Size: out.Size}}
		}
		info.Duration, info.Err = time.Since(start), err
		d.opts.EventListener.FlushEnd(info)
		v.Unref()

		d.mu.Lock()
		if err != nil {
			d.setBgErr(fmt.Errorf("monban: flush: %w", err))
			break
		}
		level, err := d.rs.Load().mem.Flushed(m)
		if err != nil {
			d.setBgErr(fmt.Errorf("monban: flush: %w", err))
			break
		}
		old := d.installReadState(level, d.vs.Current())
		oldLog := d.mu.logNums[m]
		delete(d.mu.logNums, m)
		d.mu.flushes++
		d.stats.flushes.Add(1)
		d.mu.flushCond.Broadcast()
		d.maybeScheduleCompaction()
		d.mu.Unlock()
		old.unref()
		m.Unref() // the reference newMemtable's caller took: the level no longer holds m
		d.recycleWAL(oldLog)
		// Weighed once the flushed memtable is out of the way of reads and
		// writes, then asked of the picker again.
		weighed := d.estimateRangeDels()
		d.mu.Lock()
		if weighed {
			d.maybeScheduleCompaction()
		}
	}
	d.mu.flushing = false
	d.mu.flushCond.Broadcast()
}

// flushMemtable writes m as an L0 table and logs the edit that adds it and
// retires m's WAL. Tombstones that hide nothing in v's tables are dropped on
// the way (compaction.Iter, invariant 2).
func (d *DB) flushMemtable(m *memtable.Memtable, v *manifest.Version, snapshots []base.SeqNum, nextLog uint64) (*manifest.FileMetadata, error) {
	edit := &manifest.VersionEdit{LogNum: nextLog}
	// Every table of v is older than m: a tombstone none of their filters
	// admits hides nothing.
	elide := d.tombstoneElider(v, 0)
	bits := d.filterBitsPerKey(v, 0, uint64(m.Len()), nil)
	meta, drops, err := d.writeTable(m, elide, snapshots, bits)
	if err != nil {
		return nil, err
	}
	d.stats.countDrops(drops, true)
	if meta != nil {
		edit.Added = append(edit.Added, manifest.NewFile{Level: 0, Meta: meta})
		d.stats.levels[0].compactedBytesWritten.Add(meta.Size)
		d.stats.flushedBytes.Add(meta.Size)
	}
	d.vs.SetLastSeq(base.SeqNum(d.visibleSeq.Load()))
	d.loadTables(edit.Added)
	return meta, d.logAndApply(edit)
}

// writeTable writes the survivors of m (compaction.Iter with the given
// snapshots and tombstone elider, which may be nil) and its range
// tombstones as one L0 table with filters of bitsPerKey. It returns nil
// metadata when nothing survived.
func (d *DB) writeTable(m *memtable.Memtable, elide compaction.Elider, snapshots []base.SeqNum, bitsPerKey float64) (*manifest.FileMetadata, compaction.Drops, error) {
	it := compaction.NewIter(m.NewIter(), snapshots, elide)
	defer it.Close()
	it.SetRangeDels(m.RangeDels())
	// Never at the bottom: the spans go on hiding what the tables hold.
	spans := keyspan.Compact(m.RangeDels(), snapshots, false)
	outputs, err := d.writeTables(it, spans, compaction.NewSplitter(math.MaxInt64, nil), 0, bitsPerKey)
	if err != nil || len(outputs) == 0 {
		return nil, it.Drops(), err
	}
	return outputs[0], it.Drops(), nil
}
