package lsm

import (
	"fmt"
	"path/filepath"

	"github.com/monbandb/monban/internal/manifest"
)

// File deletion. Invariant: never delete a file that cannot be proved
// obsolete — one that no recovery could need and no reader can still be
// reading (package doc, invariant 2). What proves it depends on the file:
//
//   - a table the deleter removes (deleteObsoleteTables) is one that
//     VersionSet.TakeObsolete handed over: it left the last live Version
//     naming it. A Version stays live while anything holds a reference —
//     the current read state, a Get's or an iterator's, a flush's or
//     compaction's — so no reader is left. And a Version without the table
//     is installed only after the manifest edit that removed it is synced
//     (LogAndApply), so no recovery needs it either; table numbers are
//     never reused, so it cannot come back.
//   - a WAL (flushLoop, Open) is removed, or kept for its file to be
//     reused under a new number (recycleWAL), only after an edit whose
//     LogNum is above it is synced: what survived of its memtable is in a
//     table the manifest names, and recovery replays only WALs numbered
//     LogNum and above.
//   - a table no manifest names at all: one being written that failed or
//     came out empty (tableWriter), the stray output of a flush or
//     compaction that crashed before its edit (removeStrays: not in
//     the recovered manifest's LiveFiles), or the tables a refused Open
//     replayed.
//
// The deleter, a goroutine, does the tables' part so that whoever lets go
// of a read state last — often a Get — pays for no unlink and runs no
// EventListener.TableDeleted; unref only signals it. Once Close has set
// filesReleased the directory lock may be gone, so nothing more is
// deleted: the next Open collects what was left (removeStrays), as
// it does a file whose removal failed, which only leaks space meanwhile.

// runDeleter deletes the tables that left the last live version whenever
// a read state's last reference goes, and whenever deleteNow asks.
func (d *DB) runDeleter() {
	defer close(d.deleterDone)
	for {
		select {
		case <-d.obsolete:
			d.deleteObsoleteTables()
		case req := <-d.deleterRequests:
			d.deleteObsoleteTables()
			close(req.done)
			if req.stop {
				return
			}
		}
	}
}

// deleterRequest asks the deleter for a pass now; done closes after it,
// and with stop the deleter then returns.
type deleterRequest struct {
	done chan struct{}
	stop bool
}

// deleteNow has the deleter delete what is obsolete and returns once it
// has: Close's last pass (stop), so that what was obsolete before Close
// is not left to the next Open, and the tests' wait for a quiet DB. It
// returns at once if the deleter has stopped or never ran (read-only).
func (d *DB) deleteNow(stop bool) {
	if d.deleterRequests == nil {
		return
	}
	req := deleterRequest{done: make(chan struct{}), stop: stop}
	select {
	case d.deleterRequests <- req:
		<-req.done
	case <-d.deleterDone:
	}
}

// deleteObsoleteTables removes the tables that left the last live version
// (invariant 2).
func (d *DB) deleteObsoleteTables() {
	d.filesMu.Lock()
	defer d.filesMu.Unlock()
	if d.filesReleased {
		return // the next Open deletes them: no live version names them
	}
	obsolete := d.vs.TakeObsolete()
	if d.tree != nil {
		// After TakeObsolete: the placements of the tables about to be
		// deleted are among these, read while their files are there.
		d.tree.leave(d.vs.TakeLeftPlacements())
	}
	var deleted []*manifest.FileMetadata
	for _, f := range obsolete {
		d.tables.Evict(f.FileNum)
		if d.recentHashes != nil {
			d.recentHashes.drop(f.FileNum)
		}
		if d.removeFile(manifest.KindTable, f.FileNum) {
			deleted = append(deleted, f)
		}
	}
	if len(deleted) == 0 {
		return
	}
	// Durable before they are reported: a crash that lost the unlinks
	// would bring the tables back, and one that carries another DB's id (a
	// checkpoint's, which keeps its source's) is a stray Open cannot prove
	// this DB's, and keeps. A directory sync that failed leaves the
	// directory's state on disk unknown, as every other one does, so the
	// DB turns read-only, and the tables are not reported deleted.
	if err := d.fs.SyncDir(d.dir); err != nil {
		d.mu.Lock()
		d.setBgErr(fmt.Errorf("monban: syncing the directory after deleting tables: %w", err))
		d.mu.Unlock()
		return
	}
	for _, f := range deleted {
		d.opts.EventListener.TableDeleted(TableFileInfo{FileNum: f.FileNum, Size: f.Size, Level: -1})
	}
}

// removeFile deletes a file the DB no longer needs and reports whether it
// did; failure only leaks space (Open collects strays), so it is logged, not
// returned. A WAL's deletion is an event of its own.
func (d *DB) removeFile(kind manifest.FileKind, num uint64) bool {
	if err := d.fs.Remove(d.path(kind, num)); err != nil {
		d.opts.Logger.Warn("monban: removing a file", "file", manifest.MakeFilename(kind, num), "err", err)
		return false
	}
	if kind == manifest.KindLog {
		d.opts.EventListener.WALDeleted(WALFileInfo{FileNum: num})
	}
	return true
}

// path is the name of the DB's file of this kind and number: what the
// deleter removes, and what every writer and reader of a file opens.
func (d *DB) path(kind manifest.FileKind, num uint64) string {
	return filepath.Join(d.dir, manifest.MakeFilename(kind, num))
}
