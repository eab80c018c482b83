// Command kvbench measures what monban's filters save. Subcommands:
//
//	kvbench filters   the filter tables: designed against measured FPR
//
// With no subcommand it runs the default job, which until the DB workloads
// land is the filter tables.
package main

import (
	"fmt"
	"os"
)

func main() {
	args := os.Args[1:]
	cmd := "filters"
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "filters":
		err = runFilters(args)
	default:
		fmt.Fprintf(os.Stderr, "kvbench: unknown subcommand %q\nusage: kvbench [filters]\n", cmd)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "kvbench %s: %v\n", cmd, err)
		os.Exit(1)
	}
}
