package lsm

import (
	"time"

	"github.com/monbandb/monban/compaction"
)

// EventListener is told what the DB does in the background: flushes,
// compactions, write stalls, files created and deleted, a background error.
// Every field may be nil. The callbacks run on the goroutine doing the
// work, some with the DB's internal locks held, so they must return quickly
// and must not call the DB — except Stats, which takes no lock. FlushBegin
// and FlushEnd, CompactionBegin and CompactionEnd run without the DB's
// lock: one that blocks holds up that flush or compaction and nothing else
// (kvbench teach holds a flush so to keep memtables immutable).
type EventListener struct {
	FlushBegin, FlushEnd           func(FlushInfo)
	CompactionBegin, CompactionEnd func(CompactionInfo)
	// WriteStallBegin is called when a commit starts to wait for flushes or
	// L0 compactions to catch up, WriteStallEnd when it goes on.
	WriteStallBegin func(WriteStallInfo)
	WriteStallEnd   func()
	// TableCreated is called for every table a flush, compaction or
	// recovery wrote, once it is synced; TableDeleted once an obsolete one
	// is removed, on the DB's deleter goroutine or, for leftovers of a
	// crash, in Open: never inside a read.
	TableCreated, TableDeleted func(TableFileInfo)
	// WALCreated is called for every WAL started, WALDeleted once an
	// obsolete one is removed. An obsolete WAL whose file a later WAL
	// reuses is not deleted: the WALCreated of that WAL names it
	// (WALFileInfo.RecycledFrom).
	WALCreated, WALDeleted func(WALFileInfo)
	// BackgroundError is called once, with the error that made the DB
	// read-only (Stats.BackgroundError).
	BackgroundError func(error)
}

// FlushInfo describes one flush of a memtable to L0.
type FlushInfo struct {
	// Entries is the number of entries in the memtable.
	Entries int
	// Output is the table written, none if every entry was dropped (set in
	// FlushEnd).
	Output   []TableFileInfo
	Duration time.Duration
	Err      error
}

// CompactionInfo describes one compaction.
type CompactionInfo struct {
	Level, OutputLevel int
	// Kind is why it runs, and the Stats.Compactions field that counts
	// it.
	Kind compaction.Kind
	// Inputs are the tables merged (or moved); Outputs those written (set
	// in CompactionEnd).
	Inputs, Outputs []TableFileInfo
	Duration        time.Duration
	Err             error
}

// WriteStallInfo says why writes wait.
type WriteStallInfo struct {
	Reason string // "flush queue full" or "L0 full"
}

// TableFileInfo names a table file. Level is the level it was written to
// or taken from; -1 in TableDeleted, where a level no longer means anything.
type TableFileInfo struct {
	FileNum uint64
	Size    uint64
	Level   int
}

// WALFileInfo names a write-ahead log.
type WALFileInfo struct {
	FileNum uint64
	// RecycledFrom is, in WALCreated, the obsolete WAL whose file this one
	// took over, renamed and written over from its start; 0 for a new file.
	RecycledFrom uint64
}

// withDefaults returns a copy of l (which may be nil) whose nil fields do
// nothing, so the engine calls every field unconditionally.
func (l *EventListener) withDefaults() *EventListener {
	var r EventListener
	if l != nil {
		r = *l
	}
	fill(&r.FlushBegin)
	fill(&r.FlushEnd)
	fill(&r.CompactionBegin)
	fill(&r.CompactionEnd)
	fill(&r.WriteStallBegin)
	if r.WriteStallEnd == nil {
		r.WriteStallEnd = func() {}
	}
	fill(&r.TableCreated)
	fill(&r.TableDeleted)
	fill(&r.WALCreated)
	fill(&r.WALDeleted)
	fill(&r.BackgroundError)
	return &r
}

func fill[T any](f *func(T)) {
	if *f == nil {
		*f = func(T) {}
	}
}
