package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/monbandb/monban/filter"
)

// runFilters prints the filter tables of filter/README.md: the standard
// Bloom filter's design and overfill tables (seed 001), and the same tables
// for the cache-line filter against its own theory and the standard formula,
// and the quotient filter's FPR and probe lengths by load.
// Every rate is measured over enough absent keys that ±rel is -sigmas
// standard deviations wide.
//
// A rate p takes filter.QueriesFor(p, rel, sigmas) = sigmas²(1-p)/(rel²p)
// absent-key queries, and the smallest rate here (the standard layout at 20
// bits/key, 6.7e-5) about 1e8 at the defaults (8σ, ±10%: the whole run
// takes ~10 s). Hence the bounds on the flags. -sigmas at most 20: a
// deviation of 20σ has a probability below 1e-88, beyond anything a
// measurement needs (the tests use 4, the default is 8), and costs
// (20/8)² = 6.25 times the default run, about a minute; at 10^6 the
// queries overflowed int or ran for ages. -rel at least 1%: the rates are
// printed to 3 or 4 digits, and the cost grows as 1/rel², 100 times the
// default run at 1%. Even within the bounds (20σ at ±1%: ~6e10 queries for
// one rate, the best part of an hour) one measurement runs long, so each
// runs under ctx (interruptible): Ctrl-C stops the command at once.
func runFilters(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("filters", flag.ContinueOnError)
	sigmas := fs.Float64("sigmas", 8, "measure each rate to ±rel at this many standard deviations (the tests use 4); at most 20")
	rel := fs.Float64("rel", 0.10, "relative precision of each measured rate, in [0.01, 1)")
	seed := fs.Uint64("seed", 1, "key-set seed")
	hint := func() { usageHint(stderr, "filters", "filters [flags]") }
	if err := parseFlags(fs, args, stderr, "usage: kvbench filters [flags]\n", hint); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return badUsage(stderr, "filters [flags]", "filters: unexpected argument %q", fs.Arg(0))
	}
	// Written so that NaN fails them too (parseFlags refuses it first).
	if !(*sigmas > 0 && *sigmas <= maxSigmas) {
		return badUsage(stderr, "filters [flags]", "filters: -sigmas must be in (0, %g], not %g", float64(maxSigmas), *sigmas)
	}
	if !(*rel >= minRel && *rel < 1) {
		return badUsage(stderr, "filters [flags]", "filters: -rel must be in [%g, 1), not %g", minRel, *rel)
	}
	start := time.Now()
	w := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	queries := func(p float64) int { return filter.QueriesFor(p, *rel, *sigmas) }

	if err := designTable(ctx, w, queries, *seed); err != nil {
		return err
	}
	if err := overfillTable(ctx, w, queries, *seed); err != nil {
		return err
	}
	if err := cacheLineTable(ctx, w, *rel, *sigmas, *seed); err != nil {
		return err
	}
	if err := cacheLineOverfillTable(ctx, w, queries, *seed); err != nil {
		return err
	}
	if err := quotientTable(ctx, w, *seed); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "(%g-sigma, ±%.0f%% per rate; seed %d; %.1fs)\n", *sigmas, *rel*100, *seed, time.Since(start).Seconds())
	return nil
}

// maxSigmas and minRel bound -sigmas and -rel: see runFilters.
const (
	maxSigmas = 20
	minRel    = 0.01
)

// interruptible runs measure, one call into package filter, whose
// measuring loops take no context, in a goroutine of its own, and waits
// for it or for ctx to be done, whichever comes first. On ctx done it
// returns errInterrupted at once and leaves measure running on its own
// variables: kvbench exits (status 130) right after, which ends it.
func interruptible(ctx context.Context, measure func() error) error {
	if ctx.Err() != nil {
		return errInterrupted
	}
	done := make(chan error, 1)
	go func() { done <- measure() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return errInterrupted
	}
}

