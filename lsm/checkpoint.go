package lsm

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/vfs"
	"github.com/monbandb/monban/wal"
)

// Checkpoint writes a consistent copy of the DB into dir, which must not
// exist or be empty: the state at one sequence number S, every write
// acknowledged before Checkpoint was called included, openable as a DB of
// its own (read-only or not). Writes go on meanwhile.
//
// It holds a read state — whose tables therefore stay on disk — and S,
// loaded after it (the read path's order, package doc invariant 4); copies
// the tables of that version; writes the memtables' entries up to S as one
// WAL; and finally a manifest naming the tables at their levels and that
// WAL. Tables are hard-linked where the file system can (vfs.Linker: the
// OS's, within one file system), copied otherwise. CURRENT is written
// last (manifest.CreateWith): until it is, dir holds no DB, and Open
// refuses it once it holds a data file (data files without CURRENT). dir
// may hold a LOCK file and nothing else. A Checkpoint that fails removes
// what it wrote, CURRENT first, and dir if it made it, so that a retry can
// use dir; one a crash cuts short leaves files Open refuses, or only dir's
// LOCK (where Open would make a new, empty DB): never a DB holding part of
// the state. It holds dir's lock while it writes and looks at dir again
// once it has it, and never writes over a file there (one may be a link
// to a live table): of Checkpoints racing into one directory, one succeeds
// and the others fail (fs.ErrExist or ErrLocked), removing nothing.
func (d *DB) Checkpoint(dir string) (err error) {
	if d.closed.Load() {
		return ErrClosed
	}
	lockName := manifest.MakeFilename(manifest.KindLock, 0)
	missing, hadLock, err := checkpointDirEmpty(d.fs, dir, lockName)
	if err != nil {
		return err
	}
	// A LOCK this Checkpoint makes is what it wrote, to remove if it
	// fails; removed while the lock is held, no other taker has it then.
	madeLock := !hadLock
	rs, seq := d.currentView()
	if rs == nil {
		return ErrClosed
	}
	defer rs.unref()
	if err := mkdirDurable(d.fs, dir); err != nil {
		removeMadeDir(d.fs, dir, missing)
		return fmt.Errorf("monban: checkpoint: %w", err)
	}
	// The lock file a DB directory has, so that the checkpoint opens read
	// only too; held while it is written, so no Open finds it half done.
	lock, err := lockDir(d.fs, dir)
	if err != nil {
		removeMadeDir(d.fs, dir, missing)
		return err
	}
	// Again, under the lock: another Checkpoint may have filled dir since
	// the first look and let go of the lock.
	if _, _, err := checkpointDirEmpty(d.fs, dir, lockName); err != nil {
		if madeLock && !errors.Is(err, fs.ErrExist) {
			// Not filled by another Checkpoint: only the look failed.
			_ = d.fs.Remove(filepath.Join(dir, lockName))
		}
		err = errors.Join(err, lock.Close())
		removeMadeDir(d.fs, dir, missing)
		return err
	}
	// From here dir holds nothing but what this Checkpoint writes.
	defer func() {
		if err != nil {
			err = errors.Join(err, discardCheckpoint(d.fs, dir, lockName, madeLock, missing))
		}
		err = errors.Join(err, lock.Close())
	}()
	// A DB of its own, from birth: its WAL begins with an identity of its
	// own, which its manifest records, so the WALs of the DB it was copied
	// from are another DB's to it.
	// Its tables, linked or copied, carry this DB's id (and those it
	// carries from before): the checkpoint records them as former ids of
	// its own, with the sequence number it shares with each, so that one
	// of them a crash leaves behind is its to delete, and a table this DB
	// writes later, copied in, is not.
	formers := d.vs.FormerDBIDs() // shared up to their own numbers, which are at most seq
	if d.dbID != 0 {
		formers = append(formers, manifest.FormerDBID{ID: d.dbID, Shared: seq})
	}
	slices.SortFunc(formers, func(a, b manifest.FormerDBID) int { return cmp.Compare(a.ID, b.ID) })
	edit := &manifest.VersionEdit{LastSeq: seq, DBID: newID(), FormerDBIDs: formers}
	var maxNum uint64
	for level, files := range rs.version.Levels {
		for _, f := range files {
			name := manifest.MakeFilename(manifest.KindTable, f.FileNum)
			if err := d.linkOrCopy(d.path(manifest.KindTable, f.FileNum), filepath.Join(dir, name)); err != nil {
				return fmt.Errorf("monban: checkpoint: copying %s: %w", name, err)
			}
			edit.Added = append(edit.Added, manifest.NewFile{Level: level, Meta: f})
			maxNum = max(maxNum, f.FileNum)
		}
	}
	edit.LogNum = maxNum + 1
	if err := d.writeMemtablesAsWAL(rs, seq, dir, edit.LogNum, edit.DBID); err != nil {
		return fmt.Errorf("monban: checkpoint: %w", err)
	}
	if err := d.fs.SyncDir(dir); err != nil {
		return fmt.Errorf("monban: checkpoint: %w", err)
	}
	vs, err := manifest.CreateWith(d.fs, dir, edit)
	if err != nil {
		return fmt.Errorf("monban: checkpoint: %w", err)
	}
	if err := vs.Close(); err != nil {
		return fmt.Errorf("monban: checkpoint: %w", err)
	}
	return nil
}

