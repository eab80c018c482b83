package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/monbandb/monban/lsm"
)

// Undefined figures (an FPR no probe measured, a ratio over zero, a rate of
// no operations) are nil: n/a in text, null in JSON, never 0.

func ptr(x float64) *float64 { return &x }

// ratio is num/den, nil if den is 0.
func ratio(num, den uint64) *float64 {
	if den == 0 {
		return nil
	}
	return ptr(float64(num) / float64(den))
}

// perOp is n per operation, nil without operations.
func perOp(n uint64, ops int64) *float64 {
	if ops <= 0 {
		return nil
	}
	return ptr(float64(n) / float64(ops))
}

// levelFPR is lsm.LevelStats.FPR, nil when no probe could measure it
// (LevelStats.FPR returns 0 then).
func levelFPR(l lsm.LevelStats) *float64 {
	return ratio(l.FilterFalsePositives, l.FilterNegatives+l.FilterFalsePositives)
}

// fixed prints x with prec decimals, or n/a.
func fixed(prec int, x *float64) string {
	if x == nil {
		return "n/a"
	}
	return strconv.FormatFloat(*x, 'f', prec, 64)
}

// figure is fixed right-aligned in width columns, for db_bench's lines.
func figure(width, prec int, x *float64) string {
	return fmt.Sprintf("%*s", width, fixed(prec, x))
}

// pct prints the fraction x as a percentage with 4 decimals, or n/a.
func pct(x *float64) string { return pctN(4, x) }

func pctN(prec int, x *float64) string {
	if x == nil {
		return "n/a"
	}
	return fixed(prec, ptr(100**x))
}

// times prints a ratio as "2.27x", or n/a.
func times(x *float64) string { return withUnit(fixed(2, x), "x") }

func withUnit(s, unit string) string {
	if s == "n/a" {
		return s
	}
	return s + unit
}

// snake is name as a JSON key: lower case, every other rune an underscore
// ("bottom level" → "bottom_level", "p99.9" → "p99_9").
func snake(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z', '0' <= r && r <= '9':
			return r
		case 'A' <= r && r <= 'Z':
			return r - 'A' + 'a'
		}
		return '_'
	}, name)
}

func drops(m map[string]uint64) string {
	var parts []string
	for _, name := range dropReasons {
		parts = append(parts, fmt.Sprintf("%s %d", name, m[snake(name)]))
	}
	return strings.Join(parts, ", ")
}

// size prints a byte count the way the options are usually written.
func size(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func cacheSize(n int64) string {
	if n <= 0 {
		return "off"
	}
	return size(n)
}
