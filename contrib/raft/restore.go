package raft

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"

	hraft "github.com/hashicorp/raft"
	"github.com/monbandb/monban/lsm"
)

// Restore replaces the state with the snapshot rc streams, atomically:
// a crash at any step leaves, at the next OpenFSM, the old state or the
// new one, whole. The steps:
//
//  1. Stage: write the stream's files into data-<live+1>, each synced,
//     and check its checksum; sync the directory and root.
//  2. Open the staged DB: it must be one, holding an applied index.
//  3. Commit: write LIVE.tmp naming data-<live+1>, sync it, rename it
//     over LIVE, sync root. The rename is the one step that switches.
//  4. Swap the DBs under the write lock; close the old one.
//  5. Remove data-<live>.
//
// A crash before 3's rename leaves LIVE naming the old DB, and OpenFSM
// removes the staged directory; after it, LIVE names the new one, and
// OpenFSM removes the old. An error before the rename leaves the old
// state live and open, as if Restore had not been called; after it, the
// new state is live (AppliedIndex says which), and the error reports a
// step that did not finish: a sync (a crash may then bring back the old
// state), or closing and removing the old DB.
func (f *FSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	f.mu.RLock()
	closed, next := f.closed, f.live+1
	f.mu.RUnlock()
	if closed {
		return lsm.ErrClosed
	}
	dir := filepath.Join(f.root, dataDir(next))
	db, applied, err := f.stage(dir, rc)
	// The commit and the swap hold the write lock Close takes, so that a
	// Close meanwhile waits for them (it then closes the new DB), and one
	// before them is seen here: past Close the root lock is another FSM's,
	// and LIVE must not change under it.
	f.mu.Lock()
	renamed, closed := false, f.closed
	if err == nil && closed {
		err = lsm.ErrClosed
	}
	if err == nil {
		renamed, err = f.writeLive(next)
	}
	if !renamed {
		f.mu.Unlock()
		if db != nil {
			err = errors.Join(err, db.Close())
		}
		if closed {
			return err // the root is no longer this FSM's: the next OpenFSM removes dir
		}
		return errors.Join(err, removeAll(f.fs, dir))
	}
	// Committed, or perhaps (err != nil) committed: either way both
	// directories are whole, and the new one is what LIVE names now, so
	// it is the state from here on. Keep the old one on an error, for
	// LIVE may name it after a crash; OpenFSM removes whichever LIVE does
	// not name.
	old, oldDir := f.db, filepath.Join(f.root, dataDir(f.live))
	f.db, f.live = db, next
	f.applied.Store(applied)
	f.mu.Unlock()
	if cerr := old.Close(); cerr != nil {
		return errors.Join(err, fmt.Errorf("monban raft: fsm restore: closing the old DB: %w", cerr))
	}
	if err != nil {
		return err
	}
	return removeAll(f.fs, oldDir)
}

// stage is Restore's steps 1 and 2: it returns the staged DB, open, and
// its applied index. Everything that can fail reading the new state
// happens here, before the commit: past it, the new state is live, and a
// failure to read it could neither keep the old one nor go on with it.
func (f *FSM) stage(dir string, r io.Reader) (*lsm.DB, uint64, error) {
	if err := removeAll(f.fs, dir); err != nil && !isNotExist(err) {
		return nil, 0, fmt.Errorf("monban raft: fsm restore: %w", err)
	}
	if err := f.fs.MkdirAll(dir); err != nil {
		return nil, 0, fmt.Errorf("monban raft: fsm restore: %w", err)
	}
	if err := readSnapshot(f.fs, dir, r); err != nil {
		return nil, 0, err
	}
	if err := errors.Join(f.fs.SyncDir(dir), f.fs.SyncDir(f.root)); err != nil {
		return nil, 0, fmt.Errorf("monban raft: fsm restore: %w", err)
	}
	opts := f.opts
	opts.ErrorIfNotExists = true
	db, err := lsm.Open(dir, &opts)
	if err != nil {
		return nil, 0, fmt.Errorf("monban raft: fsm restore: the snapshot is no DB: %w", err)
	}
	// Every snapshot holds its applied index (Snapshot writes it first):
	// a DB without one is not an FSM's state.
	if _, err := db.Get([]byte(appliedKey)); errors.Is(err, lsm.ErrNotFound) {
		return nil, 0, errors.Join(fmt.Errorf("monban raft: fsm restore: %w: the snapshot's DB holds no applied index: not an FSM's", errBadSnapshot), db.Close())
	}
	applied, err := readApplied(db)
	if err != nil {
		return nil, 0, errors.Join(err, db.Close())
	}
	return db, applied, nil
}

