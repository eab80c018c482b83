package manifest

import (
	"errors"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/vfs"
	"github.com/monbandb/monban/wal"
)

// ErrClosed is returned by LogAndApply after Close.
var ErrClosed = errors.New("manifest: version set closed")

// ErrInvalidEdit is wrapped by the error LogAndApply returns for an edit
// that cannot apply to the current Version (a deleted table not there, an
// added one already there, overlapping tables in L1+, a file number never
// allocated). Nothing is written for such an edit: it is a bug in the
// caller, and the manifest stays as it was.
var ErrInvalidEdit = errors.New("manifest: invalid version edit")

// DefaultMaxManifestSize is the manifest length past which LogAndApply
// rolls over to a new manifest that starts with a snapshot. A snapshot of
// 10,000 tables with 32-byte keys is about 1 MiB, so at 4 MiB a rollover
// happens at most every few thousand edits and recovery reads little. A
// manifest also waits until the edits after its snapshot are as long as
// the snapshot: a tree whose snapshot outgrows the limit (tables by the
// tens of thousands, or long keys) would otherwise write all of it again
// at every edit, a cost that grows with the square of the tables.
const DefaultMaxManifestSize = 4 << 20

// VersionSet owns the current Version, the manifest it is logged to, and
// the CURRENT file that names the manifest. See the package doc for the
// concurrency rules.
type VersionSet struct {
	fs  vfs.FS
	dir string

	// Counters readable from any goroutine.
	nextFileNum atomic.Uint64
	lastSeq     atomic.Uint64
	logNum      atomic.Uint64
	manifestNum atomic.Uint64
	dbID        atomic.Uint64
	formerDBIDs []FormerDBID // sorted by id; under mu
	// reserved are numbers NextFileNum passes over: files found in the
	// directory above the counter (Reserve).
	reservedMu sync.Mutex
	reserved   map[uint64]bool

	// Writer state, owned by the serialized LogAndApply / Close callers.
	maxManifestSize int64
	manifest        *wal.Writer
	snapshotSize    int64 // of the snapshot that starts manifest
	buf             []byte
	err             error // sticky: the manifest's tail is unknown after a failed write
	droppedBytes    int64

	mu sync.Mutex
	// current is the newest Version; the set holds one reference to it
	// until Close, which drops it and sets current to nil.
	current *Version
	// live holds every Version with references, current included.
	live map[*Version]struct{}
	// fileRefs counts, per table number, the live Versions that hold it.
	// Keyed by number, not by *FileMetadata, so that an edit moving a table
	// with a fresh metadata struct does not make the old one "obsolete".
	fileRefs map[uint64]int32
	// obsolete are tables that left the last live Version holding them.
	obsolete []*FileMetadata
	// placementRefs counts, per table at a level, the live Versions that
	// hold it there; nil until TrackPlacements. left are the placements
	// that left the last live Version holding them.
	placementRefs map[placementKey]int32
	left          []Placement
	// compactPointers are the per-level compaction cursors.
	compactPointers [NumLevels]base.InternalKey
	closed          bool
}

func newVersionSet(fs vfs.FS, dir string) *VersionSet {
	return &VersionSet{
		fs:              fs,
		dir:             dir,
		maxManifestSize: DefaultMaxManifestSize,
		live:            make(map[*Version]struct{}),
		fileRefs:        make(map[uint64]int32),
	}
}

func (vs *VersionSet) path(name string) string { return filepath.Join(vs.dir, name) }

// Current returns the current Version with a reference taken for the
// caller, who must Unref it when done, or nil after Close. Safe from any
// goroutine.
func (vs *VersionSet) Current() *Version {
	vs.mu.Lock()
	v := vs.current
	if v != nil {
		v.Ref()
	}
	vs.mu.Unlock()
	return v
}

// NextFileNum allocates a file number for a new table, WAL or manifest,
// passing over the Reserved ones. Safe from any goroutine. The number
// becomes durable with the next LogAndApply; a number allocated but never
// recorded may be handed out again after a crash, so recovery must
// Reserve (or MarkFileNumUsed) every file number it finds in the
// directory before allocating.
func (vs *VersionSet) NextFileNum() uint64 {
	for {
		n := vs.nextFileNum.Add(1) - 1
		vs.reservedMu.Lock()
		taken := vs.reserved[n]
		vs.reservedMu.Unlock()
		if !taken {
			return n
		}
	}
}

