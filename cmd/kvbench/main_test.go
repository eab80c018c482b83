package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// tiny makes any run finish in about a second: a few hundred keys in
// 8 KiB memtables still make a tree of several tables and levels; at
// -range_size 40, deleterange's 300/40 ranges fit, disjoint, in 400 keys.
var tiny = []string{"-num", "400", "-reads", "300", "-write_buffer_size", "8192",
	"-target_file_size_base", "4096", "-max_bytes_for_level_base", "16384", "-range_size", "40"}

func runArgs(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func TestBadUsageExits2(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"-bogus"},
		{"-num", "abc"},
		{"-num", "0"},
		{"-threads", "0"},
		{"-repeat", "0"},
		{"-batch_size", "0"},
		{"-range_tombstones", "-1"},
		{"-num", "10", "-range_tombstones", "11"},
		{"-open_files", "0"},
		{"-open_files", "-2"},
		{"-benchmarks", "readrandom,nope"},
		{"-benchmarks", ","},
		{"-bloom_bits", "5,x"},
		{"-bloom_bits", "-3"},
		{"-key_size", "3", "-num", "1000"},
		{"-prefix_size", "0"},
		{"-prefix_size", "17"},
		{"-benchmarks", "prefixmissing", "-prefix_size", "6"},
		{"-benchmarks", "prefixrandom", "-key_size", "8", "-num", "100"},
		{"-benchmarks", "prefixmissing,rangemissing"},
		{"-benchmarks", "rangemissing", "-key_size", "7"},
		{"-benchmarks", "rangerandom", "-range_size", "0"},
		{"-benchmarks", "deleterange", "-range_size", "0"},
		{"-benchmarks", "deleterange", "-range_size", "-5"},
		{"-benchmarks", "rangerandom", "-range_filter_bits", "2"},
		{"-range_filter_bits", "41"},
		{"-value_size", "-1"},
		{"-num", "1073741825"}, // past maxNum: the fill's permutation would not fit (it crashed the runtime)
		{"-use_existing_db"},
		{"-use_existing_db", "-db", dir, "-benchmarks", "fillseq"},
		{"-use_existing_db", "-db", dir, "-bloom_bits", "5,10"},
		{"-write_buffer_size", "10"},
		{"stray-argument-after-flags-is-a-subcommand"},
		{"-num", "10", "extra"},
		{"tree"},
		{"tree", "-db", dir, "extra"},
		{"explain", "-db", dir},
		{"explain", "-db", dir, "a", "b"},
		{"explain", "-nope"},
	} {
		code, stdout, stderr := runArgs(t, args...)
		if code != 2 {
			t.Errorf("run(%q) = %d, want 2; stderr:\n%s", args, code, stderr)
		}
		if !strings.Contains(stderr, "usage") {
			t.Errorf("run(%q): no usage on stderr:\n%s", args, stderr)
		}
		checkShortUsage(t, args, stderr)
		if stdout != "" {
			t.Errorf("run(%q) printed to stdout:\n%s", args, stdout)
		}
	}
}

func TestHelpExits0(t *testing.T) {
	code, _, stderr := runArgs(t, "-h")
	if code != 0 || !strings.Contains(stderr, "-bloom_bits") {
		t.Fatalf("run(-h) = %d, stderr:\n%s", code, stderr)
	}
}

