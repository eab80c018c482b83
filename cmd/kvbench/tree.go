package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	"github.com/monbandb/monban/lsm"
)

// openExisting opens the DB in dir for the inspection subcommands: read
// only, so looking changes nothing (no new manifest or WAL, no flush) and
// no DB is created where there is none; with scope TreeWide, Open builds
// the tree-wide filter from the tables' key-hash blocks.
func openExisting(dir string, scope lsm.FilterScope) (*lsm.DB, error) {
	db, err := lsm.Open(dir, &lsm.Options{ReadOnly: true, FilterScope: scope})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no monban DB here: %w", dir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return db, nil
}

// subFlags parses -db for tree and explain; positional arguments are
// returned.
func subFlags(name, usage string, args []string, stderr io.Writer, more ...func(*flag.FlagSet)) (dir string, rest []string, err error) {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	db := fs.String("db", "", "DB directory (required)")
	for _, define := range more {
		define(fs)
	}
	hint := func() { usageHint(stderr, name, usage) }
	if err := parseFlags(fs, args, stderr, "usage: kvbench "+usage+"\n", hint); err != nil {
		return "", nil, err
	}
	if *db == "" {
		// Flags end at the first argument that is none: a -db after KEY
		// is taken for an argument.
		msg := "-db is required"
		if slices.ContainsFunc(fs.Args(), func(a string) bool { return strings.HasPrefix(a, "-db") }) {
			msg += " before the other arguments (flags end at the first that is none)"
		}
		fmt.Fprintf(stderr, "kvbench %s: %s\n", name, msg)
		hint()
		return "", nil, usageError("%s", msg)
	}
	return *db, fs.Args(), nil
}

// badUsage prints "kvbench MSG" and the subcommand's usage line on stderr
// and returns MSG wrapping errUsage (exit status 2). usage begins with the
// subcommand's name.
func badUsage(stderr io.Writer, usage, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	fmt.Fprintf(stderr, "kvbench %s\n", msg)
	cmd, _, _ := strings.Cut(usage, " ")
	usageHint(stderr, cmd, usage)
	return usageError("%s", msg)
}

// runTree prints the tree's shape: per level, its tables with their sizes,
// entry counts, key ranges and filters; and, when the tables carry key-hash
// blocks (written under -filter_scope tree), the tree-wide filter Open
// builds from them.
func runTree(args []string, stdout, stderr io.Writer) error {
	dir, rest, err := subFlags("tree", "tree -db DIR", args, stderr)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return badUsage(stderr, "tree -db DIR", "tree: unexpected argument %q", rest[0])
	}
	db, err := openExisting(dir, lsm.TreeWide)
	if err != nil {
		return err
	}
	tables, err := db.Tables()
	// Open builds the tree-wide filter in the background: until it is
	// built, and when no table has a key-hash block, it has no entries.
	treeFilterBuilt(context.Background(), db)
	stats := db.Stats()
	if err = errors.Join(err, db.Close()); err != nil {
		return err
	}
	// Each table takes two lines, its key range under its figures, to fit
	// 80 columns; fixed widths rather than tabwriter, which would pad the
	// last column with spaces.
	ww := &wrapWriter{w: stdout}
	fmt.Fprintf(ww, "%s: %d tables, %s\n", dir, stats.Total.Files, size(int64(stats.Total.Bytes)))
	if stats.TreeFilterEntries > 0 {
		fmt.Fprintf(ww, "tree-wide filter (-filter_scope tree): %d entries from the tables' key-hash blocks, %s (%s bits/entry)\n",
			stats.TreeFilterEntries, size(int64(stats.TreeFilterBytes)), fixed(2, treeBitsPerEntry(stats)))
	}
	level := -1
	for _, t := range tables {
		if t.Level != level {
			level = t.Level
			l := stats.Levels[level]
			fmt.Fprintf(ww, "L%-6d %d tables, %s\n", level, l.Files, size(int64(l.Bytes)))
		}
		filterDesc := "no filter"
		switch {
		case t.FilterBitsPerKey < 0:
			filterDesc = "filter: table not readable"
		case t.FilterBitsPerKey > 0:
			filterDesc = fmt.Sprintf("bloom %.4g bits/key, %s", t.FilterBitsPerKey, size(t.FilterBytes))
		}
		fmt.Fprintf(ww, "  %06d.sst %-9s %-29s %s\n", t.FileNum, size(int64(t.Size)),
			fmt.Sprintf("%d entries, %d tombstones", t.Entries, t.Tombstones), filterDesc)
		fmt.Fprintf(ww, "             [%s .. %s]\n", shortKey(t.Smallest), shortKey(t.Largest))
	}
	return ww.Flush()
}

// shortKey quotes k, and past 24 bytes only as much of its head and tail
// as quotes in 16 columns each, and its length: a key range is a table's
// summary, and two long keys, quoted whole, would take lines of their own.
func shortKey(k []byte) string {
	if len(k) <= 24 {
		return fmt.Sprintf("%q", k)
	}
	head, tail := 1, 1
	for len(fmt.Sprintf("%q", k[:head+1])) <= 16 {
		head++
	}
	for len(fmt.Sprintf("%q", k[len(k)-tail-1:])) <= 16 {
		tail++
	}
	return fmt.Sprintf("%q…%q (%d bytes)", k[:head], k[len(k)-tail:], len(k))
}

// runExplain prints the read path of one key.
func runExplain(args []string, stdout, stderr io.Writer) error {
	dir, rest, err := subFlags("explain", "explain -db DIR KEY", args, stderr)
	if err != nil {
		return err
	}
	if len(rest) != 1 {
		return badUsage(stderr, "explain -db DIR KEY", "explain: want exactly one KEY, got %d arguments", len(rest))
	}
	db, err := openExisting(dir, lsm.PerTable)
	if err != nil {
		return err
	}
	tr, err := db.Explain([]byte(rest[0]))
	if err = errors.Join(err, db.Close()); err != nil {
		return err
	}
	ww := &wrapWriter{w: stdout}
	_, err = io.WriteString(ww, tr.String())
	return errors.Join(err, ww.Flush())
}