// CatchUp restores the newest snapshot of snapshots if the state is
// behind it: call it after OpenFSM and before raft.NewRaft when raft runs
// with NoSnapshotRestoreOnStart. raft keeps a snapshot a leader sends (its
// sink closed, synced) before it calls Restore, so a crash between the
// two leaves the state behind a snapshot raft then starts from, replaying
// only the entries after it: those before would be missing for good.
// Only the newest counts: under NoSnapshotRestoreOnStart raft takes its
// index as applied without opening it, so an older one restored in its
// place would leave the entries between the two unapplied. If it fails to
// open or restore, CatchUp returns the error with the state as it was;
// the node must not start until the snapshot is fixed or removed. On
// success the applied index is at least the snapshot's: the entries
// between its last command and its index (no-ops, barriers) changed
// nothing.
//
// A snapshot's index counts every entry raft applied, the barriers,
// no-ops and configuration changes it never hands the FSM among them, so
// a node's own snapshot taken after a barrier is ahead of the state's
// applied index with nothing in it the state lacks. logs, this node's
// log store (nil if there is none to ask), tells such a snapshot apart:
// if it holds every entry after the applied index up to the snapshot's,
// none of them a command, and the last with the snapshot's term (so that,
// by raft's log matching, they are the entries the snapshot applied),
// CatchUp records the snapshot's index as applied and restores nothing.
func (f *FSM) CatchUp(snapshots hraft.SnapshotStore, logs hraft.LogStore) error {
	metas, err := snapshots.List()
	if err != nil {
		return fmt.Errorf("monban raft: fsm catch-up: %w", err)
	}
	if len(metas) == 0 || metas[0].Index <= f.AppliedIndex() {
		return nil
	}
	newest := metas[0]
	if logs != nil && onlyNonCommands(logs, f.AppliedIndex(), newest.Index, newest.Term) {
		return f.raiseApplied(newest.Index)
	}
	_, rc, err := snapshots.Open(newest.ID)
	if err == nil {
		err = f.Restore(rc)
	}
	if err != nil {
		return fmt.Errorf("monban raft: fsm catch-up: the state, at %d, is behind the newest snapshot %s (index %d), which raft starts from: %w", f.AppliedIndex(), newest.ID, newest.Index, err)
	}
	return f.raiseApplied(newest.Index)
}

// onlyNonCommands reports whether logs holds every entry in (applied,
// index], none a command, the one at index of the given term.
func onlyNonCommands(logs hraft.LogStore, applied, index, term uint64) bool {
	var l hraft.Log
	for i := index; i > applied; i-- {
		if logs.GetLog(i, &l) != nil || l.Type == hraft.LogCommand || (i == index && l.Term != term) {
			return false
		}
	}
	return true
}

// raiseApplied records index as applied, durably, if it is above the
// applied index.
func (f *FSM) raiseApplied(index uint64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return lsm.ErrClosed
	}
	if index <= f.applied.Load() {
		return nil
	}
	if err := f.db.Put([]byte(appliedKey), binary.BigEndian.AppendUint64(nil, index), lsm.Sync); err != nil {
		return fmt.Errorf("monban raft: fsm catch-up: %w", err)
	}
	f.applied.Store(index)
	return nil
}
