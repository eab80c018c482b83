package manifest

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/vfs"
	"github.com/monbandb/monban/wal"
)

// Create starts the manifest of a new, empty DB in dir: MANIFEST-000001
// holding a snapshot of the empty Version, and CURRENT naming it. It
// refuses a directory that already has a CURRENT file (fs.ErrExist).
func Create(fsys vfs.FS, dir string) (*VersionSet, error) {
	return CreateWith(fsys, dir, &VersionEdit{})
}

// CreateWith is Create for a DB whose files are already in dir (a
// checkpoint's): the new manifest's snapshot holds e's added tables, log
// number and last sequence number, and its number follows every number e
// uses. CURRENT, written last, names it, so dir holds no DB until
// CreateWith has succeeded, and then the whole of e: a crash or an error
// before leaves files without CURRENT, which Open refuses. An e that
// cannot apply to an empty tree returns an error wrapping ErrInvalidEdit.
func CreateWith(fsys vfs.FS, dir string, e *VersionEdit) (*VersionSet, error) {
	b := newBuilder(&Version{})
	if err := b.apply(e); err != nil {
		return nil, fmt.Errorf("manifest: %w: %v", ErrInvalidEdit, err)
	}
	v, err := b.build()
	if err != nil {
		return nil, fmt.Errorf("manifest: %w: %v", ErrInvalidEdit, err)
	}
	vs := newVersionSet(fsys, dir)
	// The directory's own entry must survive a crash as well as CURRENT.
	if err := fsys.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("manifest: creating %s: %w", dir, err)
	}
	if err := fsys.SyncDir(filepath.Dir(dir)); err != nil {
		return nil, fmt.Errorf("manifest: syncing the parent of %s: %w", dir, err)
	}
	switch f, err := fsys.Open(vs.path(currentName)); {
	case err == nil:
		f.Close()
		return nil, fmt.Errorf("manifest: %s already holds a DB: %w", dir, fs.ErrExist)
	case !errors.Is(err, fs.ErrNotExist):
		// The disk's failure says nothing of whether CURRENT is there.
		return nil, fmt.Errorf("manifest: looking for %s in %s: %w", currentName, dir, err)
	}
	vs.nextFileNum.Store(max(b.maxFileNum(), e.LogNum) + 1)
	vs.logNum.Store(e.LogNum)
	vs.lastSeq.Store(uint64(e.LastSeq))
	vs.dbID.Store(e.DBID)
	vs.formerDBIDs = mergeFormers(nil, e.FormerDBIDs)
	vs.install(v)
	if err := vs.rollover(vs.current, vs.state()); err != nil {
		return nil, err
	}
	return vs, nil
}

// LogAndApply appends e to the manifest, syncs it, and installs the Version
// it produces as current. Calls (and Close) must be serialized by the
// caller — the DB holds one lock around flush and compaction installs —
// while Current, LiveFiles and the counters stay safe from any goroutine.
//
// LogAndApply completes e before logging it: LogNum 0 becomes the current
// log number, and NextFileNum and LastSeq are set to the set's counters,
// so every edit carries them and recovery needs only the last one.
//
// An edit that cannot apply returns an error wrapping ErrInvalidEdit and
// changes nothing. A failed write or sync is sticky: the manifest's tail
// is then unknown, so every later call returns the same error and the DB
// must be reopened (recovery judges the tail).
func (vs *VersionSet) LogAndApply(e *VersionEdit) error {
	if err := vs.writable(); err != nil {
		return err
	}
	vs.mu.Lock()
	cps := vs.compactPointers
	vs.mu.Unlock()

	// 1. Complete the edit with the counters and check it.
	e.FormatVersion = 0
	if e.LogNum == 0 {
		e.LogNum = vs.LogNum()
	}
	if e.NextFileNum != 0 {
		vs.MarkFileNumUsed(e.NextFileNum - 1)
	}
	e.NextFileNum = vs.nextFileNum.Load()
	e.LastSeq = max(e.LastSeq, vs.LastSeq())
	if err := vs.checkEdit(e); err != nil {
		return err
	}
	for _, cp := range e.CompactPointers {
		cps[cp.Level] = cp.Key
	}

	// 2. Build the new Version; nothing is written if it is invalid.
	b := newBuilder(vs.current)
	if err := b.apply(e); err != nil {
		return fmt.Errorf("manifest: %w: %v", ErrInvalidEdit, err)
	}
	v, err := b.build()
	if err != nil {
		return fmt.Errorf("manifest: %w: %v", ErrInvalidEdit, err)
	}

	// 3. Make it durable: appended to this manifest, or, past the size
	// limit or first after Recover, as the snapshot that starts the next
	// one.
	if vs.dueForRollover() {
		err = vs.rollover(v, counters{logNum: e.LogNum, lastSeq: e.LastSeq, compactPointers: cps, dbID: max(e.DBID, vs.DBID()),
			formerDBIDs: mergeFormers(vs.formers(), e.FormerDBIDs)})
	} else {
		vs.buf = e.Encode(vs.buf[:0])
		_, err = vs.manifest.Append(vs.buf)
		vs.trimBuf()
		if err == nil {
			err = vs.manifest.Sync()
		}
		if err != nil {
			err = fmt.Errorf("manifest: appending to %s: %w", MakeFilename(KindManifest, vs.ManifestFileNum()), err)
		}
	}
	if err != nil {
		vs.err = err
		return err
	}

	// 4. Install it.
	vs.logNum.Store(e.LogNum)
	if e.DBID != 0 {
		vs.dbID.Store(e.DBID)
	}
	vs.SetLastSeq(e.LastSeq)
	vs.mu.Lock()
	vs.formerDBIDs = mergeFormers(vs.formerDBIDs, e.FormerDBIDs)
	vs.compactPointers = cps
	vs.mu.Unlock()
	vs.install(v)
	return nil
}

