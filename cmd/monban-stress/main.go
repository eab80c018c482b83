package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// childEnv marks a process as a child for binaries whose own flag parsing
// would reject -child: the test binary, whose TestMain looks for it.
const childEnv = "MONBAN_STRESS_CHILD"

// run is monban-stress with its arguments and output streams, returning the
// exit status: 0 nothing lost and nothing unexpected, 1 a failure (the
// directory is kept), 2 bad usage. With -child first it is the child.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "-child" {
		return runChild(args[1:], stderr)
	}
	c, err := parseConfig(args, stderr)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return 0
	case err != nil:
		fmt.Fprintf(stderr, "monban-stress: %v\n", err)
		return 2
	}
	return stress(c, stdout, stderr)
}

// config is the parent's flags.
type config struct {
	cycles           int
	duration         time.Duration
	dir              string // "" until stress makes a temporary one
	keys             int
	minSize, maxSize int
	options          string
	seed             uint64
	verbose          bool
	killMin, killMax time.Duration
	repair           bool
}

// defaultCycles is the run's length when neither -cycles nor -duration
// bounds it.
const defaultCycles = 20

func parseConfig(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("monban-stress", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.IntVar(&c.cycles, "cycles", 0, fmt.Sprintf("stop after this many kill cycles (0: no limit; with no -duration either, %d)", defaultCycles))
	fs.DurationVar(&c.duration, "duration", 0, "stop starting cycles after this long (0: no limit)")
	fs.StringVar(&c.dir, "dir", "", "an empty or new directory for the DB and the ack log, kept (default: a temporary one, removed unless the run fails)")
	fs.IntVar(&c.keys, "keys", 2000, "size of the key space the workload writes")
	sizes := fs.String("value-size", "16,256", "value sizes in bytes: min,max")
	fs.StringVar(&c.options, "options", "random", "option set: random (a new one per cycle), default, tiny, sync, nofilters, fewfiles, paged, rangefilter, treewide")
	fs.Uint64Var(&c.seed, "seed", 0, "seed of every random choice (0: pick one and print it)")
	fs.BoolVar(&c.verbose, "v", false, "print a line per cycle")
	kill := fs.String("kill-after", "200ms,3s", "how long a child runs before SIGKILL: min,max")
	fs.BoolVar(&c.repair, "repair", true, "after each kill, also Repair a copy of the DB and check it holds exactly what Open of the DB holds")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: monban-stress [flags]\n\nKills a process running a random workload on a DB, reopens the DB\nand checks every acknowledged write survived, and that Repair of a\ncopy holds the same. Flags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	var err error
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if c.minSize, c.maxSize, err = parsePair(*sizes, strconv.Atoi); err != nil || c.minSize < 0 || c.minSize > c.maxSize {
		return nil, fmt.Errorf("-value-size %q: want min,max with 0 <= min <= max", *sizes)
	}
	if c.killMin, c.killMax, err = parsePair(*kill, time.ParseDuration); err != nil || c.killMin <= 0 || c.killMin > c.killMax {
		return nil, fmt.Errorf("-kill-after %q: want min,max durations with 0 < min <= max", *kill)
	}
	if c.keys < 8 || c.cycles < 0 || c.duration < 0 {
		return nil, fmt.Errorf("-keys must be at least 8, -cycles and -duration not negative")
	}
	if _, err := optionChooser(c.options); err != nil {
		return nil, err
	}
	if c.dir != "" {
		if ents, err := os.ReadDir(c.dir); err == nil && len(ents) > 0 {
			return nil, fmt.Errorf("-dir %s is not empty: the run must know everything ever written there", c.dir)
		}
	}
	if c.cycles == 0 && c.duration == 0 {
		c.cycles = defaultCycles
	}
	if c.seed == 0 {
		c.seed = rand.Uint64()>>1 + 1
	}
	return c, nil
}

func parsePair[T any](s string, parse func(string) (T, error)) (lo, hi T, err error) {
	a, b, ok := strings.Cut(s, ",")
	if !ok {
		return lo, hi, fmt.Errorf("want two values")
	}
	if lo, err = parse(a); err != nil {
		return lo, hi, err
	}
	hi, err = parse(b)
	return lo, hi, err
}