func designTable(ctx context.Context, w *tabwriter.Writer, queries func(float64) int, seed uint64) error {
	fmt.Fprintln(w, "Standard Bloom, n = 10,000 keys, sized by NewBloom(n, p):")
	fmt.Fprintln(w, "design p\tmeasured\ttheory\tbits/key\tk\tqueries\t")
	for _, p := range []float64{0.1, 0.01, 0.001, 0.0001} {
		var r filter.DesignRow
		err := interruptible(ctx, func() (err error) {
			r, err = filter.MeasureBloomDesign(10_000, p, queries(p), seed)
			return err
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%g\t%.4g\t%.4g\t%.1f\t%d\t%d\t\n", r.P, r.Measured, r.Theory, r.BitsPerKey, r.Hashes, r.Queries)
	}
	return flushBlank(w)
}

func overfillTable(ctx context.Context, w *tabwriter.Writer, queries func(float64) int, seed uint64) error {
	fmt.Fprintln(w, "Standard Bloom overfilled: designed for n = 1,000 at p = 0.01:")
	fmt.Fprintln(w, "added\tmeasured\tfill ratio\tEstimatedFPR\ttheory\tqueries\t")
	var rows []filter.OverfillRow
	err := interruptible(ctx, func() (err error) {
		rows, err = filter.MeasureBloomOverfill(1_000, 0.01, []int{1, 2, 3, 5}, queries(0.01), seed)
		return err
	})
	if err != nil {
		return err
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%d (%dx)\t%.4f\t%.3f\t%.4f\t%.4f\t%d\t\n", r.Added, r.Multiple, r.Measured, r.FillRatio, r.Estimated, r.Theory, r.Queries)
	}
	return flushBlank(w)
}

func cacheLineTable(ctx context.Context, w *tabwriter.Writer, rel, sigmas float64, seed uint64) error {
	fmt.Fprintln(w, "Cache-line Bloom vs standard layout at equal bits/key, n = 100,000 keys:")
	// Two header rows, the layouts above their columns, keep nine columns
	// within 80; three significant digits are finer than a rate's ±rel.
	fmt.Fprintln(w, "\t\tcache-line\t\t\tstandard\t\t   gap")
	fmt.Fprintln(w, "bits/key\tk\tmeasured\ttheory\tk\tmeasured\tformula\tmeasured\ttheory\t")
	for _, b := range []int{4, 6, 8, 10, 12, 16, 20} {
		var r filter.CacheLineRow
		err := interruptible(ctx, func() error {
			r = filter.MeasureCacheLine(100_000, b, rel, sigmas, seed)
			return nil
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "%d\t%d\t%.3g\t%.3g\t%d\t%.3g\t%.3g\t%.2fx\t%.2fx\t\n", r.BitsPerKey, r.Probes, r.Measured, r.Theory,
			r.StandardHashes, r.StandardMeasured, r.Standard, r.Measured/r.StandardMeasured, r.Theory/r.Standard)
	}
	return flushBlank(w)
}

func cacheLineOverfillTable(ctx context.Context, w *tabwriter.Writer, queries func(float64) int, seed uint64) error {
	fmt.Fprintln(w, "Cache-line Bloom overfilled: sized for n = 10,000 at 10 bits/key (6 probes):")
	fmt.Fprintln(w, "added\tmeasured\tfill ratio\tEstimatedFPR\tfill^k\ttheory\tqueries\t")
	var rows []filter.CacheLineOverfillRow
	err := interruptible(ctx, func() error {
		rows = filter.MeasureCacheLineOverfill(10_000, 10, []int{1, 2, 3, 5}, queries(0.01), seed)
		return nil
	})
	if err != nil {
		return err
	}
	for _, r := range rows {
		fmt.Fprintf(w, "%d (%dx)\t%.4f\t%.3f\t%.4f\t%.4f\t%.4f\t%d\t\n", r.Added, r.Multiple, r.Measured, r.FillRatio, r.Estimated, r.Naive, r.Theory, r.Queries)
	}
	return flushBlank(w)
}

// quotientTable measures the quotient filter the way its type doc does
// (go doc ./filter Quotient): 2^16 slots, 8-bit remainders, 10^6 absent
// keys per load.
func quotientTable(ctx context.Context, w *tabwriter.Writer, seed uint64) error {
	fmt.Fprintln(w, "Quotient filter, 2^16 slots, 8-bit remainders, 10^6 absent keys per load:")
	var rows []filter.QuotientRow
	err := interruptible(ctx, func() (err error) {
		rows, err = filter.MeasureQuotient(16, 8, []float64{0.5, 0.75, 0.9, 0.95}, 1_000_000, seed)
		return err
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(w, "load\tmeasured\ttheory\tratio\tremainders compared\tcluster span\t")
	for _, r := range rows {
		fmt.Fprintf(w, "%.0f%%\t%.5f\t%.5f\t%.3f\t%.2f\t%.2f\t\n", 100*r.Load, r.FPR, r.TheoryFPR, r.FPR/r.TheoryFPR, r.RunScan, r.ClusterSpan)
	}
	return flushBlank(w)
}

// flushBlank ends a table with a blank line, which goes through the
// tabwriter, so it reaches w's destination after the table.
func flushBlank(w *tabwriter.Writer) error {
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	return w.Flush()
}
