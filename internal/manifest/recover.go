package manifest

import (
	"fmt"
	"io"
	"strings"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/vfs"
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
//  3. roll over to a new manifest holding a snapshot, so appends never
//     follow a torn tail and the log never grows across restarts, then
//     remove every other MANIFEST-* and a stale CURRENT.tmp.
//
// A missing CURRENT returns an error wrapping fs.ErrNotExist (the DB does
// not exist yet). A CURRENT that is malformed or names a manifest that
// cannot be opened, and a manifest that does not decode or apply, return
// an error wrapping base.ErrCorruption that names the file.
func Recover(fsys vfs.FS, dir string) (*VersionSet, error) {
	vs := newVersionSet(fsys, dir)
	name, oldNum, err := vs.readCurrent()
	if err != nil {
		return nil, err
	}
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
	vs.compactPointers = c.compactPointers
	vs.manifestNum.Store(oldNum)
	vs.install(v)
	if err := vs.rollover(v, c); err != nil {
		return nil, err
	}
	vs.removeStrays()
	return vs, nil
}

// readCurrent returns the manifest name CURRENT holds and its number.
func (vs *VersionSet) readCurrent() (string, uint64, error) {
	f, err := vs.fs.Open(vs.path(currentName))
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

// replay reads every edit of the manifest called name into a Version and
// the counters, and sets vs.nextFileNum and vs.droppedBytes.
func (vs *VersionSet) replay(name string) (*Version, counters, error) {
	var c counters
	f, err := vs.fs.Open(vs.path(name))
	if err != nil {
		return nil, c, fmt.Errorf("manifest: CURRENT names %s, which cannot be opened: %w: %w", name, base.ErrCorruption, err)
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

// removeStrays removes manifests other than the current one and a stale
// CURRENT.tmp, left by a crash during a rollover. Best effort: a stray
// costs only space, so errors are ignored.
func (vs *VersionSet) removeStrays() {
	names, err := vs.fs.List(vs.dir)
	if err != nil {
		return
	}
	for _, n := range names {
		kind, num, ok := ParseFilename(n)
		if ok && (kind == KindManifest && num != vs.ManifestFileNum() || kind == KindCurrentTemp) {
			_ = vs.fs.Remove(vs.path(n))
		}
	}
}