func TestParseConfig(t *testing.T) {
	c, err := parseConfig([]string{"-benchmarks", "fillseq, readmissing", "-bloom_bits", "0,5,20",
		"-num", "1000", "-reads", "7", "-cache_size", "0", "-sync", "-json"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(c.benchmarks, []string{"fillseq", "readmissing"}) || !slices.Equal(c.bloomBits, []int{0, 5, 20}) ||
		c.num != 1000 || c.reads != 7 || c.deletes != 7 || c.cacheSize != 0 || !c.sync || !c.json || c.defaulted {
		t.Fatalf("parsed %+v", c)
	}
	d, err := parseConfig(nil, &bytes.Buffer{})
	if err != nil || !d.defaulted || strings.Join(d.benchmarks, ",") != defaultBenchmarks {
		t.Fatalf("defaults: %+v, %v", d, err)
	}
}

// A directory that holds something other than a monban DB is never
// deleted: the run fails (status 1) before touching it.
func TestRefusesForeignDirectory(t *testing.T) {
	dir := t.TempDir()
	precious := filepath.Join(dir, "thesis.tex")
	if err := os.WriteFile(precious, []byte("years of work"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runArgs(t, append([]string{"-db", dir, "-benchmarks", "fillseq"}, tiny...)...)
	if code != 1 || !strings.Contains(stderr, "refusing") {
		t.Fatalf("run = %d, stderr:\n%s", code, stderr)
	}
	if _, err := os.Stat(precious); err != nil {
		t.Fatal(err)
	}
}

func TestKeySpace(t *testing.T) {
	k := (&config{num: 50, keySize: 6}).keys()
	buf := make([]byte, 6)
	if got := string(k.key(buf, k.missing(21))); got != "000043" {
		t.Fatalf("missing(21) = %q", got)
	}
	prev := ""
	for i := range 50 {
		p, m := string(k.key(buf, k.present(i))), string(k.key(make([]byte, 6), k.missing(i)))
		if p <= prev || m <= p {
			t.Fatalf("keys out of order at %d: %q %q %q", i, prev, p, m)
		}
		prev = m
	}
}

// With -prefix_size 5 of 6-byte keys a prefix is ten numbers: the written
// keys fill the prefixes of even tens (the last one half) and the missing
// keys those of odd tens.
func TestKeySpacePrefixes(t *testing.T) {
	k := (&config{num: 25, keySize: 6, prefixSize: 5}).keys()
	key := func(n uint64) string { return string(k.key(make([]byte, 6), n)) }
	if got, want := k.runs(), 3; got != want {
		t.Fatalf("runs() = %d, want %d", got, want)
	}
	written := map[string]int{}
	for i := range k.num {
		written[key(k.present(i))[:5]]++
	}
	for j := range k.runs() {
		p, m := key(k.present(j * int(k.group)))[:5], key(k.missing(j * int(k.group)))[:5]
		if written[p] != k.inRun(j) || written[m] != 0 {
			t.Errorf("prefix %d: %q holds %d written keys, want %d; missing %q holds %d", j, p, written[p], k.inRun(j), m, written[m])
		}
	}
	if got := []int{k.inRun(0), k.inRun(2)}; got[0] != 10 || got[1] != 5 {
		t.Errorf("inRun(0), inRun(2) = %v, want [10 5]", got)
	}
}

// TestSubcommandUsage: every subcommand reports bad usage (missing -db,
// an unknown flag, wrong arguments) on stderr, prints nothing on stdout,
// and exits 2.
func TestSubcommandUsage(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"tree"}, {"tree", "-bogus"}, {"tree", "-db", dir, "extra"},
		{"explain"}, {"explain", "-bogus", "-db", dir, "k"}, {"explain", "-db", dir}, {"explain", "-db", dir, "a", "b"},
		{"repair"}, {"repair", "-bogus"}, {"repair", "-db", dir, "extra"},
		{"filters", "-db", dir}, {"filters", "-bogus"}, {"filters", "extra"}, {"filters", "-rel", "0"},
	} {
		code, stdout, stderr := runArgs(t, args...)
		if code != 2 || !strings.Contains(stderr, "usage: kvbench "+args[0]) || stdout != "" {
			t.Errorf("run(%q) = %d, want 2 with usage on stderr only; stdout:\n%s\nstderr:\n%s", args, code, stdout, stderr)
		}
		checkShortUsage(t, args, stderr)
	}
}

// TestCPUProfile: -cpuprofile leaves a profile of the run, gzip-compressed
// as runtime/pprof writes it; a path that cannot be created fails the run.
func TestCPUProfile(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "cpu.prof")
	code, _, stderr := runArgs(t, "-db", filepath.Join(dir, "db"), "-benchmarks", "fillrandom", "-num", "2000", "-compare=false", "-cpuprofile", prof)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Fatalf("profile of %d bytes does not start as gzip: % x", len(b), b[:min(len(b), 4)])
	}
	code, _, stderr = runArgs(t, "-db", filepath.Join(dir, "db2"), "-benchmarks", "fillrandom", "-num", "10", "-cpuprofile", filepath.Join(dir, "missing", "cpu.prof"))
	if code != 2 || !strings.Contains(stderr, "cpu.prof") || !strings.Contains(stderr, "kvbench -h") {
		t.Fatalf("unwritable profile: exit %d, stderr %q", code, stderr)
	}
}
