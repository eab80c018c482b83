package manifest

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/monbandb/monban/internal/base"
)

// Tags of the fields of an encoded VersionEdit (docs/format.md, "Manifest").
// They are on disk: never renumber them. A field whose meaning changes gets
// a new tag, and an unknown tag is corruption, because a manifest that
// cannot be fully understood cannot say which tables are live.
const (
	tagFormat         = 1 // magic string and format version; first edit of every manifest
	tagLogNum         = 2
	tagNextFileNum    = 3
	tagLastSeq        = 4
	tagCompactPointer = 5
	tagDeletedFile    = 6
	// tagNewFile is a table recorded without an id (TableID 0), as every
	// table was before ids existed; tagNewTable is the same fields followed
	// by the id. Encode picks tag 7 exactly when the id is 0, so an edit
	// keeps one encoding and old tables are carried forward as they were.
	tagNewFile  = 7
	tagNewTable = 8
	// tagDBID is the DB's random identity, which every WAL it writes
	// begins with: a WAL of another DB under a live WAL's name is refused,
	// not replayed as this DB's. Recorded in each manifest's snapshot, and
	// by the first Open of a DB whose manifest has none.
	tagDBID = 9
	// tagFormerDBID is an id whose files this DB holds though they are not
	// of its own id (a checkpoint's tables carry the id of the DB it was
	// taken from), with the last sequence number the two DBs share. One
	// record per id; each manifest's snapshot repeats them.
	tagFormerDBID = 10
	maxTag        = tagFormerDBID
)

// formatMagic and formatVersion open every manifest: the first edit of a
// manifest carries them (tagFormat), so a file that is not a monban manifest,
// or one written by a newer format, is rejected before anything is applied.
const (
	formatMagic   = "monban-manifest"
	formatVersion = 1
)

// DeletedFile names a table removed from a level.
type DeletedFile struct {
	Level   int
	FileNum uint64
}

// NewFile is a table added to a level.
type NewFile struct {
	Level int
	Meta  *FileMetadata
}

// CompactPointer records where the last compaction of a level ended, so the
// next one starts after it and compaction work sweeps the key space evenly.
type CompactPointer struct {
	Level int
	Key   base.InternalKey
}

// VersionEdit is the difference between two Versions plus the counters the
// DB must recover. A manifest is a sequence of encoded VersionEdits; the
// first one of each manifest is a snapshot (the whole Version as Added
// files) carrying the format tag.
//
// Zero-valued LogNum, NextFileNum and LastSeq mean "unchanged" and are not
// encoded: file numbers start at 1 and sequence number 0 is never assigned.
type VersionEdit struct {
	// FormatVersion is set (to formatVersion) only in the first edit of a
	// manifest; Decode checks the magic and the version.
	FormatVersion uint64
	// LogNum: WALs numbered below it are fully reflected in tables and are
	// obsolete; recovery replays the WALs numbered LogNum and above.
	LogNum uint64
	// NextFileNum is above every file number allocated so far.
	NextFileNum uint64
	// LastSeq is the highest sequence number the recorded tables contain or
	// the DB has handed out.
	LastSeq base.SeqNum
	// CompactPointers update the per-level compaction cursors.
	CompactPointers []CompactPointer
	// Deleted is the set of tables removed, by level and number.
	Deleted map[DeletedFile]bool
	// Added are the tables added. Deletions apply before additions, so an
	// edit may move a table by deleting and re-adding its number.
	Added []NewFile
	// DBID is the DB's identity, 0 for "unchanged". Once a manifest has
	// one it never changes: an edit with another is corruption.
	DBID uint64
	// FormerDBIDs are ids to add to those the DB's files may carry besides
	// DBID (a checkpoint's source's): kept from then on, sorted by id,
	// each once, nonzero.
	FormerDBIDs []FormerDBID
}

// FormerDBID is another DB's id that some of this DB's files carry: the
// DB it was a checkpoint of. The two share the entries numbered up to
// Shared (the checkpoint's sequence number); past it each numbers its own
// writes, so a table of that id holding a later entry is the other DB's.
type FormerDBID struct {
	ID     uint64
	Shared base.SeqNum
}