// Reserve makes sure NextFileNum never returns num, but gives the
// numbers below it still: a file found in the directory takes its own
// name, not every name up to it. Numbered past, a stray file at the top
// of the range left no number to give.
func (vs *VersionSet) Reserve(num uint64) {
	vs.reservedMu.Lock()
	if vs.reserved == nil {
		vs.reserved = make(map[uint64]bool)
	}
	vs.reserved[num] = true
	vs.reservedMu.Unlock()
}

// MarkFileNumUsed makes sure NextFileNum never returns num or anything
// below it, e.g. for a WAL found on disk at recovery.
func (vs *VersionSet) MarkFileNumUsed(num uint64) {
	for {
		cur := vs.nextFileNum.Load()
		if cur > num || vs.nextFileNum.CompareAndSwap(cur, num+1) {
			return
		}
	}
}

// LastSeq returns the highest sequence number handed out, as last set by
// SetLastSeq or recovered from the manifest.
func (vs *VersionSet) LastSeq() base.SeqNum { return base.SeqNum(vs.lastSeq.Load()) }

// SetLastSeq records the highest sequence number handed out; the next
// LogAndApply persists it. It never moves the counter backwards.
func (vs *VersionSet) SetLastSeq(s base.SeqNum) {
	for {
		cur := vs.lastSeq.Load()
		if uint64(s) <= cur || vs.lastSeq.CompareAndSwap(cur, uint64(s)) {
			return
		}
	}
}

// LogNum returns the number of the oldest WAL that recovery must replay;
// older WALs are obsolete. 0 (a DB that never logged one) names no WAL.
// A nonzero LogNum was recorded only after the engine created that WAL
// and synced its directory entry, and the WAL is removed only after a
// later edit moves LogNum past it: at Open, a missing "%06d.log" for a
// nonzero LogNum is lost data, not a WAL that never existed.
func (vs *VersionSet) LogNum() uint64 { return vs.logNum.Load() }

// DBID returns the DB's identity, which its WALs begin with; 0 for a
// manifest that records none (one written before identities existed, or
// a new DB's before its first Open has logged one).
func (vs *VersionSet) DBID() uint64 { return vs.dbID.Load() }

// FormerDBIDs returns the ids, besides DBID, that the DB's files may
// carry (VersionEdit.FormerDBIDs), sorted; the caller may keep them.
func (vs *VersionSet) FormerDBIDs() []FormerDBID {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	return slices.Clone(vs.formerDBIDs)
}

// ManifestFileNum returns the number of the manifest being appended to.
// Every other MANIFEST-* in the directory is obsolete.
func (vs *VersionSet) ManifestFileNum() uint64 { return vs.manifestNum.Load() }

// RecoveredDroppedBytes returns how many bytes of torn tail Recover dropped
// from the manifest it replayed (0 after Create), for the DB's log line.
// A dropped tail held no committed edit (LogAndApply had not returned for
// it), so tables it named are crash residue like any other unnamed table.
func (vs *VersionSet) RecoveredDroppedBytes() int64 { return vs.droppedBytes }

// CompactPointer returns where the last compaction of level ended (zero
// key if none), so the next one can start after it.
func (vs *VersionSet) CompactPointer(level int) base.InternalKey {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	return vs.compactPointers[level]
}

// SetMaxManifestSize changes the rollover threshold (DefaultMaxManifestSize
// otherwise); 0 rolls over at every edit. Serialized with LogAndApply like
// every writer-side call.
func (vs *VersionSet) SetMaxManifestSize(n int64) { vs.maxManifestSize = n }

// LiveFiles returns the numbers of the tables held by any live Version:
// the tables the DB must keep. A table file on disk that is not in it, and
// whose number is below NextFileNum when the scan started, is garbage.
// Right after Recover returns without error it is exactly the recovered
// Version's tables, and any other .sst in the directory is provably crash
// residue or an obsolete table: Recover fails (ErrCorruption) rather than
// return a manifest that could have lost an edit.
func (vs *VersionSet) LiveFiles() map[uint64]bool {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	live := make(map[uint64]bool, len(vs.fileRefs))
	for num := range vs.fileRefs {
		live[num] = true
	}
	return live
}

