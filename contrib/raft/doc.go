// Package raft keeps hashicorp/raft's state in monban: Store is raft's
// LogStore, StableStore and MonotonicLogStore in one DB, and FSM a
// replicated key-value state machine whose snapshots are DB checkpoints.
//
// It lives in its own module (github.com/monbandb/monban/contrib/raft) so
// that the engine's module never depends on raft. It is built and tested
// against hashicorp/raft v1.7.2.
//
// # Basics
//
//	store, err := monbanraft.Open(filepath.Join(dir, "raft"), nil)
//	fsm, err := monbanraft.OpenFSM(filepath.Join(dir, "fsm"), nil)
//	r, err := raft.NewRaft(conf, fsm, store, store, snaps, transport)
//	f := r.Apply(monbanraft.PutCommand(key, value), time.Second)
//	v, err := fsm.Get(key)
//
// # Store invariants
//
//  1. Durability: StoreLogs, DeleteRange, Set and SetUint64 each commit
//     one lsm batch with one fsync of the WAL before they return nil; a
//     crash keeps all of the batch or none of it.
//  2. Contiguity: the log is every index from FirstIndex to LastIndex,
//     both 0 when it is empty. StoreLogs appends only LastIndex+1 onwards
//     (from any index ≥ 1 on an empty log) and DeleteRange removes only a
//     prefix or a suffix, so no write can make a gap; hence IsMonotonic.
//  3. FirstIndex and LastIndex are read from memory: Open finds them with
//     one iterator seek to each end of the log's keys, and every write
//     replaces the pair, together, after its commit, under the write lock.
//     Open's seek starts from the first index recorded under "mfirst",
//     which every write that changes the first index records in its own
//     batch: it is at most the first entry's index while there is one, so
//     the seek lands on it without stepping over the entries a head
//     truncation's range tombstone still covers.
//  4. Errors raft tests by identity keep it: GetLog of an absent index
//     returns raft.ErrLogNotFound unwrapped, Get and GetUint64 of an
//     absent key ErrKeyNotFound, whose text is "not found". A closed
//     Store returns lsm.ErrClosed from every method.
//
// # Keys
//
//	'l' index (8 bytes, big-endian)   one log entry, encoded as below
//	"mfirst"                          where Open looks for the first entry: an index, 8 bytes big-endian
//	's' key                           a StableStore value; SetUint64's is 8 bytes big-endian
//
// Big-endian indexes sort as the numbers do, so the first and last
// entries are the ends of the 'l' range, and a DeleteRange of entries
// [a, b] is one range tombstone ['l' a, 'l' b+1).
//
// # Log entry format
//
// The value of a log key, version 1:
//
//	byte     version, 1
//	uvarint  Term
//	byte     Type (raft.LogType)
//	varint   AppendedAt, seconds since 1970-01-01 UTC (zig-zag)
//	uvarint  AppendedAt, nanoseconds within the second, < 10⁹
//	uvarint  len(Data), then Data
//	uvarint  len(Extensions), then Extensions
//
// and nothing after. Index is the key. AppendedAt keeps its instant, not
// its location (it decodes in UTC); the zero time stays zero. Empty Data
// or Extensions decode as nil. For example Term 2, LogCommand, AppendedAt
// 1970-01-01T00:00:01.5Z, Data "hi", no Extensions:
//
//	01 02 00 02 80 ca b5 ee 01 02 68 69 00
//
// The engine checksums every record and block below this; a value that
// does not decode is an error wrapping lsm.ErrCorruption, never a panic.
//
// # FSM invariants
//
//  1. The state is what the entries up to AppliedIndex made it, and each
//     ApplyBatch commits its commands and the new applied index in one lsm
//     batch: a crash keeps whole batches, a prefix of them. Batches are
//     not synced; raft's log is, and raft replays it. Snapshot syncs, so
//     the state on disk is never behind a snapshot raft keeps, and raft's
//     NoSnapshotRestoreOnStart is safe: a restart keeps the state, with
//     no Restore, and raft replays the entries after its snapshot.
//  2. Entries at or below AppliedIndex change nothing, so a replay of the
//     log over a state that already holds part of it is harmless.
//  3. Exactly one DB directory is live, the one LIVE names; OpenFSM
//     removes every other (a restore staged or superseded, a snapshot not
//     released). Restore switches by renaming a synced LIVE.tmp over
//     LIVE, after the new directory is whole and synced (restore.go).
//
// # Commands
//
// The data of a LogCommand entry the FSM applies:
//
//	byte     1 put, 2 delete
//	uvarint  len(key), then key
//	bytes    a put's value: the rest of the data (a delete has none)
//
// PutCommand and DeleteCommand build them. Anything else earns the entry
// an ErrBadCommand response and changes nothing. Entries of other types
// (configuration, barrier, no-op) advance the applied index only.
//
// # FSM directory
//
//	LOCK             held while an FSM has the directory open
//	LIVE             "data-<n>\n": the live DB's directory, n of six digits or more
//	data-<n>/        a monban DB: 'd' key → value, and "a" → the applied index (8 bytes big-endian)
//	snapshot-<m>/    a checkpoint being streamed to raft; gone at Release
//
// # Snapshot stream
//
// What Persist writes to raft's SnapshotSink and Restore reads back: the
// files of a checkpoint of the DB (lsm.DB.Checkpoint) but its LOCK, names
// sorted:
//
//	8 bytes  magic "monbanS\x01" (the last byte the format's version)
//	per file:
//	  uvarint  len(name), 1 to 255, then name: one path element
//	  uvarint  size, then size bytes
//	uvarint  0, the end of the files
//	4 bytes  CRC-32C (Castagnoli), big-endian, of every byte before it
//
// and nothing after. Restore refuses a stream whose checksum, names or
// end are wrong before anything of it is live.
package raft