// Rollover starts the next manifest now, with a snapshot of the current
// Version as its first record, as LogAndApply does past the size limit:
// a manifest logs every edit since its snapshot, and a caller whose tree
// no longer resembles the one those edits built (a full compaction) drops
// them. Calls are serialized with LogAndApply by the caller; a failure is
// sticky, as LogAndApply's.
func (vs *VersionSet) Rollover() error {
	if err := vs.writable(); err != nil {
		return err
	}
	if err := vs.rollover(vs.current, vs.state()); err != nil {
		vs.err = err
		return err
	}
	return nil
}

// writable returns why the manifest takes no more writes: ErrClosed, or
// the sticky error of a write that failed; nil when it takes them.
func (vs *VersionSet) writable() error {
	vs.mu.Lock()
	closed := vs.closed
	vs.mu.Unlock()
	if closed {
		return ErrClosed
	}
	return vs.err
}

// checkEdit rejects what the builder cannot see: numbers never allocated
// and a log number moving backwards.
func (vs *VersionSet) checkEdit(e *VersionEdit) error {
	next := e.NextFileNum
	switch {
	case e.LogNum < vs.LogNum():
		return fmt.Errorf("manifest: %w: log number %d below current %d", ErrInvalidEdit, e.LogNum, vs.LogNum())
	case e.LogNum >= next:
		return fmt.Errorf("manifest: %w: log number %d never allocated (next %d)", ErrInvalidEdit, e.LogNum, next)
	case e.LastSeq > base.MaxSeqNum:
		return fmt.Errorf("manifest: %w: last sequence %d beyond the 56-bit range", ErrInvalidEdit, e.LastSeq)
	case e.DBID != 0 && vs.DBID() != 0 && e.DBID != vs.DBID():
		return fmt.Errorf("manifest: %w: DB id %016x for a DB whose id is %016x", ErrInvalidEdit, e.DBID, vs.DBID())
	}
	for _, cp := range e.CompactPointers {
		if cp.Level < 0 || cp.Level >= NumLevels || !cp.Key.Kind().Valid() {
			return fmt.Errorf("manifest: %w: compact pointer L%d %v", ErrInvalidEdit, cp.Level, cp.Key)
		}
	}
	for _, nf := range e.Added {
		if nf.Meta != nil && nf.Meta.FileNum >= next {
			return fmt.Errorf("manifest: %w: table %06d never allocated (next %d)", ErrInvalidEdit, nf.Meta.FileNum, next)
		}
	}
	return nil
}

// formers returns the former DB ids, under mu.
func (vs *VersionSet) formers() []FormerDBID {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	return vs.formerDBIDs
}

// mergeFormers returns formers with more added, sorted by id, each id
// once (the first given of it kept); formers is not modified.
func mergeFormers(formers, more []FormerDBID) []FormerDBID {
	if len(more) == 0 {
		return formers
	}
	out := slices.Concat(formers, more)
	slices.SortStableFunc(out, func(a, b FormerDBID) int { return cmp.Compare(a.ID, b.ID) })
	return slices.CompactFunc(out, func(a, b FormerDBID) bool { return a.ID == b.ID })
}

// counters are the set-wide values a snapshot records beside the tables.
type counters struct {
	logNum          uint64
	lastSeq         base.SeqNum
	compactPointers [NumLevels]base.InternalKey
	dbID            uint64
	formerDBIDs     []FormerDBID
}

// state returns the set's counters as they are installed now.
func (vs *VersionSet) state() counters {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	return counters{logNum: vs.LogNum(), lastSeq: vs.LastSeq(), compactPointers: vs.compactPointers, dbID: vs.DBID(), formerDBIDs: vs.formerDBIDs}
}

// snapshot returns the edit that recreates v and c from nothing: the first
// record of every manifest. NextFileNum is read last, after the caller has
// allocated the new manifest's own number.
func (vs *VersionSet) snapshot(v *Version, c counters) *VersionEdit {
	e := &VersionEdit{
		FormatVersion: formatVersion,
		LogNum:        c.logNum,
		NextFileNum:   vs.nextFileNum.Load(),
		LastSeq:       c.lastSeq,
		DBID:          c.dbID,
		FormerDBIDs:   c.formerDBIDs,
	}
	for level, k := range c.compactPointers {
		if k.UserKey != nil || k.Trailer != 0 {
			e.CompactPointers = append(e.CompactPointers, CompactPointer{Level: level, Key: k})
		}
	}
	for level, files := range v.Levels {
		for _, f := range files {
			e.Added = append(e.Added, NewFile{Level: level, Meta: f})
		}
	}
	return e
}

