package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// keyLayoutFile is the file kvbench writes into every DB it builds: the
// flags that fix which keys the DB holds (keySpace: -num, -key_size, and
// the runs -prefix_size or the range workloads' -range_size make). A
// -use_existing_db run takes from it each of those flags it was not given
// (adoptKeyLayout), and refuses given ones that ask for other keys
// (checkKeyLayout): its "missing" keys would be written ones, or lie
// outside every table where no filter is asked, and its deletes of absent
// keys would delete written ones, all without a word. monban leaves a
// file of no name of its own alone.
const keyLayoutFile = "KVBENCH-KEYS"

// keyLayout is the flags that give k, as a command line would.
func keyLayout(k keySpace) string {
	s := fmt.Sprintf("-num %d -key_size %d", k.num, k.keySize)
	switch {
	case k.bigEndian:
		s += fmt.Sprintf(" -range_size %d (range workloads)", k.group)
	case k.group > 1:
		s += fmt.Sprintf(" -prefix_size %d", k.keySize-digits(k.group)+1)
	}
	return s
}

// adoptKeyLayout sets, for a -use_existing_db run, each key-layout flag
// not given (set holds those given) to the value dir's KVBENCH-KEYS
// records; a DB without the file is left to checkKeyLayout.
func (c *config) adoptKeyLayout(dir string, set map[string]bool) error {
	b, err := os.ReadFile(filepath.Join(dir, keyLayoutFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return usageError("-use_existing_db: %w", err)
	}
	layout, ranges := strings.CutSuffix(strings.TrimSpace(string(b)), " (range workloads)")
	fs := flag.NewFlagSet(keyLayoutFile, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	recorded := map[string]*int{"num": new(int), "key_size": new(int), "prefix_size": new(int), "range_size": new(int)}
	for name, v := range recorded {
		fs.IntVar(v, name, 0, "")
	}
	if err := fs.Parse(strings.Fields(layout)); err != nil || fs.NArg() > 0 {
		return usageError("-use_existing_db: %s: %s holds %q, not kvbench's key flags", dir, keyLayoutFile, b)
	}
	fs.Visit(func(f *flag.Flag) {
		if set[f.Name] {
			return
		}
		switch f.Name {
		case "num":
			c.num = *recorded["num"]
		case "key_size":
			c.keySize = *recorded["key_size"]
		case "prefix_size":
			c.prefixSize = *recorded["prefix_size"]
		case "range_size":
			if ranges && c.scanRanges {
				c.rangeSize = *recorded["range_size"]
			}
		}
	})
	return nil
}

// writeKeyLayout records in dir the layout of the keys a run writes.
func writeKeyLayout(dir string, k keySpace) error {
	return os.WriteFile(filepath.Join(dir, keyLayoutFile), []byte(keyLayout(k)+"\n"), 0o644)
}

// checkKeyLayout refuses, as a usage error, a -use_existing_db run on dir
// whose keys are not k's. A DB without the file (built by a kvbench from
// before it) is judged by the flags alone, which warn says.
func checkKeyLayout(dir string, k keySpace, warn func(string)) error {
	b, err := os.ReadFile(filepath.Join(dir, keyLayoutFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		warn(fmt.Sprintf("%s holds no %s: its keys are taken to be those of %s", dir, keyLayoutFile, keyLayout(k)))
		return nil
	case err != nil:
		return err
	}
	if filled, asked := strings.TrimSpace(string(b)), keyLayout(k); filled != asked {
		return usageError("-use_existing_db: %s was filled with %s; this run's flags ask for %s: give the same", dir, filled, asked)
	}
	return nil
}
