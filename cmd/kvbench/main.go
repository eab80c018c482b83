package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is kvbench with its arguments and output streams, returning the exit
// status: 0 done, 1 a benchmark or subcommand failed, 2 bad usage.
func run(args []string, stdout, stderr io.Writer) int {
	cmd := ""
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "":
		var c *config
		if c, err = parseConfig(args, stderr); err == nil {
			err = runBenchmarks(c, stdout, stderr)
		}
	case "filters":
		// The tables go to os.Stdout (filters.go); usage goes to stderr.
		err = runFilters(args, stderr)
	case "tree":
		err = runTree(args, stdout, stderr)
	case "explain":
		err = runExplain(args, stdout, stderr)
	case "repair":
		err = runRepair(args, stdout, stderr)
	default:
		err = usageError("unknown subcommand %q (want filters, tree, explain, repair, or flags)", cmd)
		fmt.Fprintf(stderr, "kvbench: %v\n", err)
		_, _ = parseConfig([]string{"-h"}, stderr)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	name := "kvbench"
	if cmd != "" {
		name += " " + cmd
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	return 1
}
