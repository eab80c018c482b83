package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/vfs"
	"github.com/monbandb/monban/wal"
)

// maxCurrentSize bounds what is read of CURRENT: a manifest name and a
// newline are a few dozen bytes.
const maxCurrentSize = 256

// Recover opens the manifest of an existing DB in dir:
//
//  1. read CURRENT for the manifest's name;
//  2. replay the manifest's edits into one Version and the counters;
//     a torn final record ends the log cleanly and is dropped
//     (RecoveredDroppedBytes says how much). Torn is judged by the rule of
//     a log synced after every append (wal.NewSyncedReader): only a final
//     record cut short by the end of the file, or zeros, can be a crash;
//     any other damage, in the last record too, is corruption;
//
// Recover writes and removes nothing, so that a caller that finds the
// recovered state inconsistent with the directory can refuse it with the
// directory untouched. The first LogAndApply rolls over to a new manifest
// holding a snapshot — appends never follow a torn tail, and the log never
// grows across restarts — and then removes every other MANIFEST-* and a
// stale CURRENT.tmp. The caller must Reserve every file number in the
// directory before allocating one, and MarkFileNumUsed the numbers new
// files must come after (the WALs, replayed in number order): a number
// allocated but never recorded before a crash may be in use (a WAL
// created, say).
//
// An error wrapping fs.ErrNotExist means exactly "no DB here, create
// one": dir is missing or holds no monban data file (no *.sst, *.log or
// MANIFEST-*; LOCK and CURRENT.tmp are not data), or the only one is
// MANIFEST-000001 holding a prefix of what Create writes (a Create that
// crashed before CURRENT existed; see createdManifest). Every other state
// is a damaged DB and returns an error wrapping base.ErrCorruption, never
// fs.ErrNotExist, that names the file at fault: data files without
// CURRENT; an empty or malformed CURRENT; a CURRENT naming a manifest that
// is missing or cannot be opened; a manifest that is empty, corrupt
// (docs/format.md, "End of a manifest") or does not apply.
func Recover(fsys vfs.FS, dir string) (*VersionSet, error) {
	vs := newVersionSet(fsys, dir)
	name, oldNum, err := vs.readCurrent()
	if err != nil {
		return nil, err
	}
	return vs.recoverFrom(name, oldNum)
}

// RecoverManifest is Recover of the manifest called name rather than the
// one CURRENT names: what Repair reads when CURRENT is lost or names a
// manifest that does not read. Every check of Recover applies.
func RecoverManifest(fsys vfs.FS, dir, name string) (*VersionSet, error) {
	kind, num, ok := ParseFilename(name)
	if !ok || kind != KindManifest {
		return nil, fmt.Errorf("manifest: %q is not a manifest name: %w", name, fs.ErrInvalid)
	}
	return newVersionSet(fsys, dir).recoverFrom(name, num)
}

// HasFormat reports whether the file at path opens with a manifest's
// format record (tag 1, "monban-manifest"), checksummed as monban frames
// it: a file that does not is another program's manifest, or lost its
// first record. It checks nothing past that record; Recover verifies.
// The error is the file system's, when it could not tell (an open or a
// read failed): a failed read is not an answer.
func HasFormat(fsys vfs.FS, path string) (bool, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	rec, err := wal.NewReader(f, path).Next()
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, base.ErrCorruption) {
		return false, err
	}
	var e VersionEdit
	return err == nil && e.Decode(rec) == nil && e.FormatVersion != 0, nil
}

// recoverFrom replays the manifest called name, numbered oldNum.
func (vs *VersionSet) recoverFrom(name string, oldNum uint64) (*VersionSet, error) {
	v, c, err := vs.replay(name)
	if err != nil {
		return nil, err
	}
	if oldNum >= vs.nextFileNum.Load() {
		return nil, fmt.Errorf("manifest: %s: its own number is not below next file number %d: %w",
			name, vs.nextFileNum.Load(), base.ErrCorruption)
	}
	vs.logNum.Store(c.logNum)
	vs.lastSeq.Store(uint64(c.lastSeq))
	vs.dbID.Store(c.dbID)
	vs.formerDBIDs = c.formerDBIDs
	vs.compactPointers = c.compactPointers
	vs.manifestNum.Store(oldNum)
	vs.install(v)
	return vs, nil
}

