package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"

	"github.com/monbandb/monban/lsm"
)

// cycle is one child's life: start it on the DB, kill it, verify.
type cycle struct {
	cfg         *config
	n           int
	opts        optionSet
	seed        uint64
	plan        killPlan
	acked       int // ops the child logged as done
	inFlight    int // ops it logged as started and not done
	checkpoints checkpointTotals
	repair      repairVerdict
}

// run executes the cycle from base, the state the previous cycle verified.
// A non-nil error is a failure that is no verdict on the data: Open
// failing after the kill, a read failing, the child dying on its own.
// With -repair it also checks Repair, into cy.repair.
func (cy *cycle) run(base state) (verdict, state, error) {
	c := cy.cfg
	keys := checkedKeys(c.keys)
	if err := os.WriteFile(ackPath(c), nil, 0o644); err != nil {
		return verdict{}, nil, err
	}
	if err := cy.runChild(digest(base, keys)); err != nil {
		return verdict{}, nil, err
	}
	return cy.check(base)
}

// check verifies what the kill left in the directory, the ack log and db/,
// against base: steps 4 and 5 of doc.go's cycle.
func (cy *cycle) check(base state) (verdict, state, error) {
	c := cy.cfg
	keys := checkedKeys(c.keys)
	data, err := os.ReadFile(ackPath(c))
	if err != nil {
		return verdict{}, nil, err
	}
	ops, ckpts, err := readAckLog(data)
	if err != nil {
		return verdict{}, nil, err
	}
	for _, o := range ops {
		if o.acked > 0 {
			cy.acked++
		} else {
			cy.inFlight++
		}
	}
	if c.repair {
		switch err := copyKilled(c); {
		case cy.n == 0 && errors.Is(err, fs.ErrNotExist):
			// Killed before its Open made the DB's directory: nothing was
			// written, and Repair rightly refuses a directory that was
			// never a DB. A later cycle's missing directory is a loss.
			cy.repair.nothing = true
		case err != nil:
			return verdict{}, nil, fmt.Errorf("copying the killed DB: %w", err)
		}
	}
	db, err := lsm.Open(dbDir(c), cy.opts.lsm())
	if err != nil {
		return verdict{}, nil, fmt.Errorf("Open after SIGKILL: %w", err)
	}
	got, problems, err := readAndClose(db, keys)
	if err != nil {
		return verdict{}, nil, err
	}
	v, next := verify(base, ops, got, keys, cy.writerBase())
	for _, p := range problems {
		v.fail(false, "%s", p)
	}
	if err := cy.checkCheckpoints(base, ops, ckpts, &v); err != nil {
		return v, next, err
	}
	if c.repair && !cy.repair.nothing {
		if cy.repair, err = cy.checkRepair(got, keys); err != nil {
			return v, next, err
		}
	}
	return v, next, nil
}

// writerBase is the cycle's first writer id; writers ids never repeat, so
// a value names the cycle that wrote it.
func (cy *cycle) writerBase() uint64 { return uint64(cy.n) * writerIDs }

// runChild starts the child, kills it as the plan says and waits for it.
func (cy *cycle) runChild(digest string) error {
	c := cy.cfg
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, "-child", "-dir", dbDir(c), "-log", ackPath(c),
		"-seed", strconv.FormatUint(cy.seed, 10), "-options", cy.opts.String(),
		"-keys", strconv.Itoa(c.keys), "-min-size", strconv.Itoa(c.minSize), "-max-size", strconv.Itoa(c.maxSize),
		"-writer-base", strconv.FormatUint(cy.writerBase(), 10), "-expect-digest", digest,
		"-checkpoints", checkpointsDir(c), "-cycle", strconv.Itoa(cy.n))
	cmd.Env = append(os.Environ(), childEnv+"=1")
	marks := newMarkWatcher()
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = marks, &stderr
	stdin, err := cmd.StdinPipe() // closed after the kill; the child exits if it sees EOF
	if err != nil {
		return err
	}
	defer stdin.Close()
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	err = cy.waitForKill(marks, exited)
	if err == nil {
		if err = cmd.Process.Kill(); err == nil {
			<-exited
			return nil
		}
		if !errors.Is(err, os.ErrProcessDone) {
			return fmt.Errorf("kill: %w", err)
		}
		err = <-exited // it ended on its own just before the kill
	}
	if cmd.ProcessState.ExitCode() == exitCheckFail {
		return fmt.Errorf("%w: %s", errChildCheck, bytes.TrimSpace(stderr.Bytes()))
	}
	return fmt.Errorf("child exited before the kill (%v): %s", err, bytes.TrimSpace(stderr.Bytes()))
}

// errChildCheck is a failed check inside the child: a read that returned
// what the model forbids.
var errChildCheck = errors.New("a check in the child failed")

// waitForKill returns when the plan says to kill, or with an error if the
// child exits first.
func (cy *cycle) waitForKill(marks *markWatcher, exited <-chan error) error {
	wait := func(ch <-chan struct{}, d time.Duration) error {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ch:
		case <-t.C:
		case err := <-exited:
			return fmt.Errorf("exit: %v", err) // Wait has returned: ProcessState is set
		}
		return nil
	}
	p := cy.plan
	if p.early {
		return wait(nil, p.after)
	}
	// Recovery of a large WAL under -race takes seconds; a child that is not
	// ready in a minute is stuck.
	if err := wait(marks.ready, time.Minute); err != nil {
		return err
	}
	mark := marks.mark
	switch {
	case p.afterCheckpoint:
		mark = marks.checkpoint
	case !p.afterMark:
		return wait(nil, p.after)
	}
	if err := wait(mark, p.after); err != nil {
		return err
	}
	return wait(nil, time.Duration(cy.seed%uint64(10*time.Millisecond)))
}

// markWatcher reads the child's stdout: "ready" once the DB is open and
// verified, then "flush", "compact" or "checkpoint" before each such call.
type markWatcher struct {
	mu         sync.Mutex
	partial    []byte
	ready      chan struct{}
	mark       chan struct{} // signalled (not closed) on each flush or compaction
	checkpoint chan struct{} // signalled on each checkpoint
	isReady    bool
}

func newMarkWatcher() *markWatcher {
	return &markWatcher{ready: make(chan struct{}), mark: make(chan struct{}, 1), checkpoint: make(chan struct{}, 1)}
}

func (m *markWatcher) Write(p []byte) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.partial = append(m.partial, p...)
	for {
		line, rest, ok := bytes.Cut(m.partial, []byte("\n"))
		if !ok {
			return len(p), nil
		}
		switch string(line) {
		case "ready":
			if !m.isReady {
				m.isReady = true
				close(m.ready)
			}
		case "flush", "compact":
			signal(m.mark)
		case "checkpoint":
			signal(m.checkpoint)
		}
		m.partial = append(m.partial[:0], rest...)
	}
}

// signal wakes a waiter on ch, or none if one is pending already.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}
