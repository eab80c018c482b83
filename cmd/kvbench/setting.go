package main

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/monbandb/monban/lsm"
)

// A run sweeps settings: a DB is built for each combination of the
// -bloom_bits values and -filter_sizing and -filter_scope names, since
// filters are written with the tables (under the tree scope, with a
// key-hash block each, which the tree-wide filter is built from), and
// every workload runs on each.

// setting is what one DB of a run is built with.
type setting struct {
	bits   int // kvbench's bits per key, 0 meaning no filter
	sizing lsm.FilterSizing
	scope  lsm.FilterScope
}

// settingLabel names the setting a JSON line was measured at: every
// result, stats and summary line carries it.
type settingLabel struct {
	BloomBits int `json:"bloom_bits"`
	// FilterSizing is how the bits were spread over the tables:
	// lsm.FilterSizing's name, "uniform" or "per_level".
	FilterSizing string `json:"filter_sizing"`
	// FilterScope is which filters a lookup asked: scopeName's
	// "per_table" or "tree".
	FilterScope string `json:"filter_scope"`
}

func (s setting) label() settingLabel {
	return settingLabel{BloomBits: s.bits, FilterSizing: s.sizing.String(), FilterScope: scopeName(s.scope)}
}

// String names s in an error: "bloom_bits 10, filter_sizing uniform,
// filter_scope per_table".
func (s setting) String() string {
	return fmt.Sprintf("bloom_bits %d, filter_sizing %s, filter_scope %s", s.bits, s.sizing, scopeName(s.scope))
}

// settings lists the DBs a run builds, in the order it builds them: for
// each -bloom_bits value, each -filter_sizing and, innermost, each
// -filter_scope, so that the settings of one bits value run side by side.
func (c *config) settings() []setting {
	var out []setting
	for _, bits := range c.bloomBits {
		for _, sizing := range c.filterSizings {
			for _, scope := range c.filterScopes {
				out = append(out, setting{bits: bits, sizing: sizing, scope: scope})
			}
		}
	}
	return out
}

// settingDir names the DB directory of s under -db: bloom-10, after the
// sizing and the scope when several of them run: per_level-tree-bloom-10.
func (c *config) settingDir(s setting) string {
	dir := fmt.Sprintf("bloom-%02d", s.bits)
	if len(c.filterScopes) > 1 {
		dir = scopeName(s.scope) + "-" + dir
	}
	if len(c.filterSizings) > 1 {
		dir = s.sizing.String() + "-" + dir
	}
	return dir
}

// parseIntList parses -bloom_bits. A value listed twice is refused: its
// two DBs would share a directory and their results pool as repeats.
func parseIntList(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 || n > 64 {
			return nil, usageError("-bloom_bits: %q is not a bits-per-key value in 0..64", f)
		}
		if slices.Contains(out, n) {
			return nil, usageError("-bloom_bits: %d listed twice", n)
		}
		out = append(out, n)
	}
	return out, nil
}

// sizingMeaning holds the -filter_sizing values, named by their String,
// and says what each does, for the header.
var sizingMeaning = map[lsm.FilterSizing]string{
	lsm.FilterSizingUniform:  "every table the same bits per key",
	lsm.FilterSizingPerLevel: "each level its own bits per key (filter.AllocateBitsPerKey), the same memory in all",
}

// scopeMeaning holds the -filter_scope values, named by scopeName, and
// says what each does, for the header.
var scopeMeaning = map[lsm.FilterScope]string{
	lsm.PerTable: "a lookup asks the Bloom filter of each table it passes",
	lsm.TreeWide: "a lookup asks one tree-wide filter (lsm.TreeWide, experimental) which levels may hold its key, then the Bloom filters of those levels' tables only",
}

// scopeName is a -filter_scope value's name. lsm.FilterScope has no
// String: these names are kvbench's, snake_case like -filter_sizing's.
func scopeName(s lsm.FilterScope) string {
	switch s {
	case lsm.PerTable:
		return "per_table"
	case lsm.TreeWide:
		return "tree"
	}
	return fmt.Sprintf("FilterScope(%d)", s)
}

// parseNames parses the list flag named flagName whose values are the
// keys of meaning, each called by name; it refuses a name listed twice,
// as parseIntList does a value.
func parseNames[T cmp.Ordered](flagName, s string, meaning map[T]string, name func(T) string) ([]T, error) {
	known := slices.Sorted(maps.Keys(meaning))
	var out []T
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		i := slices.IndexFunc(known, func(v T) bool { return name(v) == f })
		switch {
		case i < 0:
			return nil, usageError("-%s: %q is neither %s", flagName, f, strings.Join(names(known, name), " nor "))
		case slices.Contains(out, known[i]):
			return nil, usageError("-%s: %s listed twice", flagName, f)
		}
		out = append(out, known[i])
	}
	return out, nil
}

// choices is a swept flag's line of the header: each value's name and
// what it does, and when there are several, that the DB is rebuilt for
// each (per: at which other values).
func choices[T comparable](vs []T, name func(T) string, meaning map[T]string, per string) string {
	var out []string
	for _, v := range vs {
		out = append(out, name(v)+": "+meaning[v])
	}
	if len(vs) > 1 {
		out = append(out, "the DB is rebuilt for each, "+per)
	}
	return strings.Join(out, "; ")
}

// names returns the names of vs, in order.
func names[T any](vs []T, name func(T) string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = name(v)
	}
	return out
}