// readCurrent returns the manifest name CURRENT holds and its number.
func (vs *VersionSet) readCurrent() (string, uint64, error) {
	f, err := vs.fs.Open(vs.path(currentName))
	if errors.Is(err, fs.ErrNotExist) {
		return "", 0, vs.noCurrent()
	}
	if err != nil {
		return "", 0, fmt.Errorf("manifest: opening CURRENT: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCurrentSize+1))
	if err != nil {
		return "", 0, fmt.Errorf("manifest: reading CURRENT: %w", err)
	}
	name, ok := strings.CutSuffix(string(b), "\n")
	kind, num, parsed := ParseFilename(name)
	if len(b) > maxCurrentSize || !ok || !parsed || kind != KindManifest {
		return "", 0, fmt.Errorf("manifest: CURRENT holds %q, not a manifest name and newline: %w",
			b[:min(len(b), 64)], base.ErrCorruption)
	}
	return name, num, nil
}

// noCurrent returns the error for a directory without CURRENT: fs.ErrNotExist
// if it holds no DB (Recover's doc), corruption naming CURRENT otherwise.
func (vs *VersionSet) noCurrent() error {
	noDB := fmt.Errorf("manifest: no DB in %s: %w", vs.dir, fs.ErrNotExist)
	names, err := vs.fs.List(vs.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return noDB
	}
	if err != nil {
		return fmt.Errorf("manifest: CURRENT is missing and listing %s failed: %w", vs.dir, err)
	}
	var data []string
	for _, n := range names {
		if kind, _, ok := ParseFilename(n); ok && (kind == KindTable || kind == KindLog || kind == KindManifest) {
			data = append(data, n)
		}
	}
	if len(data) == 0 {
		return noDB
	}
	if len(data) == 1 && data[0] == MakeFilename(KindManifest, 1) {
		crashed, err := vs.isCrashedCreate(data[0])
		if err != nil {
			return err
		}
		if crashed {
			return noDB
		}
	}
	const named = 4
	list := strings.Join(data[:min(len(data), named)], ", ")
	if len(data) > named {
		list += ", …"
	}
	return fmt.Errorf("manifest: CURRENT is missing but %s holds %d data files (%s): %w",
		vs.dir, len(data), list, base.ErrCorruption)
}

// isCrashedCreate reports whether the manifest called name holds a prefix
// (possibly all, possibly none) of the bytes Create writes to it, followed
// by nothing but zeros (a file extended before its data landed). Create
// writes CURRENT only after that manifest is synced, and nothing else is
// written before CURRENT exists, so such a directory holds no data: a DB
// that ever logged an edit or wrote a WAL or table would show it.
func (vs *VersionSet) isCrashedCreate(name string) (bool, error) {
	want, err := createdManifest()
	if err != nil {
		return false, err
	}
	f, err := vs.openManifest(name, "CURRENT is missing and the directory lists")
	if err != nil {
		return false, err
	}
	defer f.Close()
	// Create writes a few dozen bytes; zero fill reaches at most a page or
	// a file-system block, well within one log block.
	const limit = 32 << 10
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return false, fmt.Errorf("manifest: reading %s: %w", name, err)
	}
	n := len(b)
	for n > 0 && b[n-1] == 0 {
		n--
	}
	return len(b) <= limit && n <= len(want) && string(b[:n]) == string(want[:n]), nil
}

// createdManifest returns the bytes Create writes to MANIFEST-000001: the
// snapshot of the empty tree with next file number 2, framed as a log
// (docs/format.md, the first worked example; TestCreateExample pins it).
func createdManifest() ([]byte, error) {
	mem := vfs.NewMem()
	f, err := mem.Create("m")
	if err != nil {
		return nil, err
	}
	w := wal.NewWriter(f)
	if _, err := w.Append((&VersionEdit{FormatVersion: formatVersion, NextFileNum: 2}).Encode(nil)); err != nil {
		return nil, err
	}
	size := w.Size()
	if err := w.Close(); err != nil {
		return nil, err
	}
	if f, err = mem.Open("m"); err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, size)
	_, err = f.ReadAt(b, 0)
	return b, err
}

// openManifest opens the manifest called name, which the directory is
// known to hold (why says how). A missing one is corruption, and does not
// wrap fs.ErrNotExist, which would read as "no DB here". Any other failure
// is the disk's, returned as such: not corruption, which would send the
// user to Repair a DB that may open fine once the disk answers.
func (vs *VersionSet) openManifest(name, why string) (vfs.File, error) {
	f, err := vs.fs.Open(vs.path(name))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("manifest: %s %s, which cannot be opened (%v): %w", why, name, err, base.ErrCorruption)
	}
	if err != nil {
		return nil, fmt.Errorf("manifest: %s %s, and opening it failed: %w", why, name, err)
	}
	return f, nil
}

