package lsm

import (
	"errors"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/sstable"
)

var (
	// ErrNotFound is returned by Get when the key has no value: it was never
	// written, or its newest visible version is a deletion.
	ErrNotFound = errors.New("monban: not found")

	// ErrClosed is returned by every operation on a DB after Close, and by
	// operations on a closed Snapshot or Iter.
	ErrClosed = errors.New("monban: closed")

	// ErrCorruption is wrapped by every error that reports bytes on disk
	// which do not decode (a bad checksum, an impossible length); the message
	// names the file and offset.
	ErrCorruption = base.ErrCorruption

	// ErrReadOnly is returned by every write (Put, Delete, Write, Flush,
	// Compact, CompactRange) of a DB opened with Options.ReadOnly.
	ErrReadOnly = errors.New("monban: read-only")

	// ErrLocked is returned by Open when another DB — in this process or
	// another — has the directory open.
	ErrLocked = errors.New("monban: directory is in use by another DB")

	// ErrNotDB is returned by Open and Repair for a directory that holds
	// files of monban's names (CURRENT, MANIFEST-*, *.log, *.sst) none of
	// which is in monban's format: another program's DB, which Open and
	// Repair leave as it is. Repair also returns it for a directory with no
	// DB file at all.
	ErrNotDB = errors.New("monban: not a monban DB")

	// ErrInvalidKey is returned for a key longer than MaxKeySize; nothing of
	// the write is applied.
	ErrInvalidKey = errors.New("monban: invalid key")

	// ErrInvalidValue is returned for a value longer than MaxValueSize;
	// nothing of the write is applied.
	ErrInvalidValue = errors.New("monban: invalid value")

	// ErrBatchTooLarge is returned by Write for a batch whose encoding
	// would pass MaxBatchSize; nothing of the batch is applied.
	ErrBatchTooLarge = errors.New("monban: batch too large")

	// ErrInvalidRange is returned for a key range that names no key: a
	// CompactRange whose start is above its end, a DeleteRange whose start
	// is not below its (exclusive) end. It is a mistake more often than an
	// intent.
	ErrInvalidRange = errors.New("monban: invalid range")
)

// MaxKeySize bounds a key's length (8 MiB): what an SSTable can hold.
// Empty keys are allowed: the empty key sorts before every other key.
const MaxKeySize = sstable.MaxKeySize

// MaxValueSize bounds a value's length (32 MiB): what an SSTable can hold.
const MaxValueSize = sstable.MaxValueSize

// MaxBatchSize bounds a Batch's encoding (2 GiB less a byte): its entries,
// each its kind, key and value with their lengths, and a 12-byte header.
// A batch is applied whole, so it lives in memory several times over while
// it commits — the caller's copy, the memtable's, the WAL's pages — and
// again as Open replays it: the bound keeps that within a machine's
// memory, and the entry count within the header's 32 bits.
const MaxBatchSize = 1<<31 - 1
