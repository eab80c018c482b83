package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/monbandb/monban/lsm"
)

// repairVerdict is what one cycle's repair check found: the state of a
// repaired copy of the killed directory against orig, the state Open of
// the directory itself read (doc.go, "Repair after the kill").
type repairVerdict struct {
	// nothing is a first cycle killed before its child's Open made the
	// DB's directory: there was no copy to repair, and nothing compared.
	nothing                      bool
	compared                     int
	resurrected, lost, differing int
	problems                     []string // the first maxProblems
	report                       *lsm.RepairReport
}

func (v *repairVerdict) fail(count *int, format string, args ...any) {
	*count++
	if len(v.problems) < maxProblems {
		v.problems = append(v.problems, "repair: "+fmt.Sprintf(format, args...))
	}
}

// ok reports whether the repaired copy held exactly what Open held.
func (v repairVerdict) ok() bool { return v.resurrected == 0 && v.lost == 0 && v.differing == 0 }

func (v repairVerdict) String() string {
	if v.nothing {
		return "nothing to repair: killed before Open made the DB"
	}
	if v.ok() {
		return fmt.Sprintf("repaired copy: %d keys the same", v.compared)
	}
	return fmt.Sprintf("repaired copy: %d resurrected, %d lost, %d differing", v.resurrected, v.lost, v.differing)
}

// compareRepaired compares, for every key index below keys, repaired (the
// repaired copy read back) with orig (Open of the original read back).
// Open's recovery is what the verifier checks against the ack log; Repair
// reads the same files, so any difference is Repair's.
func compareRepaired(orig, repaired state, keys int) repairVerdict {
	var v repairVerdict
	for k := range keys {
		v.compared++
		o, r := orig[k], repaired[k]
		switch {
		case sameState(o, r):
		case o == nil:
			v.fail(&v.resurrected, "key %d: resurrected, %s (Open: absent)", k, describe(k, r))
		case r == nil:
			v.fail(&v.lost, "key %d: lost, absent (Open: %s)", k, describe(k, o))
		default:
			v.fail(&v.differing, "key %d: %s (Open: %s)", k, describe(k, r), describe(k, o))
		}
	}
	return v
}

// repairDir holds the two copies a cycle's repair check makes: killed/,
// the directory as the kill left it, and repaired/, a copy of that which
// Repair rewrites.
func repairDir(c *config) string { return filepath.Join(c.dir, "repair") }

// copyKilled copies the killed DB into repair/killed/, replacing the last
// cycle's copies. It runs before Open, which deletes the obsolete WALs and
// stray tables Repair must be shown.
func copyKilled(c *config) error {
	if err := os.RemoveAll(repairDir(c)); err != nil {
		return err
	}
	return os.CopyFS(filepath.Join(repairDir(c), "killed"), os.DirFS(dbDir(c)))
}

// checkRepair repairs a copy of repair/killed/ with the cycle's option set,
// opens it, reads it whole and compares it with orig. A non-nil error is
// Repair, Open or a read of the copy failing, as bad as Open failing on
// the original. killed/ stays as it was, for keepRepairCopy.
func (cy *cycle) checkRepair(orig state, keys int) (repairVerdict, error) {
	dir := filepath.Join(repairDir(cy.cfg), "repaired")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(repairDir(cy.cfg), "killed"))); err != nil {
		return repairVerdict{}, err
	}
	rep, err := lsm.Repair(dir, cy.opts.lsm())
	if err != nil {
		return repairVerdict{}, fmt.Errorf("Repair of a copy: %w", err)
	}
	db, err := lsm.Open(dir, cy.opts.lsm())
	if err != nil {
		return repairVerdict{}, fmt.Errorf("Open of the repaired copy: %w", err)
	}
	got, problems, err := readAndClose(db, keys)
	if err != nil {
		return repairVerdict{}, fmt.Errorf("repaired copy: %w", err)
	}
	v := compareRepaired(orig, got, keys)
	v.report = rep
	for _, p := range problems {
		v.fail(&v.differing, "%s", p)
	}
	return v, nil
}

// keepRepairCopy moves the cycle's repair/killed/ to repair-cycle-N/, out
// of the next cycle's way: the directory a failing Repair was given, to
// run it again.
func keepRepairCopy(c *config, cycle int) (string, error) {
	kept := filepath.Join(c.dir, fmt.Sprintf("repair-cycle-%d", cycle))
	return kept, os.Rename(filepath.Join(repairDir(c), "killed"), kept)
}