// replay reads every edit of the manifest called name into a Version and
// the counters, and sets vs.nextFileNum and vs.droppedBytes.
func (vs *VersionSet) replay(name string) (*Version, counters, error) {
	var c counters
	f, err := vs.openManifest(name, "CURRENT names")
	if err != nil {
		return nil, c, err
	}
	defer f.Close()
	corrupt := func(i int, format string, args ...any) error {
		return fmt.Errorf("manifest: %s: edit %d: %s: %w", name, i, fmt.Sprintf(format, args...), base.ErrCorruption)
	}
	r := wal.NewSyncedReader(f, name)
	b := newBuilder(&Version{})
	var next uint64
	var e VersionEdit
	i := 0
	for ; ; i++ {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, c, fmt.Errorf("manifest: replaying %s: %w", name, err)
		}
		if err := e.Decode(rec); err != nil {
			return nil, c, fmt.Errorf("manifest: %s: edit %d (offset %d): %w", name, i, r.Offset(), err)
		}
		// The format record opens the manifest and appears nowhere else:
		// a manifest whose first record lacks it is not one we wrote.
		if (i == 0) != (e.FormatVersion != 0) {
			return nil, c, corrupt(i, "format record misplaced")
		}
		if err := b.apply(&e); err != nil {
			return nil, c, corrupt(i, "%v", err)
		}
		if e.LogNum != 0 {
			c.logNum = e.LogNum
		}
		if e.DBID != 0 {
			if c.dbID != 0 && e.DBID != c.dbID {
				return nil, c, corrupt(i, "DB id %016x after %016x: edits of two DBs", e.DBID, c.dbID)
			}
			c.dbID = e.DBID
		}
		c.formerDBIDs = mergeFormers(c.formerDBIDs, e.FormerDBIDs)
		next = max(next, e.NextFileNum)
		c.lastSeq = max(c.lastSeq, e.LastSeq)
		for _, cp := range e.CompactPointers {
			c.compactPointers[cp.Level] = cp.Key
		}
	}
	if i == 0 {
		return nil, c, fmt.Errorf("manifest: %s holds no edit: %w", name, base.ErrCorruption)
	}
	v, err := b.build()
	if err != nil {
		return nil, c, fmt.Errorf("manifest: %s: %v: %w", name, err, base.ErrCorruption)
	}
	// Every number in use was allocated before it was recorded, so all of
	// them are below the recorded NextFileNum.
	if m := b.maxFileNum(); m >= next || c.logNum >= next {
		return nil, c, fmt.Errorf("manifest: %s: table %06d or log %06d not below next file number %d: %w",
			name, m, c.logNum, next, base.ErrCorruption)
	}
	vs.nextFileNum.Store(next)
	vs.droppedBytes = r.DroppedBytes()
	return v, c, nil
}

// removeStrays removes the manifest recovered from, numbered recovered,
// and the other manifests and a stale CURRENT.tmp a crash during a
// rollover left. A file of a manifest's name whose bytes are no manifest
// of this DB's (nor empty, as one a crash cut before its first byte) is
// not provably a stray, and stays: another DB's manifest, or one that
// names no DB. Best effort: a stray costs only space, so errors are
// ignored.
func (vs *VersionSet) removeStrays(recovered uint64) {
	names, err := vs.fs.List(vs.dir)
	if err != nil {
		return
	}
	for _, n := range names {
		kind, num, ok := ParseFilename(n)
		switch {
		case !ok, kind == KindManifest && num == vs.ManifestFileNum():
		case kind == KindCurrentTemp && vs.isOwnCurrentTemp(), kind == KindManifest && (num == recovered || vs.isOwnManifest(n)):
			_ = vs.fs.Remove(vs.path(n))
		}
	}
}

// isOwnCurrentTemp reports whether CURRENT.tmp is one a rollover left
// (CurrentTempIsOwn).
func (vs *VersionSet) isOwnCurrentTemp() bool {
	own, err := CurrentTempIsOwn(vs.fs, vs.path(currentTempName))
	return err == nil && own
}

// CurrentTempIsOwn reports whether the file at path is a CURRENT.tmp a
// rollover could have left: what it writes there (a manifest name and a
// newline, as CURRENT holds), or a crash's prefix of that, perhaps
// followed by zeros. Anything else is another program's file, which no
// rollover may delete or write over. The error is the file system's.
func CurrentTempIsOwn(fsys vfs.FS, path string) (bool, error) {
	f, err := fsys.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCurrentSize+1))
	if err != nil {
		return false, err
	}
	b = bytes.TrimRight(b, "\x00")
	if len(b) > maxCurrentSize {
		return false, nil
	}
	name, whole := strings.CutSuffix(string(b), "\n")
	if whole {
		kind, _, ok := ParseFilename(name)
		return ok && kind == KindManifest, nil
	}
	if len(name) <= len(manifestPrefix) {
		return strings.HasPrefix(manifestPrefix, name), nil
	}
	digits, ok := strings.CutPrefix(name, manifestPrefix)
	return ok && strings.Trim(digits, "0123456789") == "", nil
}

// isOwnManifest reports whether the file name is empty or a manifest of
// this DB's: in monban's format, with an edit that gives this DB's id (a
// rollover's snapshot carries it; an older manifest may give it later),
// or none, for a DB that has none yet (written before DB ids).
func (vs *VersionSet) isOwnManifest(name string) bool {
	f, err := vs.fs.Open(vs.path(name))
	if err != nil {
		return false
	}
	size, err := f.Size()
	f.Close()
	if err == nil && size == 0 {
		return true
	}
	own, err := HasFormat(vs.fs, vs.path(name))
	return err == nil && own && manifestDBID(vs.fs, vs.path(name)) == vs.DBID()
}

// manifestDBID returns the DB id the first edit that gives one in the
// manifest at path gives, 0 if none does (up to its first damage).
func manifestDBID(fsys vfs.FS, path string) uint64 {
	f, err := fsys.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	r := wal.NewReader(f, path)
	for {
		rec, err := r.Next()
		if err != nil {
			return 0
		}
		var e VersionEdit
		if e.Decode(rec) != nil {
			return 0
		}
		if e.DBID != 0 {
			return e.DBID
		}
	}
}
