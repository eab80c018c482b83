package lsm

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"syscall"

	"github.com/monbandb/monban/compaction"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/keyspan"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/internal/merge"
	"github.com/monbandb/monban/vfs"
)

// rebuild merges the verified tables and the replayed WALs into new
// last-level tables (steps 4 and 5 of RepairWith) and commits them.
func (r *repairer) rebuild() error {
	if err := r.removeStaging(); err != nil {
		return err
	}
	vs, err := manifest.Create(r.d.fs, r.path(repairStaging))
	if err != nil {
		return err
	}
	defer vs.Close() // on failure; closing twice is harmless
	vs.MarkFileNumUsed(r.after)
	for _, num := range r.taken {
		vs.Reserve(num)
	}
	r.d.vs = vs
	// The DB keeps its id where a trusted manifest gives it, or where the
	// tables and WALs it merges all carry one and the same, and gets one
	// now otherwise: its new tables carry it (db.id) and its manifest
	// records it, so that its files a crash brings back after the commit
	// (step 6's removals, before the directory is synced) are its own,
	// which Open removes, and its tables copied into another DB are not
	// taken for that DB's.
	r.d.dbID = r.trustedDBID()
	if r.d.dbID == 0 {
		r.d.dbID = r.soleID()
	}
	if r.d.dbID == 0 {
		r.d.dbID = newID()
	}

	var inputs []base.InternalIterator
	var spans []keyspan.Spans // range tombstones
	for _, t := range r.readers {
		// Stepping over what readTable stepped over: the blocks that do
		// not verify (none, in a table merged whole).
		inputs = append(inputs, t.NewSalvageIter())
		spans = append(spans, t.RangeDels())
	}
	for _, m := range r.mems {
		inputs = append(inputs, m.NewIter())
		spans = append(spans, m.RangeDels())
	}
	// No snapshots: one version per key survives. Nothing lies below the
	// last level, so every tombstone left on top goes.
	bottom := func([]byte) (bool, compaction.DropReason) { return true, compaction.DropBottom }
	it := compaction.NewIter(merge.NewIter(inputs...), nil, bottom)
	// The range tombstones delete what they cover on the way, and then
	// hide nothing: none is written.
	it.SetRangeDels(keyspan.Merge(spans...))
	// The rebuilt tree is one level: per-level sizing has nothing to
	// spread, and gives it BloomBitsPerKey too.
	outputs, err := r.d.writeTables(it, keyspan.Spans{}, compaction.NewSplitter(r.d.opts.TargetFileSize, nil), NumLevels-1, float64(r.d.opts.bloomBits()))
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	drops := it.Drops()
	r.report.Shadowed, r.report.TombstonesDropped = drops[compaction.DropShadowed], drops[compaction.DropBottom]

	// LogNum is a fresh number, above every WAL merged: should a crash
	// follow the commit, Open must not replay them a second time. Its WAL
	// exists, empty, before the edit names it, as Open checks.
	logNum := vs.NextFileNum()
	wal, err := r.d.createWAL(logNum, 0)
	if err != nil {
		return err
	}
	if err := wal.Close(); err != nil {
		return err
	}
	if r.trusted != nil {
		// What the tree had deleted since may have held the highest
		// numbers: a sequence number is never given out twice.
		r.lastSeq = max(r.lastSeq, r.trusted.lastSeq)
	}
	edit := &manifest.VersionEdit{LogNum: logNum, LastSeq: r.lastSeq, DBID: r.d.dbID}
	if r.trusted != nil {
		edit.FormerDBIDs = r.trusted.formerDBIDs
	}
	for _, meta := range outputs {
		edit.Added = append(edit.Added, manifest.NewFile{Level: NumLevels - 1, Meta: meta})
		r.report.Tables = append(r.report.Tables, meta.FileNum)
		r.report.KeysRecovered += meta.NumEntries
	}
	// A rollover writes the edit as the first record of a new manifest
	// numbered above every file, where the staging manifest (number 1)
	// could name the same number as an old one.
	vs.SetMaxManifestSize(0)
	if err := vs.LogAndApply(edit); err != nil {
		return err
	}
	if err := vs.Close(); err != nil {
		return err
	}
	r.report.LastSeq = uint64(vs.LastSeq())
	r.report.Manifest = manifest.MakeFilename(manifest.KindManifest, vs.ManifestFileNum())
	return r.commit(r.report.Manifest)
}

