package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"sync"

	"github.com/monbandb/monban/lsm"
)

// Child exit codes, which the parent tells apart from its own SIGKILL.
const (
	exitChildError = 1 // the DB returned an error: Open, a write, a Flush
	exitCheckFail  = 3 // a read returned something the model forbids
	exitOrphaned   = 4 // the parent went away (stdin closed)
)

// writers is the number of writing goroutines per child. Four on two cores
// keep the commit queue busy enough to form write groups.
const writers = 4

// writerIDs is the number of writer ids a cycle uses: the writers', then
// the snapshot deleter's, whose writes are logged as a writer's are.
const writerIDs = writers + 1

// childConfig is what the parent passes to the child on its command line.
type childConfig struct {
	dir, log         string
	seed             uint64
	opts             optionSet
	keys             int
	minSize, maxSize int
	writerBase       uint64
	digest           string // of the state the parent verified last
	checkpoints      string // the directory of the checkpoints, ckpt/
	cycle            int    // in the checkpoints' names
}

func parseChildFlags(args []string, stderr io.Writer) (*childConfig, error) {
	c := &childConfig{}
	fs := flag.NewFlagSet("monban-stress -child", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Bool("child", true, "")
	fs.StringVar(&c.dir, "dir", "", "")
	fs.StringVar(&c.log, "log", "", "")
	fs.Uint64Var(&c.seed, "seed", 0, "")
	optsJSON := fs.String("options", "{}", "")
	fs.IntVar(&c.keys, "keys", 0, "")
	fs.IntVar(&c.minSize, "min-size", 0, "")
	fs.IntVar(&c.maxSize, "max-size", 0, "")
	fs.Uint64Var(&c.writerBase, "writer-base", 0, "")
	fs.StringVar(&c.digest, "expect-digest", "", "")
	fs.StringVar(&c.checkpoints, "checkpoints", "", "")
	fs.IntVar(&c.cycle, "cycle", 0, "")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(*optsJSON), &c.opts); err != nil {
		return nil, fmt.Errorf("-options: %w", err)
	}
	return c, nil
}

// child is one child process's workload. Every key has a lock, held from
// an op's "S" record to its "D" record and model update, so that per key
// the ack log's order is the commit order and at most one op per key is in
// flight at the kill (doc.go, invariant 2).
type child struct {
	cfg     *childConfig
	db      *lsm.DB
	log     *ackLog
	locks   []sync.Mutex
	model   [][]byte // model[k] is guarded by locks[k]; nil is absent
	stdoutM sync.Mutex
}

// runChild opens the DB and runs the workload until the parent kills it;
// it returns only on failure, with the exit code.
func runChild(args []string, stderr io.Writer) int {
	cfg, err := parseChildFlags(args, stderr)
	if err != nil {
		return 2
	}
	go func() {
		// Orphaned children would hold the directory lock forever.
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(exitOrphaned)
	}()
	c := &child{cfg: cfg}
	if c.log, err = openAckLog(cfg.log); err != nil {
		fmt.Fprintf(stderr, "monban-stress child: %v\n", err)
		return exitChildError
	}
	if c.db, err = lsm.Open(cfg.dir, cfg.opts.lsm()); err != nil {
		fmt.Fprintf(stderr, "monban-stress child: Open after a kill: %v\n", err)
		return exitChildError
	}
	n := checkedKeys(cfg.keys)
	s, problems, err := readState(c.db, n)
	if err != nil {
		fmt.Fprintf(stderr, "monban-stress child: reading the state at open: %v\n", err)
		return exitChildError
	}
	if got := digest(s, n); len(problems) > 0 || got != cfg.digest {
		fmt.Fprintf(stderr, "monban-stress child: check failed: state at open (digest %s) is not the one the parent verified (%s): %v\n", got, cfg.digest, problems)
		return exitCheckFail
	}
	c.locks = make([]sync.Mutex, n)
	c.model = make([][]byte, n)
	for k, v := range s {
		c.model[k] = v
	}
	c.mark("ready")
	for g := range writers {
		go c.writer(cfg.writerBase+uint64(g), c.rng(g))
	}
	go c.scanner(c.rng(writers))
	go c.snapshotter(c.rng(writers + 1))
	go c.maintainer(c.rng(writers + 2))
	go c.snapshotDeleter(cfg.writerBase+writers, c.rng(writers+3))
	go c.checkpointer(c.rng(writers + 4))
	select {}
}

func (c *child) rng(stream int) *rand.Rand {
	return rand.New(rand.NewPCG(c.cfg.seed, uint64(stream)))
}

// mark tells the parent, on stdout, what the child is about to do, so that
// it can time a kill to land inside a flush, compaction or checkpoint.
func (c *child) mark(what string) {
	c.stdoutM.Lock()
	defer c.stdoutM.Unlock()
	fmt.Fprintln(os.Stdout, what)
}

// dbError ends the child on an error from the DB: no call in the workload
// may fail.
func (c *child) dbError(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "monban-stress child: "+format+"\n", args...)
	os.Exit(exitChildError)
}

// checkFailed ends the child on a read that broke the model.
func (c *child) checkFailed(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "monban-stress child: check failed: "+format+"\n", args...)
	os.Exit(exitCheckFail)
}
