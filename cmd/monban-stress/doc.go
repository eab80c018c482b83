// Command monban-stress is RocksDB's db_stress and db_crashtest in one
// tool: it kills a process that is writing to a DB, over and over, and
// after every kill reopens the DB and checks that every acknowledged write
// is there and nothing else is, and that lsm.Repair of a copy of the
// killed DB holds the same.
//
//	monban-stress                  20 cycles, random option sets, temporary directory
//	monban-stress -repair=false    no Repair check: the kill cycles alone
//	monban-stress -duration 1h     the long run
//	monban-stress -seed N -v       replay a run's choices, a line per cycle
//
// # A cycle
//
//  1. The parent starts a child: this binary again, with the hidden flag
//     -child, on the same directory and the cycle's option set.
//  2. The child opens the DB, reads it whole and checks its digest against
//     the state the parent verified last, then runs a workload from several
//     goroutines: puts, overwrites, deletes of present and absent keys,
//     DeleteRange over up to 16 consecutive keys, one in eight over up to
//     an eighth of the key space (logged, and checked, as
//     a batch of their deletes), batches (one write in eight made with lsm.Sync, so Sync and NoSync
//     writers share commit groups), Gets and bounded iterators over up to
//     four keys checked against its model under those keys' locks, longer
//     bounded iterators in both directions, snapshots read twice while
//     writes go on, and Flush, CompactRange and Compact. A snapshot
//     deleter (snapdel.go) takes a snapshot of a range, deletes most of it
//     with DeleteRange (half the time the keys of a table below L0), puts
//     a few keys back, runs Flush and CompactRange over it, so that
//     delete-only compactions meet tables the tombstone covers, and checks
//     the snapshot still reads what the model held when it was taken, and
//     the range now what the model holds; its writes are logged as a
//     writer's. Half the random option sets build range filters
//     (lsm.Options.RangeFilter), which every iterator with both bounds
//     asks. A checkpointer (checkpoint.go), about as often as Compact and
//     one at a time, takes a Checkpoint into a new directory
//     ckpt/<cycle>-<n> beside db/ while the writers go on.
//  3. The parent sends SIGKILL after a random time (-kill-after), or just
//     after the child announces a Flush or compaction, or, one cycle in
//     ten, a Checkpoint, or, one cycle in ten, within 50 ms of the start,
//     which may land in Open's recovery.
//  4. The parent opens the DB itself (an Open error after a kill is a bug),
//     reads every key by scan, by Get and by iterators bounded to
//     windows of three keys, verifies them against the ack log, closes,
//     and the verified state is the next cycle's base. Then it opens and
//     reads each of the cycle's checkpoints the same way, verifies it
//     ("Verification") and removes it. With -repair (the default) it
//     first copies the directory as the kill left it to repair/killed/.
//  5. With -repair, it copies repair/killed/ to repair/repaired/, runs
//     lsm.Repair there, opens the result and reads it the same way: it must
//     hold exactly what step 4 read ("Repair after the kill").
//
// The first failure of steps 1 to 4 stops the run with exit status 1 and
// keeps the directory: db/ as the failing cycle left it, ack.log, its
// history, and in ckpt/ the failing checkpoint and those not yet checked.
//
// # Durability model
//
// A write acknowledged without error survives a process crash, with or
// without Options.Sync (lsm's package doc); SIGKILL is a process crash, so
// every acknowledged write must survive every cycle, whatever the option
// set. An op in flight at the kill may or may not have applied, a batch as
// a whole.
//
// # The ack log
//
// The child appends one line per event to ack.log with one write(2) each,
// unbuffered and not fsynced: the kernel outlives the killed process, and
// its page cache is what the parent reads, so nothing write(2) accepted is
// lost, while an fsync per record would slow every op by a disk flush. The
// lines are
//
//	S <writer> <seq> <entry>...   before the DB call; entry is p<key>:<size> or d<key>
//	D <writer> <seq>              after the call returned nil
//	C <id> <name>                 before Checkpoint into ckpt/<name>
//	K <id>                        after it returned nil
//
// for example a batch of a put and a delete, acknowledged while the
// cycle's third checkpoint was taken:
//
//	S 12 40 p17:96 d230
//	C 3 7-3
//	D 12 40
//	K 3
//
// (writer, seq) names the op. Writer ids are unique across cycles, and the
// value a put writes is "<key>.<writer>.<seq>." and then a filler that
// depends on all of them and the size (value in acklog.go), so any value
// read back names exactly the write that made it, or none. A checkpoint's
// id counts the cycle's checkpoints from 1, and its name is the cycle and
// the id. A Checkpoint that fails ends the child, as every DB error does,
// with no "K": the cycle fails. A last line without its newline was cut
// by the kill and is ignored.
//
// # Invariants
//
//  1. "S" is in the log before the DB sees the op, and "D" only after the
//     DB acknowledged it: the log never claims less was started or more
//     acknowledged than was.
//  2. A key's lock is held from its op's "S" to its "D" (batches take their
//     keys' locks in key order), so per key the log's order is the commit
//     order, and at most one op per key is in flight at the kill.
//  3. Keys in the last eighth of the checked range are only ever deleted:
//     any value found there is unexpected.
//
// # Verification
//
// For every key, the parent replays the log over the base: the last "D" op
// on the key gives the expected state, and an op with an "S" and no "D"
// may replace it. The key is
//
//   - lost if it shows an earlier state than the acknowledged one: absent
//     where a put was acknowledged, or a value an earlier write put there
//     (a deleted or overwritten value back);
//   - unexpected if it shows a value no write put under it (never written,
//     another key's, cut short, garbled), if Get and a scan disagree, or if
//     an in-flight batch shows on some of its keys and not on others.
//
// A checkpoint holds the DB at one instant between its "C" and "K" lines
// (lsm's Checkpoint: every write acknowledged before the call, and no
// write started after it returned). The parent checks it as it checks the
// DB after a kill, with the window between the two lines in place of the
// instant of the kill: an op whose "D" comes before the "C" line is
// acknowledged, one whose "S" comes after the "K" line does not count,
// and the ops on a key in between, "S" before the "K" line and "D" after
// the "C" line or none, are in flight: the key shows the acknowledged
// state or the one an op in flight left, in which case the ops on the key
// before that one are in the checkpoint too, and an op in flight shows on
// all of its keys or on none. The checkpoint's keys are lost and
// unexpected as the DB's are. A checkpoint the kill cut short (no "K") is
// opened writable, as a user would reopen it: with no CURRENT written,
// Open must refuse it, or, where it held nothing but its LOCK file (or
// was not made yet), may make a new, empty DB, and one that opens
// otherwise is unexpected; with CURRENT written, it must hold a complete
// checkpoint, checked as one whose "K" came at the kill. A done
// checkpoint is checked after the parent's Open of the DB, so that the
// kill and that Open have had their chance to harm it.
//
// The summary counts lost and unexpected keys over all cycles, the DB's
// and its checkpoints' (its second line counts the checkpoints verified
// and those cut short that Open refused, made empty or found complete);
// the exit status is 0 only when lost and unexpected are 0 and no repair
// check differed. verify_test.go feeds the verifier fabricated histories
// to show it fails each case but a Get and a scan that disagree, which it
// does not make; checkpoint_test.go gives the checkpoint check real
// directories, one of them taken too late.
//
// # Repair after the kill
//
// Open and Repair read the same files, so whatever Open recovered (and
// the verifier vouched for), Repair of a copy must recover too, key for
// key, compared over a full scan of each. A key of the repaired copy is
//
//   - resurrected if Open finds it absent: typically a deleted key brought
//     back from the inputs of a compaction the kill cut short, obsolete
//     but not yet deleted (Open deletes them, which is why the copy is
//     made first);
//   - lost if Open finds it and the copy does not;
//   - differing if both hold it with different values, or the copy's Get
//     and scan disagree.
//
// A difference does not stop the run, whose next cycle goes on from the
// original: the cycle's line lists the keys and Repair's report, the first
// differing cycle's repair/killed/ is kept as repair-cycle-N/ (Repair of
// a copy of it shows the difference again), and the summary's third line
// counts resurrected, lost and differing keys over all cycles checked. A
// first cycle killed before its child's Open made the DB's directory has
// nothing to repair, and counts as such, not as checked. A Repair, Open
// or read of the copy that fails is a failure of the cycle.
package main
