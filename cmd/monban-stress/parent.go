package main

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// totals is the run so far, as the summary line prints it.
type totals struct {
	cycles, acked, verified, lost, unexpected int
	checkpoints                               checkpointTotals
	repair                                    repairTotals
}

func (t totals) String() string {
	return fmt.Sprintf("cycles %d, acknowledged ops %d, keys verified %d, lost %d, unexpected %d",
		t.cycles, t.acked, t.verified, t.lost, t.unexpected)
}

// repairTotals sums the cycles' repair checks, for the summary's second
// line. Cycles with nothing to repair count apart, so that keys compared
// are exactly the checked cycles' keys.
type repairTotals struct {
	cycles, failed                         int // checked, and of those differing
	nothing                                int // killed before the DB existed
	compared, resurrected, lost, differing int
	kept                                   string // the first failing cycle's copy before Repair
}

func (t *repairTotals) add(v repairVerdict) {
	if v.nothing {
		t.nothing++
		return
	}
	t.cycles++
	if !v.ok() {
		t.failed++
	}
	t.compared += v.compared
	t.resurrected += v.resurrected
	t.lost += v.lost
	t.differing += v.differing
}

func (t repairTotals) String() string {
	return fmt.Sprintf("repair: cycles %d, nothing to repair %d, keys compared %d, resurrected %d, lost %d, differing %d",
		t.cycles, t.nothing, t.compared, t.resurrected, t.lost, t.differing)
}

// stress runs cycles until -cycles or -duration is reached or one fails,
// prints the summary and returns the exit status.
func stress(c *config, stdout, stderr io.Writer) int {
	start := time.Now()
	temp := c.dir == ""
	if temp {
		d, err := os.MkdirTemp("", "monban-stress-")
		if err != nil {
			fmt.Fprintf(stderr, "monban-stress: %v\n", err)
			return 1
		}
		c.dir = d
	} else if err := os.MkdirAll(c.dir, 0o755); err != nil {
		// -dir may name a new directory; the ack log is written before
		// the child creates db/ in it.
		fmt.Fprintf(stderr, "monban-stress: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "monban-stress: seed %d, dir %s, options %s, keys %d\n", c.seed, c.dir, c.options, c.keys)
	rng := rand.New(rand.NewPCG(c.seed, 0))
	choose, _ := optionChooser(c.options) // parseConfig checked the name
	base := state{}
	var t totals
	var failure error
	for i := 0; c.cycles == 0 || i < c.cycles; i++ {
		if c.duration > 0 && time.Since(start) >= c.duration {
			break
		}
		cy := &cycle{cfg: c, n: i, opts: choose(rng), seed: rng.Uint64(), plan: choosePlan(rng, c)}
		v, next, err := cy.run(base)
		t.cycles++
		t.acked += cy.acked
		t.verified += v.checked
		t.lost += v.lost
		t.unexpected += v.unexpected
		for o, n := range cy.checkpoints {
			t.checkpoints[o] += n
		}
		if errors.Is(err, errChildCheck) {
			t.unexpected++ // a wrong read is an unexpected value, seen live
		}
		res := outcome(v, err) + "; " + cy.checkpoints.String()
		repairFailed := false
		if c.repair && err == nil {
			t.repair.add(cy.repair)
			res += "; " + cy.repair.String()
			repairFailed = !cy.repair.ok()
		}
		if c.verbose || err != nil || !v.ok() || repairFailed {
			fmt.Fprintf(stdout, "cycle %d: %s, killed %s, %d acknowledged, %d in flight: %s\n",
				i, cy.opts, cy.plan, cy.acked, cy.inFlight, res)
		}
		for _, p := range slices.Concat(v.problems, cy.repair.problems) {
			fmt.Fprintf(stdout, "  %s\n", p)
		}
		if repairFailed {
			// The report says what Repair merged and removed; the copy it
			// was given lets whoever fixes it run it again.
			for line := range strings.Lines(cy.repair.report.String()) {
				fmt.Fprintf(stdout, "  %s", line)
			}
			if t.repair.kept == "" {
				kept, kerr := keepRepairCopy(c, i)
				if kerr != nil {
					fmt.Fprintf(stderr, "monban-stress: keeping the copy Repair was given: %v\n", kerr)
					kept = "(not kept)"
				}
				t.repair.kept = kept
				fmt.Fprintf(stdout, "  the DB before Repair: %s\n", kept)
			}
		}
		if err != nil || !v.ok() {
			failure = fmt.Errorf("cycle %d (options %s) failed", i, cy.opts)
			break
		}
		base = next
	}
	fmt.Fprintln(stdout, t)
	fmt.Fprintln(stdout, t.checkpoints)
	if c.repair {
		fmt.Fprintln(stdout, t.repair)
	}
	fmt.Fprintf(stdout, "seed %d, %.1f seconds\n", c.seed, time.Since(start).Seconds())
	if t.repair.failed > 0 {
		fmt.Fprintf(stdout, "FAIL: Repair of a copy of the killed DB differed from Open of it in %d of %d cycles; kept %s (the first such copy, before Repair, in %s)\n",
			t.repair.failed, t.repair.cycles, c.dir, filepath.Base(t.repair.kept))
	}
	if failure != nil {
		fmt.Fprintf(stdout, "FAIL: %v; kept %s (DB in db/, the cycle's ack log in ack.log, checkpoints not found right in ckpt/); rerun with -seed %d\n",
			failure, c.dir, c.seed)
	}
	if failure != nil || t.repair.failed > 0 {
		return 1
	}
	if temp {
		if err := os.RemoveAll(c.dir); err != nil {
			fmt.Fprintf(stderr, "monban-stress: %v\n", err)
		}
	}
	return 0
}

func outcome(v verdict, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case v.ok():
		return fmt.Sprintf("%d keys ok", v.checked)
	}
	return fmt.Sprintf("%d lost, %d unexpected", v.lost, v.unexpected)
}

// killPlan says when a cycle's SIGKILL comes.
type killPlan struct {
	// early kills a fixed time after the start, ready or not, so that
	// some kills land in Open's own recovery (replaying the WAL, flushing
	// it to L0, deleting obsolete files).
	early bool
	// afterMark kills just after the child announces a Flush or a
	// compaction (within after of the workload starting; if none comes,
	// at after), afterCheckpoint just after it announces a Checkpoint, so
	// that some kills cut one short.
	afterMark, afterCheckpoint bool
	after                      time.Duration
}

func (p killPlan) String() string {
	switch {
	case p.early:
		return fmt.Sprintf("%v after start", p.after)
	case p.afterMark:
		return fmt.Sprintf("just after a flush/compaction call (within %v)", p.after)
	case p.afterCheckpoint:
		return fmt.Sprintf("just after a checkpoint call (within %v)", p.after)
	}
	return fmt.Sprintf("after %v", p.after)
}

func choosePlan(rng *rand.Rand, c *config) killPlan {
	d := c.killMin + time.Duration(rng.Int64N(int64(c.killMax-c.killMin)+1))
	switch r := rng.IntN(10); {
	case r == 0:
		return killPlan{early: true, after: time.Duration(rng.Int64N(int64(50 * time.Millisecond)))}
	case r < 4:
		return killPlan{afterMark: true, after: d}
	case r == 4:
		return killPlan{afterCheckpoint: true, after: d}
	}
	return killPlan{after: d}
}

func dbDir(c *config) string   { return filepath.Join(c.dir, "db") }
func ackPath(c *config) string { return filepath.Join(c.dir, "ack.log") }