// soleID returns the DB id every table Repair merges and every WAL whose
// identity it read carries, if there is one such id; 0 otherwise (none,
// or several: files of different DBs, or of a checkpoint and the DB it
// was taken from).
func (r *repairer) soleID() uint64 {
	var id uint64
	note := func(other uint64) bool {
		if other != 0 && id != 0 && other != id {
			return false
		}
		id = max(id, other)
		return true
	}
	for _, t := range r.readers {
		if !note(t.Properties().DBID) {
			return 0
		}
	}
	for _, w := range r.wals {
		if w.headRead && !note(w.id) {
			return 0
		}
	}
	return id
}

// commit moves the staged manifest into dir, then renames the staged
// CURRENT over dir's, the commit point. Both were synced by the manifest
// package; each rename is made durable before the next step.
func (r *repairer) commit(manifestName string) error {
	staging := r.path(repairStaging)
	current := manifest.MakeFilename(manifest.KindCurrent, 0)
	for _, name := range []string{manifestName, current} {
		if err := r.d.fs.Rename(filepath.Join(staging, name), r.path(name)); err != nil {
			return err
		}
		if err := r.d.fs.SyncDir(r.d.dir); err != nil {
			return err
		}
	}
	return nil
}

// removeStaging removes the staging directory and what a crashed Repair
// left in it (stagedNames). A file of its name is not monban's (Repair
// makes a directory there), nor is a directory holding anything else:
// either is set aside whole, its bytes kept.
func (r *repairer) removeStaging() error {
	names, err := stagedNames(r.d.fs, r.d.dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case errors.Is(err, syscall.ENOTDIR):
		return r.setAside(repairStaging, FateNotMonban, errors.New("a file where Repair stages in a directory"), moveAside)
	case errors.Is(err, errNotStaged):
		return r.setAside(repairStaging, FateNotMonban, err, moveAside)
	case err != nil:
		return err
	}
	return removeStaged(r.d.fs, r.d.dir, names)
}

// errNotStaged says that REPAIR.tmp holds a file no Repair stages there.
var errNotStaged = errors.New("a file Repair never stages")

// stagedNames lists dir's staging directory, which must hold only what a
// Repair stages there: a manifest, CURRENT, CURRENT.tmp. Anything else
// gives an error wrapping errNotStaged; a missing directory, one wrapping
// fs.ErrNotExist, and a file in its place, syscall.ENOTDIR.
func stagedNames(fsys vfs.FS, dir string) ([]string, error) {
	names, err := fsys.List(filepath.Join(dir, repairStaging))
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		kind, _, ok := manifest.ParseFilename(name)
		if !ok || kind != manifest.KindManifest && kind != manifest.KindCurrent && kind != manifest.KindCurrentTemp {
			return nil, fmt.Errorf("%s holds %s: %w", repairStaging, name, errNotStaged)
		}
	}
	return names, nil
}

// removeStaged removes names from dir's staging directory, then the
// directory, and syncs dir.
func removeStaged(fsys vfs.FS, dir string, names []string) error {
	staging := filepath.Join(dir, repairStaging)
	for _, name := range names {
		if err := fsys.Remove(filepath.Join(staging, name)); err != nil {
			return err
		}
	}
	if err := fsys.Remove(staging); err != nil {
		return err
	}
	return fsys.SyncDir(dir)
}

// removeObsolete removes, after the commit, the inputs the new tables hold
// and the originals of what was copied into lost/ (step 6 of RepairWith).
// A failure leaves a stray that Open removes, so it is logged, not
// returned.
func (r *repairer) removeObsolete() {
	for _, name := range r.obsolete {
		if err := r.d.fs.Remove(r.path(name)); err != nil {
			r.d.opts.Logger.Warn("monban: repair: removing a file", "file", name, "err", err)
			continue
		}
		r.report.Removed = append(r.report.Removed, name)
	}
	if err := r.removeStaging(); err != nil {
		r.d.opts.Logger.Warn("monban: repair: removing a file", "file", repairStaging, "err", err)
	}
	// Durable, so that a crash does not bring the removed files back.
	if err := r.d.fs.SyncDir(r.d.dir); err != nil {
		r.d.opts.Logger.Warn("monban: repair: syncing the directory", "err", err)
	}
}