// discardCheckpoint removes what a failed Checkpoint wrote into dir, which
// held nothing but its lock file when the Checkpoint began writing:
// CURRENT first, so that no crash meanwhile leaves a DB naming files
// already gone, then every other file; the lock file if the Checkpoint
// made it (its lock still held: no other Checkpoint has written here);
// and dir itself if the Checkpoint made it.
func discardCheckpoint(fsys vfs.FS, dir, lockName string, madeLock, madeDir bool) error {
	names, err := fsys.List(dir)
	if err != nil {
		return fmt.Errorf("monban: checkpoint: removing what it wrote: %w", err)
	}
	var errs []error
	remove := func(name string) {
		if err := fsys.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	current := manifest.MakeFilename(manifest.KindCurrent, 0)
	remove(current)
	for _, name := range names {
		if name != current && name != lockName {
			remove(name)
		}
	}
	if madeLock {
		remove(lockName)
	}
	if madeDir && len(errs) == 0 {
		errs = append(errs, fsys.Remove(dir))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("monban: checkpoint: removing what it wrote: %w", err)
	}
	return nil
}

// removeMadeDir removes dir, if Checkpoint made it, when it failed before
// it had dir to itself: dir is left as it was found, unless another
// Checkpoint has written into it meanwhile (then it is not empty, and
// Remove refuses, which is as it should be).
func removeMadeDir(fsys vfs.FS, dir string, made bool) {
	if made {
		_ = fsys.Remove(dir)
	}
}

// checkpointDirEmpty reports whether dir is missing or holds except, and
// returns nil if it is missing or holds nothing but a file named except
// (the lock file: a Checkpoint a crash cut short leaves it), and
// otherwise an error wrapping fs.ErrExist, or the file system's.
func checkpointDirEmpty(fsys vfs.FS, dir, except string) (missing, hasExcept bool, err error) {
	names, err := fsys.List(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return true, false, nil
	}
	if err != nil {
		return false, false, fmt.Errorf("monban: checkpoint into %s: %w", dir, err)
	}
	for _, name := range names {
		if name != except {
			return false, false, fmt.Errorf("monban: checkpoint into %s: %w: it is not empty", dir, fs.ErrExist)
		}
	}
	return false, len(names) > 0, nil
}

// linkOrCopy gives dst src's bytes: a hard link where the file system has
// them (tables never change, so the two names can share them), a synced
// copy otherwise. A dst that exists is an error, never written over: it
// may be a link to a live table of the DB.
func (d *DB) linkOrCopy(src, dst string) error {
	if l, ok := d.fs.(vfs.Linker); ok {
		err := l.Link(src, dst)
		if err == nil || errors.Is(err, fs.ErrExist) {
			return err
		}
	}
	in, err := d.fs.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := d.fs.Create(dst)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	return errors.Join(err, out.Close())
}

// writeMemtablesAsWAL writes every memtable entry of rs with a sequence
// number up to seq, its range tombstones included, to a new WAL num in
// dir that begins with the identity id: one batch record per entry, in
// sequence order — the order a WAL has, which Repair checks. It is a WAL
// as the DB writes one (recyclable, docs/format.md), sealed as a clean
// Close leaves it.
func (d *DB) writeMemtablesAsWAL(rs *readState, seq base.SeqNum, dir string, num, id uint64) error {
	type entry struct {
		key   base.InternalKey
		value []byte
	}
	var entries []entry
	for _, m := range append(slices.Clone(rs.mem.Immutables()), rs.mem.Active()) {
		it := m.NewIter()
		for ok := it.First(); ok; ok = it.Next() {
			k := it.Key()
			if k.Seq() <= seq {
				entries = append(entries, entry{k, it.Value()}) // the memtable's bytes: rs holds it
			}
		}
		if err := it.Close(); err != nil {
			return err
		}
		for _, t := range m.RangeTombstones() {
			if t.Seq <= seq {
				entries = append(entries, entry{base.MakeInternalKey(t.Start, t.Seq, base.KindRangeDelete), t.End})
			}
		}
	}
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.key.Seq(), b.key.Seq()) })
	f, err := d.fs.Create(filepath.Join(dir, manifest.MakeFilename(manifest.KindLog, num)))
	if err != nil {
		return err
	}
	w := wal.NewRecyclableWriter(f, num)
	if _, err := w.Append(appendWALIdentity(nil, id)); err != nil {
		w.Close()
		return err
	}
	var b Batch
	for _, e := range entries {
		b.Reset()
		switch e.key.Kind() {
		case base.KindDelete:
			b.Delete(e.key.UserKey)
		case base.KindRangeDelete:
			b.DeleteRange(e.key.UserKey, e.value)
		default:
			b.Put(e.key.UserKey, e.value)
		}
		if b.err != nil { // the memtable took the entry, so it fits; if not, fail, not drop it
			w.Close()
			return b.err
		}
		if _, err := w.Append(b.encode(e.key.Seq())); err != nil {
			w.Close()
			return err
		}
	}
	if err := w.Seal(); err != nil {
		w.Close()
		return err
	}
	return w.Close()
}