// TakeObsolete returns the tables that left the last live Version holding
// them since the previous call, and forgets them: the caller deletes their
// files. This is the obsolete-file hook: a pull rather than a callback, so
// that file deletion never runs inside an Unref called by a reader.
// Tables deleted by edits replayed at Recover never had a live Version
// here; the DB finds them by comparing the directory with LiveFiles.
func (vs *VersionSet) TakeObsolete() []*FileMetadata {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	out := vs.obsolete
	vs.obsolete = nil
	return out
}

// Placement is a table at a level of a Version. A tree-wide filter files
// each table's keys under its level, so it needs to know when a table
// stops being at a level in every Version a reader may hold: a table moved
// down without a rewrite leaves its old level while its file stays live.
type Placement struct {
	Level int
	File  *FileMetadata
}

type placementKey struct {
	level   int
	fileNum uint64
}

// TrackPlacements starts counting the placements of the live Versions, as
// fileRefs counts their tables, so that TakeLeftPlacements can report the
// ones that left; it returns every placement of a live Version, the state
// the caller starts from. Called once, before any concurrent Unref it
// should see; later calls return nil.
func (vs *VersionSet) TrackPlacements() []Placement {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if vs.placementRefs != nil {
		return nil
	}
	vs.placementRefs = make(map[placementKey]int32)
	var out []Placement
	for v := range vs.live {
		for level, files := range v.Levels {
			for _, f := range files {
				k := placementKey{level, f.FileNum}
				if vs.placementRefs[k] == 0 {
					out = append(out, Placement{Level: level, File: f})
				}
				vs.placementRefs[k]++
			}
		}
	}
	return out
}

// TakeLeftPlacements returns the placements that left the last live
// Version holding them since the previous call, and forgets them; like
// TakeObsolete, a pull, so that what the caller does with them (reading a
// table) never runs inside a reader's Unref. A table that became obsolete
// has left its placement by then: a caller that takes the obsolete tables
// first and the left placements after holds every placement of the files
// it is about to delete.
func (vs *VersionSet) TakeLeftPlacements() []Placement {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	out := vs.left
	vs.left = nil
	return out
}

// install makes v current. The set's reference moves from the old current
// Version to v; the old one stays live while readers hold it.
func (vs *VersionSet) install(v *Version) {
	v.vs = vs
	v.Ref()
	vs.mu.Lock()
	vs.live[v] = struct{}{}
	for level, files := range v.Levels {
		for _, f := range files {
			vs.fileRefs[f.FileNum]++
			if vs.placementRefs != nil {
				vs.placementRefs[placementKey{level, f.FileNum}]++
			}
		}
	}
	old := vs.current
	vs.current = v
	vs.mu.Unlock()
	if old != nil {
		old.Unref()
	}
}

// release is called by the last Unref of v. A table that leaves the last
// live Version after Close is not obsolete: the closed set's current
// Version, which the manifest names, may hold it, and nothing is deleted
// on a guess.
func (vs *VersionSet) release(v *Version) {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	delete(vs.live, v)
	for level, files := range v.Levels {
		for _, f := range files {
			if vs.placementRefs != nil {
				k := placementKey{level, f.FileNum}
				vs.placementRefs[k]--
				if vs.placementRefs[k] == 0 {
					delete(vs.placementRefs, k)
					if !vs.closed {
						vs.left = append(vs.left, Placement{Level: level, File: f})
					}
				}
			}
			vs.fileRefs[f.FileNum]--
			if vs.fileRefs[f.FileNum] == 0 {
				delete(vs.fileRefs, f.FileNum)
				if !vs.closed {
					vs.obsolete = append(vs.obsolete, f)
				}
				f.releaseFilter()
			}
		}
	}
}

// Close closes the manifest and drops the set's reference to the current
// Version, so that the filters its tables' metadata keeps are released
// when the last reader still holding it lets go, not when the collector
// finds them. No edit can be applied after Close, and Current returns nil.
func (vs *VersionSet) Close() error {
	vs.mu.Lock()
	if vs.closed {
		vs.mu.Unlock()
		return ErrClosed
	}
	vs.closed = true
	current := vs.current
	vs.current = nil
	vs.mu.Unlock()
	if current != nil {
		current.Unref()
	}
	if vs.manifest == nil {
		return nil
	}
	err := vs.manifest.Close()
	vs.manifest = nil
	return err
}
