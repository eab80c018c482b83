package main

import (
	"context"
	"io"
	"testing"
)

// An absent prefix costs a data block only where a table's prefix filter
// errs, and every table ignoring its filter costs one; a present prefix
// yields its ten keys, filters or not. Without a block cache every block
// an iterator touches is a file read, which is what the figures count.
func TestPrefixFigures(t *testing.T) {
	lines := jsonRun(t, "-benchmarks", "fillrandom,prefixmissing,prefixrandom", "-cache_size", "0")
	if ps := num(lines[0], "prefix_size"); ps != 15 {
		t.Errorf("header prefix_size %v, want the default 15", ps)
	}
	checkScans(t, lines, "prefix", "prefixes", 10)
}

// checkScans checks the figures of the scan workloads kind+"missing" and
// kind+"random", whose filter figures are reads.<skips>: the missing runs
// yield no key, their filters (asked only with filters on) leave out at
// least 90% of what they are asked, and they read under a quarter of the
// data blocks they read with filters ignored, about one a table; the
// written runs yield perRun keys each, filters or not.
func checkScans(t *testing.T, lines []map[string]any, kind, skips string, perRun float64) {
	t.Helper()
	blocks := map[bool]float64{}
	for _, filters := range []bool{true, false} {
		m := results(lines, kind+"missing", filters)[0]
		if num(m, "found") != 0 {
			t.Errorf("%smissing (filters %v) found %v keys", kind, filters, m["found"])
		}
		blocks[filters] = num(m, "reads", "blocks_from_file_per_op")
		probes, skipped := num(m, "reads", skips, "probes"), num(m, "reads", skips, "skips")
		if filters && (probes == 0 || skipped < 0.9*probes) || !filters && probes != 0 {
			t.Errorf("%smissing (filters %v): %v %s probes, %v skips", kind, filters, probes, kind, skipped)
		}
		r := results(lines, kind+"random", filters)[0]
		if num(r, "found") != perRun*num(r, "ops") {
			t.Errorf("%srandom (filters %v) found %v keys in %v runs of %v", kind, filters, r["found"], r["ops"], perRun)
		}
	}
	if blocks[false] < 0.9 || blocks[true] > blocks[false]/4 {
		t.Errorf("%smissing: %v data blocks per iterator with filters, %v without; want under a quarter, and about one a table without",
			kind, blocks[true], blocks[false])
	}
}

// Without prefix workloads or -prefix_size, keys are not grouped and no
// Split is set: the default run's tables and filters are what they were.
func TestNoPrefixesUnasked(t *testing.T) {
	c, err := parseConfig([]string{"-benchmarks", "fillrandom,readmissing"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.prefixSize != 0 || c.split() != nil || c.keys().group != 1 {
		t.Errorf("prefix_size %d, split %v, group %d; want none", c.prefixSize, c.split(), c.keys().group)
	}
	if c, err = parseConfig([]string{"-benchmarks", "fillrandom", "-prefix_size", "14"}, io.Discard); err != nil {
		t.Fatal(err)
	}
	if s := c.split(); s == nil || s.Name != "kvbench.fixed14" || c.keys().group != 100 {
		t.Errorf("-prefix_size 14: split %v, group %d; want kvbench.fixed14 and 100", s, c.keys().group)
	}
}

// The table reads the iterator workloads count as data blocks are the
// blocks Stats counts for Gets, where both see them: a Get reads each
// block in one read, and nothing else reads a table file meanwhile.
func TestTableReadsCountBlocks(t *testing.T) {
	c, err := parseConfig(append(append([]string{}, tiny...), "-cache_size", "0", "-benchmarks", "fillrandom,readrandom"), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{ctx: context.Background(), cfg: c, setting: setting{bits: 10}, dir: t.TempDir(), keys: c.keys(),
		vals: newValueSource(c.valueSize, c.compressionRatio, c.seed), rep: newReporter(c, io.Discard), stderr: io.Discard}
	if err := b.open(); err != nil {
		t.Fatal(err)
	}
	defer b.db.Close()
	if _, err := b.fill("fillrandom", permutation(c.num, c.seed)); err != nil {
		t.Fatal(err)
	}
	w, err := b.startWindow(false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.runOps("readrandom", c.reads, b.getOp(b.keys.present)); err != nil {
		t.Fatal(err)
	}
	d := statsDiff(w.stats, b.db.Stats())
	if got := b.files.reads.Load() - w.tableReads - d.MetaBlocksRead; got != d.Total.BlocksRead || got == 0 {
		t.Errorf("table reads %d, Stats' blocks read %d", got, d.Total.BlocksRead)
	}
}
