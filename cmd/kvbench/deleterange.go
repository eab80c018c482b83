package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/monbandb/monban/lsm"
)

// rangeDeletes is what deleterange did: its DB.DeleteRange calls, what
// they wrote to the WAL, and what the Compact after them reclaimed,
// measured as Stats' table bytes over every level (the figure the stats
// table prints per level) and as the DB directory's bytes.
type rangeDeletes struct {
	Calls       int64 `json:"calls"`
	KeysPerCall int   `json:"keys_per_call"`
	KeysCovered int64 `json:"keys_covered"`
	// Commits and WALBytes are Stats' Commits and WALBytes over the calls:
	// a call is one commit of one WAL record, whatever its range holds.
	Commits          uint64  `json:"commits"`
	WALBytes         uint64  `json:"wal_bytes"`
	TableBytesBefore int64   `json:"table_bytes_before"` // after the calls' Flush, before Compact
	TableBytesAfter  int64   `json:"table_bytes_after"`
	CompactSec       float64 `json:"compact_sec"`
	// CompactionBytesRead is what compactions read from tables from the
	// first call to the end of the Compact (Stats.CompactionBytesRead);
	// DeleteOnly the delete-only compactions among them, which dropped
	// tables the ranges deleted wholly without reading them.
	CompactionBytesRead uint64 `json:"compaction_bytes_read"`
	DeleteOnly          uint64 `json:"delete_only"`
	// DirBytesAtOpen is the DB directory's bytes when the run opened it,
	// before its first workload (for a fresh DB, before the fill wrote
	// the keys); DirBytesBefore before the calls; DirBytesAfter after the
	// Compact and a Close, which deletes the tables it replaced;
	// DirBytesReopened after the Open that follows, which starts a new
	// manifest in place of the one that logged every flush and compaction.
	DirBytesAtOpen   int64 `json:"dir_bytes_at_open"`
	DirBytesBefore   int64 `json:"dir_bytes_before"`
	DirBytesAfter    int64 `json:"dir_bytes_after"`
	DirBytesReopened int64 `json:"dir_bytes_reopened"`
}

// rangeCalls is the number of deleterange calls: -deletes keys in calls of
// -range_size, rounded down, at least one, so it deletes about as many
// keys as deleterandom.
func (c *config) rangeCalls() int { return max(c.deletes/c.rangeSize, 1) }

// deleteRange deletes disjoint runs of -range_size present keys with
// DB.DeleteRange, timed; then, untimed, flushes and compacts the whole key
// range, and reports the table and directory bytes before and after. It
// leaves the DB reopened. The present keys
// are cut into rangeCalls equal slots and the workload's seed picks a run
// in each, so the ranges are random, disjoint and the same for any
// -threads. Key numbers sort as keys do, so [present(s), present(s+size))
// covers exactly the present keys s … s+size-1.
func (b *bench) deleteRange(name string) (*record, error) {
	calls, size := b.cfg.rangeCalls(), b.cfg.rangeSize
	slot := b.cfg.num / calls // validate makes it at least size
	rng := opRand(b.cfg.seed, name, 0)
	starts := make([]int, calls)
	for i := range starts {
		starts[i] = i*slot + rng.IntN(slot-size+1)
	}
	dirBefore, err := dirBytes(b.dir)
	if err != nil {
		return nil, err
	}
	before := b.db.Stats()
	r, err := b.runOps(name, calls, func(t *thread, i int) error {
		end := make([]byte, b.keys.keySize)
		return b.db.DeleteRange(b.keys.key(t.key, b.keys.present(starts[i])), b.keys.key(end, b.keys.present(starts[i]+size)))
	})
	if err != nil {
		return nil, err
	}
	after := b.db.Stats()
	if err := b.db.Flush(); err != nil {
		return nil, fmt.Errorf("flush after deleting ranges: %w", err)
	}
	rd := &rangeDeletes{Calls: r.ops, KeysPerCall: size, KeysCovered: r.ops * int64(size),
		Commits: after.Commits - before.Commits, WALBytes: after.WALBytes - before.WALBytes,
		TableBytesBefore: tableBytes(b.db.Stats()), DirBytesAtOpen: b.dirBytesAtOpen, DirBytesBefore: dirBefore}
	start := time.Now()
	if err := b.db.Compact(); err != nil {
		return nil, fmt.Errorf("compact after deleting ranges: %w", err)
	}
	rd.CompactSec = time.Since(start).Seconds()
	compacted := b.db.Stats()
	rd.TableBytesAfter = tableBytes(compacted)
	rd.CompactionBytesRead = compacted.CompactionBytesRead - before.CompactionBytesRead
	rd.DeleteOnly = compacted.Compactions.DeleteOnly - before.Compactions.DeleteOnly
	// The tables the Compact replaced are deleted in the background once
	// no read holds them; Close deletes what is left.
	err = b.db.Close()
	b.db = nil
	if err != nil {
		return nil, err
	}
	if rd.DirBytesAfter, err = dirBytes(b.dir); err != nil {
		return nil, err
	}
	if err := b.open(); err != nil {
		return nil, err
	}
	if rd.DirBytesReopened, err = dirBytes(b.dir); err != nil {
		return nil, err
	}
	rec := newRecord(b, name, r)
	rec.RangeDeletes = rd
	return rec, nil
}

// tableBytes is the bytes of every level's tables.
func tableBytes(s lsm.Stats) int64 {
	var n int64
	for _, l := range s.Levels {
		n += int64(l.Bytes)
	}
	return n
}

// dirBytes is the bytes of the regular files in dir, the DB's directory
// (a flat one): tables, WALs, manifest and all. A file deleted while it
// looks (an obsolete table) counts nothing.
func dirBytes(dir string) (int64, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, e := range entries {
		fi, err := e.Info()
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return 0, err
		case fi.Mode().IsRegular():
			n += fi.Size()
		}
	}
	return n, nil
}
