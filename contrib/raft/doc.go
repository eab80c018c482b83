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
//     crash keeps all of the batch or none of it. So a StoreLogs whose
//     entries pass lsm.MaxBatchSize together is refused
//     (lsm.ErrBatchTooLarge), whole.
//  2. Contiguity: the log is every index from FirstIndex to LastIndex,
//     both 0 when it is empty. StoreLogs appends only LastIndex+1 onwards
//     (from any index ≥ 1 on an empty log) and DeleteRange removes only a
//     prefix or a suffix, so no write can make a gap; hence IsMonotonic.
//  3. FirstIndex and LastIndex are read from memory: Open finds them with
//     iterator seeks to the ends of the log's keys, and every write
//     replaces them, together, after its commit, under the write lock.
//     Every write that changes the first index records it under "mfirst"
//     in its own batch. Open's seeks start from it, so that they land on
//     the first entry without stepping over the entries a head
//     truncation's range tombstone still covers; and the first index is
//     mfirst's wherever a run holds entries below it (a head truncation
//     that ends inside a run leaves the run whole). GetLog asks the bounds
//     before the DB for the same reason.
//  4. Errors raft tests by identity keep it: GetLog of an absent index
//     returns raft.ErrLogNotFound unwrapped, Get and GetUint64 of an
//     absent key ErrKeyNotFound, whose text is "not found". A closed
//     Store returns lsm.ErrClosed from every method.
//
// # Keys
//
//	'r' index (8 bytes, big-endian)   a run: the entries of one StoreLogs, index the last one's
//	'l' index (8 bytes, big-endian)   one log entry: the layout before runs, read, never written
//	"mfirst"                          the log's first index, 8 bytes big-endian (see invariant 3)
//	's' key                           a StableStore value; SetUint64's is 8 bytes big-endian
//
// Big-endian indexes sort as the numbers do. StoreLogs writes one 'r'
// key per call, so that a call costs the memtable one insert rather than
// one per entry; more when a call's entries exceed 256 or 24 KiB (a run
// is closed before the entry that would take it past either, and an
// entry larger than 24 KiB is a run alone; log.go says why). A run's key
// is its last index, so that the run holding index i is the first 'r'
// key at or after 'r' i: one forward seek (bounded to the run's own key
// when the Store wrote it since Open and keeps its key in memory), then
// a step over the entries before i in the run, each a length read. The
// last run's key is the last index.
//
// 'l' keys, where a store written before runs has any, hold a prefix of
// the log [first, L] and the runs the rest, [L+1, last]: appends go to
// runs, and a truncation cuts both. No migration rewrites them: the next
// head truncation past L deletes them. This version opens such a store
// and reads it; an older version opening a store with runs would not see
// them, so there is no going back.
//
// DeleteRange of [a, b] writes range tombstones, whatever the length:
//
//   - a prefix (a = first): ['l' first, 'l' min(b, L)+1) if there are 'l'
//     keys, ['r' first, 'r' b+1) if b > L, and mfirst = b+1; the run
//     holding b+1, if it holds b too, is left whole, its entries up to b
//     hidden by mfirst;
//   - a suffix (b = last): ['l' a, 'l'+1) if a ≤ L, and ['r' a, 'r'+1);
//     if a run holds a-1 and a (it has a key ≥ a, so the tombstone takes
//     it), its entries from max(its first, first) to a-1 are written again
//     as a run under 'r' a-1, in the same batch;
//   - all of it: the prefix's tombstones to last, mfirst = last+1.
//
// # Log entry format
//
// An entry's fields, in a run and under a 'l' key alike:
//
//	uvarint  Term
//	byte     Type (raft.LogType)
//	varint   AppendedAt, seconds since 1970-01-01 UTC (zig-zag)
//	uvarint  AppendedAt, nanoseconds within the second, < 10⁹
//	uvarint  len(Data), then Data
//	uvarint  len(Extensions), then Extensions
//
// Index is not among them: the key and the run's count give it.
// AppendedAt keeps its instant, not its location (it decodes in UTC); the
// zero time stays zero. Empty Data or Extensions decode as nil.
//
// The value of a 'l' key, version 1, is the byte 1, then the fields, and
// nothing after. For example Term 2, LogCommand, AppendedAt
// 1970-01-01T00:00:01.5Z, Data "hi", no Extensions:
//
//	01 02 00 02 80 ca b5 ee 01 02 68 69 00
//
// # Run format
//
// The value of a 'r' key, version 2:
//
//	byte     version, 2
//	uvarint  n, the number of entries, 1 ≤ n ≤ the key's index
//	n times:
//	  uvarint  len(fields), then the entry's fields
//
// and nothing after. The entries are indexes key-n+1 to key, in order.
// For example the entry above at index 7 followed by Term 2, LogNoop, the
// zero AppendedAt (-62135596800 seconds), no Data, at index 8, stored by
// one StoreLogs under 'r' 8:
//
//	02 02
//	0c 02 00 02 80 ca b5 ee 01 02 68 69 00
//	0b 02 01 ff db 8f f9 ce 03 00 00 00
//
// The engine checksums every record and block below this; a value that
// does not decode is an error wrapping lsm.ErrCorruption, never a panic.
//
// # FSM invariants
//
//  1. The state is what the entries up to AppliedIndex made it, and each
//     ApplyBatch commits its commands and the new applied index in one lsm
//     batch (or several, each within lsm.MaxBatchSize and carrying the
//     index of its last entry): a crash keeps whole batches, a prefix of
//     them. Batches are
//     not synced; raft's log is, and raft replays it. Snapshot syncs, so
//     the state on disk holds every command of a snapshot of its own that
//     raft keeps (whose index may be past AppliedIndex by barriers and
//     no-ops, which raft never hands the FSM: CatchUp, given the log
//     store, sees they are no commands and restores nothing). One a
//     leader sent is kept by raft before Restore runs, so a
//     crash between leaves the state behind it: CatchUp, called before
//     NewRaft, restores it then. With it, raft's NoSnapshotRestoreOnStart
//     is safe: a restart keeps the state, with no Restore, and raft
//     replays the entries after its snapshot.
//  2. Entries at or below AppliedIndex change nothing, so a replay of the
//     log over a state that already holds part of it is harmless.
//  3. Exactly one DB directory is live, the one LIVE names; OpenFSM
//     removes every other (a restore staged or superseded, a snapshot not
//     released), and nothing of a name it does not give. Restore switches by renaming a synced LIVE.tmp over
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
// an ErrBadCommand response and changes nothing, as does a command the
// state cannot hold: a key over lsm.MaxKeySize−1 bytes (the state prefixes
// each key with a byte) or a value over lsm.MaxValueSize. The entries
// applied with it in one batch apply all the same. A command reaches the
// FSM through the log, whose entries hold at most MaxLogData bytes of
// Data: StoreLogs refuses a larger one, and raft steps its leader down. Entries of other types
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