// dueForRollover reports whether the next edit starts a new manifest:
// the first after Recover, and then once the manifest has passed the size
// limit and its edits have grown as long as its snapshot
// (DefaultMaxManifestSize says why).
func (vs *VersionSet) dueForRollover() bool {
	if vs.manifest == nil || vs.maxManifestSize == 0 {
		return true
	}
	size := vs.manifest.Size()
	return size >= vs.maxManifestSize && size-vs.snapshotSize >= vs.snapshotSize
}

// maxKeptEncodeBuf bounds the encoding buffer LogAndApply keeps between
// edits: the snapshot of a tree of huge keys (two of up to 8 MiB a table)
// would otherwise hold its memory for as long as the DB is open.
const maxKeptEncodeBuf = 1 << 20

// trimBuf lets go of an encoding buffer grown past maxKeptEncodeBuf.
func (vs *VersionSet) trimBuf() {
	if cap(vs.buf) > maxKeptEncodeBuf {
		vs.buf = nil
	}
}

// rollover starts a new manifest holding a snapshot of v and switches
// CURRENT to it. The order makes a crash at any step leave CURRENT naming
// a complete manifest, old or new:
//
//  1. create MANIFEST-n, append the snapshot, sync it, sync the directory
//     (CURRENT must never name a file whose entry could be lost);
//  2. write CURRENT.tmp, sync it, rename it over CURRENT, sync the
//     directory — the rename is the commit point;
//  3. only then close and remove the old manifest.
//
// A failure before the rename leaves the old manifest current, and the
// new file is removed (best effort: Recover removes stray manifests too).
// A failure after it (the directory sync) leaves both files in place, as
// either may be the one CURRENT names after a crash.
func (vs *VersionSet) rollover(v *Version, c counters) error {
	num := vs.NextFileNum()
	name := MakeFilename(KindManifest, num)
	f, err := vs.fs.Create(vs.path(name))
	if err != nil {
		return fmt.Errorf("manifest: creating %s: %w", name, err)
	}
	w := wal.NewWriter(unmapped{f})
	renamed := false
	err = func() error {
		vs.buf = vs.snapshot(v, c).Encode(vs.buf[:0])
		_, err := w.Append(vs.buf)
		vs.trimBuf()
		if err != nil {
			return err
		}
		if err := w.Sync(); err != nil {
			return err
		}
		if err := vs.fs.SyncDir(vs.dir); err != nil {
			return err
		}
		renamed, err = vs.setCurrent(name)
		return err
	}()
	if err != nil {
		w.Close()
		if !renamed {
			vs.fs.Remove(vs.path(name))
		}
		return fmt.Errorf("manifest: rolling over to %s: %w", name, err)
	}
	oldNum, old := vs.ManifestFileNum(), vs.manifest
	vs.manifest, vs.snapshotSize = w, w.Size()
	vs.manifestNum.Store(num)
	if old != nil {
		// The old manifest is no longer named by CURRENT: failing to close
		// or remove it loses nothing, and the next first rollover removes
		// it.
		old.Close()
		vs.fs.Remove(vs.path(MakeFilename(KindManifest, oldNum)))
	} else {
		// The first manifest this set writes: the recovered one, and any a
		// crashed rollover left, are obsolete now that CURRENT names it.
		vs.removeStrays(oldNum)
	}
	return nil
}

// setCurrent atomically points CURRENT at the manifest called name.
// renamed reports whether the rename, the commit point, happened.
func (vs *VersionSet) setCurrent(name string) (renamed bool, err error) {
	tmp := vs.path(currentTempName)
	// A CURRENT.tmp left here (Open takes only a crashed rollover's) is
	// unlinked, not written over: under its name may be a link to another
	// file, even another DB's CURRENT, which Create would truncate. Best
	// effort: where the unlink fails, Create truncates the file as before.
	_ = vs.fs.Remove(tmp)
	f, err := vs.fs.Create(tmp)
	if err != nil {
		return false, err
	}
	_, err = f.Write([]byte(name + "\n"))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = vs.fs.Rename(tmp, vs.path(currentName))
		renamed = err == nil
	}
	if err == nil {
		err = vs.fs.SyncDir(vs.dir)
	}
	if err != nil {
		return renamed, errors.Join(fmt.Errorf("setting CURRENT to %s", name), err)
	}
	return true, nil
}

// unmapped hides a file's vfs.Mapper from wal.NewWriter, so the manifest
// is written with Write. The manifest is read by the synced-log rule (wal
// invariant 6), which calls damage followed by anything but zeros
// corruption: a kill -9 in the middle of a store into a mapping leaves just
// that (a fragment's payload before its header is stored, or a prefix of
// its frame, then the window's zeros), while a process crash never tears a
// write(2). Every manifest append is synced, so mapping would save nothing.
type unmapped struct{ vfs.File }
