package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	// The first Ctrl-C (or SIGTERM) stops the run, which removes its
	// temporary DB; a second one kills kvbench as usual.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() { <-ctx.Done(); stop() }()
	// A reader that went away (kvbench | head) stops the run too, and for
	// good: caught, SIGPIPE no longer kills kvbench at its next write to
	// the closed pipe, before it could remove its temporary DB; the write
	// fails instead.
	ctx, cancel := context.WithCancel(ctx)
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	go func() { <-pipe; cancel() }()
	os.Exit(runContext(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run is runContext without interruption.
func run(args []string, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdout, stderr)
}

// runContext is kvbench with its arguments and output streams, returning
// the exit status: 0 done, 1 a benchmark or subcommand failed, 2 bad usage,
// 130 interrupted (ctx done), as a shell reports a SIGINT.
func runContext(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := ""
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "":
		var c *config
		if c, err = parseConfig(args, stderr); err == nil {
			err = runBenchmarks(ctx, c, stdout, stderr)
		}
	case "filters":
		err = runFilters(ctx, args, stdout, stderr)
	case "tree":
		err = runTree(args, stdout, stderr)
	case "explain":
		err = runExplain(args, stdout, stderr)
	case "repair":
		err = runRepair(args, stdout, stderr)
	case "teach":
		err = runTeach(args, stdout, stderr)
	default:
		msg := fmt.Sprintf("unknown subcommand %q (want filters, tree, explain, repair or teach)", cmd)
		fmt.Fprintf(stderr, "kvbench: %s\n", msg)
		usageHint(stderr, "", "[flags] | CMD [flags]")
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.Is(err, errInterrupted):
		fmt.Fprintln(stderr, "kvbench: interrupted")
		return 130
	}
	name := "kvbench"
	if cmd != "" {
		name += " " + cmd
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	return 1
}
