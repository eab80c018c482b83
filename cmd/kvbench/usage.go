package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"
)

// A command's usage comes in two sizes. kvbench -h (or CMD -h) prints it
// in full: the synopsis, then every flag, wrapped to width. A mistake
// prints the error and one line, the synopsis with a pointer to -h, so
// that the error is the first thing on the screen rather than 60 lines
// above it.

// parseFlags parses args into fs. On -h it prints head and every flag on
// stderr and returns flag.ErrHelp; on a bad flag, the error and the hint
// line (hint), returning the error wrapped in errUsage.
func parseFlags(fs *flag.FlagSet, args []string, stderr io.Writer, head string, hint func()) error {
	// Package flag would print its error and call Usage; it writes nowhere
	// and the two outcomes are printed here, where -h and a mistake differ.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	err := fs.Parse(args)
	if err == nil {
		err = nonFinite(fs)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stderr, head)
		printFlags(stderr, fs)
		return err
	}
	name := "kvbench"
	if fs.Name() != name {
		name += " " + fs.Name() // a subcommand's FlagSet is named after it
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	hint()
	return fmt.Errorf("%w: %w", errUsage, err)
}

// nonFinite refuses NaN and ±Inf in every float flag set on the command
// line, whatever the command: package flag takes them (strconv.ParseFloat
// does), and a range check written as x < lo || x > hi lets NaN through.
// The error reads as package flag's own for a value it cannot parse.
func nonFinite(fs *flag.FlagSet) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		g, ok := f.Value.(flag.Getter)
		if !ok || err != nil {
			return
		}
		if v, ok := g.Get().(float64); ok && (math.IsNaN(v) || math.IsInf(v, 0)) {
			err = fmt.Errorf("invalid value %q for flag -%s: not a finite number", f.Value.String(), f.Name)
		}
	})
	return err
}

// usageHint prints the one line that follows a usage error: the command's
// synopsis and where the flags are described. cmd is "" for the
// benchmarks, else the subcommand.
func usageHint(stderr io.Writer, cmd, synopsis string) {
	h := "kvbench -h"
	if cmd != "" {
		h = "kvbench " + cmd + " -h"
	}
	fmt.Fprintf(stderr, "usage: kvbench %s (%s for more)\n", synopsis, h)
}

// printFlags is flag.PrintDefaults with every line within width: a flag's
// name and type on one line, then its description and default, indented
// and wrapped.
func printFlags(w io.Writer, fs *flag.FlagSet) {
	const indent = "    "
	fs.VisitAll(func(f *flag.Flag) {
		typ, usage := flag.UnquoteUsage(f)
		line := "  -" + f.Name
		if typ != "" {
			line += " " + typ
		}
		if def := f.DefValue; def != "" && def != "0" && def != "false" {
			if typ == "string" {
				def = fmt.Sprintf("%q", def)
			}
			usage += " (default " + def + ")"
		}
		fmt.Fprintln(w, line)
		for _, l := range wrapWords(usage, width-len(indent)) {
			fmt.Fprintln(w, indent+l)
		}
	})
}

// wrapWords breaks s into lines of at most n runes at spaces; a word
// too long for the line it starts on (a comma-separated list) is broken
// after a comma.
func wrapWords(s string, n int) []string {
	var lines []string
	cur := ""
	for _, word := range strings.Fields(s) {
		for {
			room := n - utf8.RuneCountInString(cur)
			if cur != "" {
				room-- // the space before word
			}
			if utf8.RuneCountInString(word) <= room {
				break
			}
			if cut := lastComma(word, room); cut > 0 {
				if cur != "" {
					cur += " "
				}
				lines, cur, word = append(lines, cur+word[:cut+1]), "", word[cut+1:]
			} else if cur != "" {
				lines, cur = append(lines, cur), ""
			} else {
				break // nowhere to break: the line stays long
			}
		}
		if cur == "" {
			cur = word
		} else {
			cur += " " + word
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// lastComma is the byte index of the last comma among word's first room
// runes, or -1.
func lastComma(word string, room int) int {
	last := -1
	for i, r := range word {
		if utf8.RuneCountInString(word[:i]) >= room {
			break
		}
		if r == ',' {
			last = i
		}
	}
	return last
}
