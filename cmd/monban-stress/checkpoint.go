package main

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/monbandb/monban/lsm"
)

// checkpointer takes a checkpoint now and then, about as often as the
// maintainer calls Compact, one at a time, each into a new directory of
// the run's ckpt/ (outside the DB's: a checkpoint is a DB of its own). The
// "C" record goes before the call and the "K" record after it returned
// nil; a Checkpoint that fails ends the child, as any DB error does.
func (c *child) checkpointer(rng *rand.Rand) {
	if err := os.MkdirAll(c.cfg.checkpoints, 0o755); err != nil {
		c.dbError("checkpoints: %v", err)
	}
	for id := 1; ; id++ {
		time.Sleep(time.Duration(20+rng.IntN(400)) * time.Millisecond)
		// The cycle in the name keeps a directory a kill left from being
		// reused: Checkpoint wants a new or empty one.
		name := fmt.Sprintf("%d-%d", c.cfg.cycle, id)
		if err := c.log.checkpointStarted(id, name); err != nil {
			c.dbError("ack log: %v", err)
		}
		c.mark("checkpoint")
		if err := c.db.Checkpoint(filepath.Join(c.cfg.checkpoints, name)); err != nil {
			c.dbError("checkpoint %s: %v", name, err)
		}
		if err := c.log.checkpointDone(id); err != nil {
			c.dbError("ack log: %v", err)
		}
	}
}

// checkpointOutcome is what the parent found a checkpoint to be.
type checkpointOutcome int

const (
	ckptVerified checkpointOutcome = iota // done ("K" logged): opened read-only and verified
	// Cut short by the kill: refused by Open, opened as an empty DB (only
	// its LOCK was written, or not even its directory), or complete (its
	// CURRENT was written), then verified as a done one is.
	ckptRefused
	ckptEmpty
	ckptComplete
)

// checkpointTotals counts checkpoints by outcome.
type checkpointTotals [ckptComplete + 1]int

func (t checkpointTotals) String() string {
	return fmt.Sprintf("checkpoints: verified %d, cut short: refused %d, empty %d, complete %d",
		t[ckptVerified], t[ckptRefused], t[ckptEmpty], t[ckptComplete])
}

// checkCheckpoints checks, into v, the checkpoints the ack log names,
// against base and ops (doc.go, "Verification"), after the parent's Open
// of the DB, so that neither the kill nor that Open may have harmed a
// finished checkpoint. It removes each one it finds right; at the first
// wrong one it stops, keeping that one and those after it. The error is
// one no kill excuses: a finished or complete checkpoint that does not
// open or read.
func (cy *cycle) checkCheckpoints(base state, ops []*op, ckpts []*checkpoint, v *verdict) error {
	keys := checkedKeys(cy.cfg.keys)
	for _, ck := range ckpts {
		dir := filepath.Join(checkpointsDir(cy.cfg), ck.name)
		got, problems, err := cy.openCheckpoint(dir, ck)
		if err != nil {
			return fmt.Errorf("checkpoint %s: %w", ck.name, err)
		}
		var cv verdict
		if got != nil {
			cv = verifyCheckpoint(base, ops, ck, got, keys, cy.writerBase())
		}
		for _, p := range problems {
			cv.fail(false, "%s", p)
		}
		for _, p := range cv.problems {
			v.problems = append(v.problems, fmt.Sprintf("checkpoint %s: %s", ck.name, p))
		}
		v.lost += cv.lost
		v.unexpected += cv.unexpected
		if !cv.ok() {
			return nil
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	return nil
}

// openCheckpoint opens the checkpoint in dir and reads it whole, counting
// it in cy.checkpoints. got is nil for one cut short that holds no DB:
// refused by Open, opened empty, or (a problem) opened though its files
// are no DB. A done checkpoint opens read
// only. One cut short opens as a user would reopen it, writable: with its
// CURRENT written it must hold a complete checkpoint; without, Open must
// refuse its files, or, where Checkpoint wrote nothing but LOCK, may make
// a new, empty DB.
func (cy *cycle) openCheckpoint(dir string, ck *checkpoint) (got state, problems []string, err error) {
	keys := checkedKeys(cy.cfg.keys)
	opts := cy.opts.lsm()
	if ck.done > 0 {
		opts.ReadOnly = true
		db, err := lsm.Open(dir, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("Open of a finished checkpoint: %w", err)
		}
		cy.checkpoints[ckptVerified]++
		return readAndClose(db, keys)
	}
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	db, err := lsm.Open(dir, opts)
	switch {
	case slices.Contains(names, "CURRENT"):
		if err != nil {
			return nil, nil, fmt.Errorf("Open of a checkpoint cut short after its CURRENT was written: %w", err)
		}
		cy.checkpoints[ckptComplete]++
		return readAndClose(db, keys)
	case err != nil:
		cy.checkpoints[ckptRefused]++
		return nil, nil, nil
	}
	got, problems, err = readAndClose(db, keys)
	if err != nil {
		return nil, nil, fmt.Errorf("checkpoint cut short before its CURRENT was written, opened: %w", err)
	}
	if len(got) > 0 || len(problems) > 0 || slices.ContainsFunc(names, func(n string) bool { return n != "LOCK" }) {
		return nil, append(problems, fmt.Sprintf("cut short before its CURRENT was written, holding %q, it opened, with %d keys", names, len(got))), nil
	}
	cy.checkpoints[ckptEmpty]++
	return nil, nil, nil
}

// readAndClose reads db whole (readState) and closes it.
func readAndClose(db *lsm.DB, keys int) (state, []string, error) {
	got, problems, err := readState(db, keys)
	if cerr := db.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("Close: %w", cerr)
	}
	return got, problems, err
}

// checkpointsDir holds the child's checkpoints, ckpt/<cycle>-<id>.
func checkpointsDir(c *config) string { return filepath.Join(c.dir, "ckpt") }
