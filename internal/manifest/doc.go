// Package manifest records which tables make up the tree, so that a DB
// finds them again after a restart. It holds three things:
//
//   - FileMetadata, VersionEdit: a table's description, and a change to the
//     tree (tables added and removed, counters advanced), with the byte
//     encoding below;
//   - Version: one immutable state of the tree, reference-counted so that
//     readers keep the tables they use while compactions replace them;
//   - VersionSet: the current Version, the manifest file its edits are
//     logged to (a wal of encoded edits), and the CURRENT file naming it.
//
// It also owns the file naming of a DB directory (MakeFilename,
// ParseFilename), since recovery and obsolete-file deletion both start from
// names.
//
// # Lifetime and concurrency
//
// Create (new DB) or Recover (existing DB) returns a VersionSet; Close
// closes its manifest and drops the set's reference to the current
// Version (Current returns nil afterwards; tables that leave the last
// live Version after Close are not queued as obsolete). LogAndApply and Close must be serialized by the
// caller (the DB holds one lock across installing flush and compaction
// results). Current, Version.Ref/Unref, LiveFiles, TakeObsolete,
// TrackPlacements, TakeLeftPlacements,
// NextFileNum, MarkFileNumUsed, Reserve, LastSeq/SetLastSeq, LogNum and
// ManifestFileNum are safe from any goroutine. A Version is immutable; its
// FileMetadata are shared with other Versions and immutable too, except
// the documented in-memory Compacting flag.
//
// Obsolete files: the set counts, per table number, the live Versions
// holding it. When the last reference to a Version goes (Unref), every
// table no live Version holds any more is queued, and the DB collects the
// queue with TakeObsolete and deletes those files. Manifests are the set's
// own business: a rollover removes the old one, and the first rollover
// after Recover removes strays. Placements (a table at a level) are
// counted the same way once TrackPlacements is called, for a tree-wide
// filter that files keys by level: TakeLeftPlacements returns those no
// live Version holds any more.
//
// # Invariants
//
//  1. CURRENT always names a complete, synced manifest: a new manifest is
//     synced, with its directory entry, before CURRENT is switched to it
//     by renaming a synced CURRENT.tmp, so a crash at any step recovers the
//     old state or the new one, never a mix.
//  2. An edit is durable (appended and synced) before its Version is
//     installed; a reader never sees a state that a crash could undo.
//  3. Every manifest starts with a snapshot edit carrying the format tag:
//     replaying one manifest alone rebuilds the whole state.
//  4. Table, WAL and manifest numbers come from one counter and are never
//     reused; every number recorded is below the recorded NextFileNum.
//  5. Version invariants (L0 newest first; L1+ sorted, disjoint in user
//     keys; each table once) hold for every installed Version: an edit that
//     would break them is rejected with ErrInvalidEdit before it is logged,
//     and one found in a manifest is corruption.
//
// # Caveats
//
// Create makes the DB directory's entry durable by syncing its immediate
// parent only: a directory created several levels deep (MkdirAll of
// missing parents) is not fully crash-safe. Building a Version costs time
// linear in the number of tables (LogAndApply rebuilds the file-number
// index and re-sorts the levels an edit touches), fine for flush and
// compaction rates but not for a per-write path.
//
// # Format
//
// File names: tables "%06d.sst", WALs "%06d.log", manifests
// "MANIFEST-%06d", plus CURRENT, CURRENT.tmp and LOCK. CURRENT holds the
// manifest's name followed by "\n" and nothing else.
//
// A manifest is a wal (wal package: checksummed, block-framed records)
// whose every record is one encoded VersionEdit: a sequence of fields,
// each a uvarint tag followed by its payload ("lp" = uvarint length, then
// that many bytes; keys are encoded internal keys, user key + 8-byte
// trailer):
//
//	1 format        lp "monban-manifest", uvarint version (1) — first edit only
//	2 log number    uvarint
//	3 next file     uvarint
//	4 last seq      uvarint
//	5 compact ptr   uvarint level, lp internal key
//	6 deleted file  uvarint level, uvarint file number
//	7 new file      uvarint level, file number, size, lp smallest, lp largest,
//	                smallest seq, largest seq, entries, deletions (uvarints)
//	8 new table     the fields of 7, then table id uint64 LE (nonzero)
//
// Tag 7 is written for a table whose TableID is 0 (recorded before ids
// existed), tag 8 for every other, so an edit has one encoding.
// Tags 1-4 appear at most once per edit; an unknown tag is corruption. The
// integrity of each edit rests on the wal's per-fragment CRC-32C. The
// complete description and a worked hex example are in docs/format.md,
// "Manifest".
package manifest
