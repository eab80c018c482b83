package main

import (
	"fmt"
	"io"

	"github.com/monbandb/monban/lsm"
)

// runRepair rebuilds the DB in -db with lsm.Repair and prints its report,
// also when the repair fails part way: what it set aside in lost/ stays
// set aside.
func runRepair(args []string, stdout, stderr io.Writer) error {
	dir, rest, err := subFlags("repair", "repair -db DIR", args, stderr)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return badUsage(stderr, "repair -db DIR", "repair: unexpected argument %q", rest[0])
	}
	rep, err := lsm.Repair(dir, nil)
	if rep != nil {
		fmt.Fprint(stdout, rep)
	}
	return err
}
