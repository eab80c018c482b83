// Package vfs is the file-system layer under every package of monban that
// touches disk. Three implementations share the FS interface: the operating
// system's (Default), an in-memory one that tracks durability (NewMem), and
// a fault-injecting wrapper (NewFault) that counts operations, fails chosen
// ones, and simulates a machine crash by discarding everything not yet
// synced.
//
// Invariants:
//
//  1. Write either returns an error or has handed all its bytes to the
//     file system: a process crash after Write returns loses nothing. The
//     same holds for bytes stored into a Mapper's Window once Stored covers
//     them: on the OS the window is the kernel's page cache (a MAP_SHARED
//     mapping), so a store is handed over the moment it completes.
//  2. Only File.Sync makes a file's contents survive a machine crash, and
//     only FS.SyncDir makes a created, renamed or removed name survive one —
//     a directory made by MkdirAll included: it is a name in its parent.
//  3. Lock excludes every other holder of the same name, in this process or
//     another, until the returned io.Closer is closed. An existing lock file
//     needs only read permission: a process that may not write it or its
//     directory (a DB of another user opened read-only, a read-only mount)
//     locks it all the same, though it cannot create a missing one.
//  4. Mapper.Map reserves the disk space of its window before mapping it,
//     so a store into a window never fails: a store the file system cannot
//     back (a hole on a full disk) would be a SIGBUS, killing the process.
//     Until Truncate cuts them, the zeros past the last byte stored are
//     part of the file, and a crash may leave them: up to one window.
//
// # Concurrency and lifetime
//
// Every FS is safe for concurrent use. A File is used by one goroutine at a
// time, except ReadAt, which many may call at once (readers of an SSTable
// share one File). Files work on the inode they opened: renaming or
// removing the name does not disturb them, as on POSIX. Closing a File or a
// lock twice returns an error wrapping fs.ErrClosed.
//
// # The three file systems
//
// Default maps each method onto package os; Lock is flock(LOCK_EX|LOCK_NB),
// which conflicts between two opens of the file even within one process. It
// opens the file read-write, creating it, and where permissions refuse that
// (EACCES, EPERM, EROFS) read-only: flock does not ask for write access.
// Except on NFS, where Linux emulates flock with fcntl locks, and an
// exclusive one needs a descriptor open for writing: there a process that
// may not write LOCK cannot take it.
// On Linux its files from Create are Mappers: Map is fallocate(2), then
// mmap(2) of the range, MAP_SHARED. It is a Reuser: Reuse opens the old
// file read-write, without truncating it, then renames it, and the new
// file overwrites blocks already written, whose fsync costs less. It is a
// Preallocator: Preallocate is fallocate(FALLOC_FL_KEEP_SIZE), space reserved
// in one request, so windows mapped over it later add no extents.
//
// MemFS keeps, beside what reads see, what is durable: each file's bytes as
// of its last Sync and each directory's entries as of its last SyncDir.
// CrashClone returns a new MemFS holding only that — the strictest outcome
// POSIX allows after a power cut, so a DB that recovers from it recovers
// from a kinder file system too. CrashCloneKeeping also keeps the unsynced
// directory changes (names created, removed, renamed) a function picks,
// in any order within a directory, a rename whole: the outcomes between,
// where a later change may survive an earlier one, which the strict clone
// never shows. Its files from Create are Mappers whose
// windows are buffers of their own, copied into the file by Stored: a
// window aliasing the file's storage would race with every ReadAt. It is a
// Reuser: a reused file shows what it wrote over its old contents, and a
// crash shows what it synced over the old durable contents — none of an
// unsynced overwrite.
//
// FaultFS wraps any FS. The errors it injects wrap ErrInjected (not its
// refusal to Crash a FaultFS over no MemFS, a misuse). It counts attempted
// operations per kind (Op); Inject adds a Fault: the nth operation of a
// kind on matching names from now (once, then the disk is healthy) or each
// with a seeded probability, its error wrapping a chosen errno as well
// (syscall.ENOSPC for a full disk, syscall.EIO), optionally killing the
// disk; FailNth fails the nth operation of a kind from now, once;
// FailFromNth also fails everything after it (the disk died); Injected
// counts the operations faults failed;
// SetTornWrites makes a failed Write hand the first half of its bytes to
// the file first; Heal brings a dead disk back; SetTrace reports each
// operation with its number, for the failure message of a crash test. Over
// a MemFS, Crash ends the "machine": every later call through the FaultFS
// or its files fails, and it returns the MemFS a reboot would find
// (CrashKeeping: keeping some unsynced directory changes). Crash
// needs the MemFS only for that clone; failure injection works over the OS
// too. A failed operation never reaches the inner FS (a torn Write reaches
// it with half its bytes). It passes Reuse on as OpReuse where the inner
// FS is a Reuser, and elsewhere fails it with errors.ErrUnsupported, for
// the caller to fall back to Create.
//
// # A crash test
//
// The reliability suite runs a workload once to count its operations, then
// once per operation with a fault there, and checks what recovery finds:
//
//	count := vfs.NewFault(setup())
//	run(count)                            // the workload: flush, compaction…
//	n := count.Count(vfs.OpAny)
//	for i := int64(1); i <= n+1; i++ {    // n+1: dies just after the end
//		ff := vfs.NewFault(setup())        // same starting MemFS each time
//		ff.SetTornWrites(true)
//		ff.FailFromNth(vfs.OpAny, i)      // the machine dies at operation i
//		run(ff)                           // fails somewhere; errors expected
//		after, err := ff.Crash()          // what survives the power cut
//		if err != nil {
//			t.Fatal(err)
//		}
//		check(t, i, after)                // reopen; acknowledged data is there
//	}
//
// ExampleFaultFS is the same loop over an atomic file replacement.
package vfs
