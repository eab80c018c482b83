package main

import (
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"
)

// totals is the run so far, as the summary line prints it.
type totals struct {
	cycles, acked, verified, lost, unexpected int
}

func (t totals) String() string {
	return fmt.Sprintf("cycles %d, acknowledged ops %d, keys verified %d, lost %d, unexpected %d",
		t.cycles, t.acked, t.verified, t.lost, t.unexpected)
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
		if errors.Is(err, errChildCheck) {
			t.unexpected++ // a wrong read is an unexpected value, seen live
		}
		if c.verbose || err != nil || !v.ok() {
			fmt.Fprintf(stdout, "cycle %d: %s, killed %s, %d acknowledged, %d in flight: %s\n",
				i, cy.opts, cy.plan, cy.acked, cy.inFlight, outcome(v, err))
		}
		for _, p := range v.problems {
			fmt.Fprintf(stdout, "  %s\n", p)
		}
		if err != nil || !v.ok() {
			failure = fmt.Errorf("cycle %d (options %s) failed", i, cy.opts)
			break
		}
		base = next
	}
	fmt.Fprintln(stdout, t)
	fmt.Fprintf(stdout, "seed %d, %.1f seconds\n", c.seed, time.Since(start).Seconds())
	if failure != nil {
		fmt.Fprintf(stdout, "FAIL: %v; kept %s (DB in db/, the cycle's ack log in ack.log); rerun with -seed %d\n",
			failure, c.dir, c.seed)
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
	// at after).
	afterMark bool
	after     time.Duration
}

func (p killPlan) String() string {
	switch {
	case p.early:
		return fmt.Sprintf("%v after start", p.after)
	case p.afterMark:
		return fmt.Sprintf("just after a flush/compaction call (within %v)", p.after)
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
	}
	return killPlan{after: d}
}

func dbDir(c *config) string   { return filepath.Join(c.dir, "db") }
func ackPath(c *config) string { return filepath.Join(c.dir, "ack.log") }
