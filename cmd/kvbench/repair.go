package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/monbandb/monban/lsm"
)

const repairUsage = "repair -db DIR [-force]"

// runRepair rebuilds the DB in -db with lsm.RepairWith and prints its
// report, also when the repair fails part way: what it set aside in lost/
// stays set aside.
func runRepair(args []string, stdout, stderr io.Writer) error {
	var ropts lsm.RepairOptions
	dir, rest, err := subFlags("repair", repairUsage, args, stderr, func(fs *flag.FlagSet) {
		fs.BoolVar(&ropts.Force, "force", false, "repair a directory none of whose files is in monban's format (another program's DB), setting them aside")
	})
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return badUsage(stderr, repairUsage, "repair: unexpected argument %q", rest[0])
	}
	rep, err := lsm.RepairWith(dir, nil, ropts)
	if rep != nil {
		fmt.Fprint(stdout, rep)
	}
	return err
}
