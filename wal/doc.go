// Package wal is monban's write-ahead log: an append-only file of opaque
// records, each framed in checksummed fragments, that the engine replays
// after a crash. The same framing carries the manifest (the log of version
// edits), so nothing here knows what a record means.
//
// # Lifetime and concurrency
//
// A Writer owns a vfs.File until Close: a freshly created one, or, for a
// recyclable log (NewRecyclableWriter), an obsolete log's file reused,
// which it overwrites from offset 0 (invariant 9). Append hands each
// record to the file in one Write call (so it survives a process crash),
// or, if the file is a vfs.Mapper (the OS file system on Linux, MemFS),
// stores it into a 256 KiB window mapped on the file, no system call, for
// the same promise: the window is the kernel's page cache (a record of a
// page or more is written into the window's range with pwrite(2) instead,
// which costs less than its page faults, and so is every record after a
// Sync until the next window, whose writeback left its pages to fault
// again). The windows are
// mapped one at a time as the log reaches them, each reserving its disk
// space first; if the first Map fails the Writer writes instead for the
// file's life. Sync makes everything appended so far survive a machine
// crash; Seal, for a recyclable log, appends a SEAL and syncs, after which
// nothing can be appended; Close does not sync, and cuts a mapped file to
// its last record. A Writer is not safe for concurrent use: the engine's
// commit path serializes Appends and batches concurrent writers into one
// record. After any Write, Map or Sync error the Writer fails every later
// call.
//
// A BufferedWriter writes the same log with fewer system calls, for a
// weaker promise, and only where its user asks for it: Append frames the
// record into memory and returns, and a goroutine of the BufferedWriter
// (the flusher) writes whatever has accumulated in one Write while Appends
// fill a second buffer, so a process crash can lose the last records
// acknowledged (invariant 7). Flush hands every record appended before it
// to the file, Sync also makes them durable, Seal writes a SEAL after them
// and syncs, and Close flushes, stops the flusher and closes the file
// without syncing. Append waits only when its record does not fit in the
// 2 MiB buffer that fills behind the Write in progress. Its methods are
// safe for concurrent use: the engine may Flush, Sync or ask the Size from
// another goroutine while its commit leader appends. Errors are sticky as
// for Writer, and Close reports them.
//
// A Reader reads one log front to back from an io.Reader positioned at its
// start: NewReader and NewSyncedReader a legacy log, NewRecyclableReader,
// told the log's number, a recyclable or a legacy one. The slice Next
// returns is valid until the next call to Next.
//
// # Invariants
//
//  1. No fragment crosses a block boundary: every block of a well-formed log
//     begins with a fragment header. A block's last 1-6 bytes, too few for a
//     header, are zeros (the trailer). MIDDLE and LAST fragments start only
//     at a block's first byte; FIRST and MIDDLE fragments end only at its
//     last. The reader treats any other placement as damage.
//  2. A fragment's checksum covers its length, type and payload, seeded with
//     its own file offset, and in a recyclable log with the log's number
//     too: it verifies only where it was written, and only as its log's.
//  3. Nothing read from disk is trusted before its checksum verifies. A
//     fragment's length is bounded by its block, and a record grows only by
//     verified payloads, so memory is bounded by the bytes actually present.
//  4. The first damage in a log (a fragment cut short, a bad type, length or
//     checksum, zeros, a MIDDLE or LAST without FIRST, a FIRST without its
//     LAST, a non-zero trailer, a fragment of the other kind of log) is a
//     torn tail if and only if no intact fragment (one that verifies as
//     this log's, invariants 2 and 9) starts after it: neither at any byte
//     offset in the rest of its block nor at the start of any later block.
//     A torn tail ends the log with io.EOF and DroppedBytes counts the
//     bytes after the last record returned, up to the last non-zero one:
//     zeros ending the file hold no record it could return (a mapped Writer
//     reserved them, or a file system kept a length without its data).
//     EndsCleanly says whether the log ends at its SEAL, at its last record
//     or in zeros to a window boundary, the only ends a log followed by a
//     newer one may have. Damage with an intact fragment after it is
//     corruption: a *CorruptionError naming the log and the offset,
//     wrapping ErrCorruption. Every record before the damage is returned
//     either way.
//  5. Append returns the offset of the record's first fragment, and Reader
//     reports the same offset (Offset) when it returns that record.
//  6. A Reader made by NewSyncedReader, for a log whose every Append was
//     synced before the next (the manifest), accepts less as a torn tail:
//     the first damage must be the end of the file cutting short a header,
//     a fragment (one whose bytes do not verify at the length present), or
//     a record between its fragments; or every byte from the damage to the
//     end of the file must be zero. Anything else, in particular a whole
//     fragment failing its checksum or framing as the log's last bytes, is
//     corruption. The cost is a false alarm after a crash on a file system
//     that extended the file and persisted the unsynced final Append's first
//     pages but not its later ones (a whole fragment then ends in zeros).
//  7. A BufferedWriter writes, for the same records, the bytes a Writer
//     writes, in order, in Writes that each hold whole Appends. The file is
//     therefore always that log cut short at most inside the Write in
//     progress, and after a process crash a Reader returns a prefix of the
//     records appended: all those appended before the last Flush or Sync
//     that returned nil, perhaps some later ones in order, then at most a
//     torn tail (invariant 4), never corruption. After a machine crash it
//     is the same with Sync alone, as for a Writer. Offsets are those of a
//     Writer (invariant 5).
//  8. A Writer on a vfs.Mapper stores, at the same offsets, exactly the
//     bytes a Writer that writes would write; the file is that log followed
//     by zeros to the end of the current window (or by what remains of an
//     older log, in a reused file) until Close cuts them. A crash (or an
//     unsynced Close followed by a machine crash) may leave up to one
//     window of zeros after the last record: a torn tail with nothing
//     dropped (invariant 4), never corruption. A kill -9 during a
//     store, though, can leave part of a record before those zeros (a
//     payload whose header is not stored yet), which NewReader takes for a
//     torn tail and NewSyncedReader for corruption: a log read by the
//     synced rule is written with Write (the manifest hides the Mapper).
//  9. A recyclable log may be written over a file that holds an older
//     recyclable log, provided no log number is ever given twice. Whatever
//     the crash point, a Reader told the new log's number returns a prefix
//     of the new log's records and then a torn tail: the older log's
//     fragments never verify as the new log's (invariant 2), neither as
//     records nor as intact data past the new log's end. A SEAL, the last
//     fragment of a sealed log, ends the log: the Reader stops at it
//     without looking further, and the log ends cleanly (invariant 4)
//     whatever follows. A legacy log must not be reused: its fragments,
//     seeded with offsets alone, would verify as the new log's where the
//     new one has not overwritten them. A Reader told a number reads a
//     legacy log too: the first fragment that verifies fixes the log's
//     kind, and a fragment of the other kind after it is damage.
//
// Invariant 4 is the line between "a crash" and "a disk that lost data".
// A process crash leaves a prefix of the Writes; a machine crash leaves the
// synced prefix and an unsynced tail that the file system may have zeroed
// or cut: in both, nothing intact follows the damage. Bit rot in the
// middle of a log has intact records after it and is reported, never
// silently skipped. The rule's known false alarm: after a machine crash,
// if the file system persisted a later page of the unsynced tail but not an
// earlier one (out-of-order write-back), the intact later page makes the
// reader report corruption. It never mistakes corruption for a clean end
// when intact data follows, and CorruptionError.Offset lets the engine
// compare the damage with what it knows was synced.
//
// # Format
//
// docs/format.md, "Write-ahead log", is the reference. A log is a sequence
// of 32 KiB blocks (the last may be partial). Each block holds fragments
// and perhaps a trailer:
//
//	block    := fragment* trailer?
//	fragment := checksum uint32 LE   CRC-32C (Castagnoli), unmasked, of offset (8 bytes LE,
//	                                 not stored) ‖ [recyclable: log number (8 bytes LE, not
//	                                 stored)] ‖ length ‖ type ‖ payload
//	            length   uint16 LE   payload bytes; header + payload never cross the block
//	            type     uint8       legacy: 1 FULL, 2 FIRST, 3 MIDDLE, 4 LAST;
//	                                 recyclable: 5 FULL, 6 FIRST, 7 MIDDLE, 8 LAST, 9 SEAL;
//	                                 (0 never written)
//	            payload  [length]byte
//	trailer  := 1-6 zero bytes, where a 7-byte header would not fit
//
// A log's fragments are all of one kind, legacy or recyclable. A record is
// one FULL fragment, or FIRST, MIDDLE*, LAST; a recyclable log may end with
// a SEAL, which has no payload and is no record. A fragment starts
// wherever 7 bytes are left in the block, so a non-empty record may begin
// with an empty FIRST. An Append writes its padding (a trailer, if the
// previous record left fewer than 7 bytes) and all its fragments in one
// Write (a BufferedWriter's Write holds several Appends), or stores the
// same bytes into the file's mapping. Two records, "hi" at offset 0 and
// "wal!" at offset 9:
//
//	00: d2 46 c4 6d  02 00  01  68 69        FULL "hi"
//	09: e0 d1 61 15  04 00  01  77 61 6c 21  FULL "wal!"
//
// where 0x6dc446d2 is the CRC-32C of 00 00 00 00 00 00 00 00 02 00 01 68 69.
// docs/format.md also works through a recyclable log and its SEAL.
package wal
