package lsm

import (
	"path/filepath"

	"github.com/monbandb/monban/internal/manifest"
)

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
	for _, f := range d.vs.TakeObsolete() {
		d.tables.Evict(f.FileNum)
		if d.removeFile(manifest.KindTable, f.FileNum) {
			d.opts.EventListener.TableDeleted(TableFileInfo{FileNum: f.FileNum, Size: f.Size, Level: -1})
		}
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

func (d *DB) path(kind manifest.FileKind, num uint64) string {
	return filepath.Join(d.dir, manifest.MakeFilename(kind, num))
}