// Encode appends the encoding of e to dst. Deleted files are written in
// (level, number) order so that an edit has a single encoding.
func (e *VersionEdit) Encode(dst []byte) []byte {
	if e.FormatVersion != 0 {
		dst = binary.AppendUvarint(dst, tagFormat)
		dst = appendBytes(dst, []byte(formatMagic))
		dst = binary.AppendUvarint(dst, e.FormatVersion)
	}
	if e.LogNum != 0 {
		dst = binary.AppendUvarint(dst, tagLogNum)
		dst = binary.AppendUvarint(dst, e.LogNum)
	}
	if e.NextFileNum != 0 {
		dst = binary.AppendUvarint(dst, tagNextFileNum)
		dst = binary.AppendUvarint(dst, e.NextFileNum)
	}
	if e.LastSeq != 0 {
		dst = binary.AppendUvarint(dst, tagLastSeq)
		dst = binary.AppendUvarint(dst, uint64(e.LastSeq))
	}
	for _, cp := range e.CompactPointers {
		dst = binary.AppendUvarint(dst, tagCompactPointer)
		dst = binary.AppendUvarint(dst, uint64(cp.Level))
		dst = appendKey(dst, cp.Key)
	}
	for _, d := range e.sortedDeleted() {
		dst = binary.AppendUvarint(dst, tagDeletedFile)
		dst = binary.AppendUvarint(dst, uint64(d.Level))
		dst = binary.AppendUvarint(dst, d.FileNum)
	}
	for _, nf := range e.Added {
		m := nf.Meta
		tag := uint64(tagNewTable)
		if m.TableID == 0 {
			tag = tagNewFile
		}
		dst = binary.AppendUvarint(dst, tag)
		dst = binary.AppendUvarint(dst, uint64(nf.Level))
		dst = binary.AppendUvarint(dst, m.FileNum)
		dst = binary.AppendUvarint(dst, m.Size)
		dst = appendKey(dst, m.Smallest)
		dst = appendKey(dst, m.Largest)
		dst = binary.AppendUvarint(dst, uint64(m.SmallestSeq))
		dst = binary.AppendUvarint(dst, uint64(m.LargestSeq))
		dst = binary.AppendUvarint(dst, m.NumEntries)
		dst = binary.AppendUvarint(dst, m.NumDeletions)
		if m.TableID != 0 {
			// Fixed width: the id is random, so a varint would take 9 or 10
			// bytes for nearly every table.
			dst = binary.LittleEndian.AppendUint64(dst, m.TableID)
		}
	}
	if e.DBID != 0 {
		dst = binary.AppendUvarint(dst, tagDBID)
		dst = binary.LittleEndian.AppendUint64(dst, e.DBID) // random, as a table id
	}
	for _, f := range e.FormerDBIDs {
		dst = binary.AppendUvarint(dst, tagFormerDBID)
		dst = binary.LittleEndian.AppendUint64(dst, f.ID)
		dst = binary.AppendUvarint(dst, uint64(f.Shared))
	}
	return dst
}

func (e *VersionEdit) sortedDeleted() []DeletedFile {
	ds := make([]DeletedFile, 0, len(e.Deleted))
	for d, ok := range e.Deleted {
		if ok {
			ds = append(ds, d)
		}
	}
	slices.SortFunc(ds, func(a, b DeletedFile) int {
		return cmp.Or(cmp.Compare(a.Level, b.Level), cmp.Compare(a.FileNum, b.FileNum))
	})
	return ds
}

// appendBytes writes a length-prefixed byte string: uvarint length, bytes.
func appendBytes(dst, b []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...)
}

// appendKey writes an internal key as a length-prefixed byte string of its
// encoding (user key, 8-byte trailer).
func appendKey(dst []byte, k base.InternalKey) []byte {
	dst = binary.AppendUvarint(dst, uint64(k.Size()))
	return k.Append(dst)
}
