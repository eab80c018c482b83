package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// TestMain lets the test binary be its own child: the parent re-executes
// os.Executable with childEnv set, and the test flags would reject -child.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

var (
	summaryRE = regexp.MustCompile(`(?m)^cycles (\d+), acknowledged ops (\d+), keys verified (\d+), lost (\d+), unexpected (\d+)$`)
	repairRE  = regexp.MustCompile(`(?m)^repair: cycles (\d+), nothing to repair (\d+), keys compared (\d+), resurrected (\d+), lost (\d+), differing (\d+)$`)
	ckptRE    = regexp.MustCompile(`(?m)^checkpoints: verified (\d+), cut short: refused \d+, empty \d+, complete \d+$`)
)

// TestShortRun kills a child a dozen times (three with -short) with random
// option sets, in well under 40 s on two cores under -race, and wants the
// summary to show work done and nothing lost or unexpected, and Repair of
// a copy to have been checked after every kill that left a DB (a first
// cycle killed before its Open made one has nothing to repair) and to
// agree with Open on every key, and, in the long form, checkpoints to have
// been verified (a dozen cycles take a few each). It leaves -dir to the
// tool, which keeps the directory on failure (t.TempDir would not).
func TestShortRun(t *testing.T) {
	cycles := "12"
	if testing.Short() {
		cycles = "3"
	}
	var out, errs bytes.Buffer
	code := run([]string{"-cycles", cycles, "-keys", "500", "-kill-after", "150ms,700ms", "-repair"}, &out, &errs)
	t.Logf("stdout:\n%s", out.String())
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, errs.String())
	}
	m := summaryRE.FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no summary line in:\n%s", out.String())
	}
	n := func(i int) int { v, _ := strconv.Atoi(m[i]); return v }
	if n(1) == 0 || n(2) == 0 || n(3) == 0 {
		t.Errorf("summary %q: want cycles, acknowledged ops and keys verified above 0", m[0])
	}
	if n(4) != 0 || n(5) != 0 {
		t.Errorf("summary %q: want 0 lost and 0 unexpected", m[0])
	}
	r := repairRE.FindStringSubmatch(out.String())
	if r == nil {
		t.Fatalf("no repair summary line in:\n%s", out.String())
	}
	rn := func(i int) int { v, _ := strconv.Atoi(r[i]); return v }
	perCycle := checkedKeys(500)
	if n(3) != n(1)*perCycle || rn(1)+rn(2) != n(1) || rn(3) != rn(1)*perCycle {
		t.Errorf("%q after %q: want every cycle checked or with nothing to repair, and %d keys compared a cycle checked", r[0], m[0], perCycle)
	}
	if rn(4) != 0 || rn(5) != 0 || rn(6) != 0 {
		t.Errorf("%q: want 0 resurrected, 0 lost, 0 differing", r[0])
	}
	k := ckptRE.FindStringSubmatch(out.String())
	if k == nil || !testing.Short() && k[1] == "0" {
		t.Errorf("checkpoint summary %q: want checkpoints verified", k)
	}
}

// TestNewDir: -dir may name a directory that does not exist yet.
func TestNewDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new")
	var out, errs bytes.Buffer
	if code := run([]string{"-dir", dir, "-cycles", "1", "-keys", "100", "-kill-after", "50ms,100ms", "-repair=false"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d; stdout:\n%s\nstderr:\n%s", code, out.String(), errs.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "ack.log")); err != nil {
		t.Fatal(err)
	}
}

func TestBadUsageExits2(t *testing.T) {
	full := t.TempDir()
	os.WriteFile(full+"/x", nil, 0o644)
	for _, args := range [][]string{
		{"-bogus"},
		{"-options", "nope"},
		{"-value-size", "10"},
		{"-value-size", "20,10"},
		{"-kill-after", "1s,100ms"},
		{"-keys", "1"},
		{"-dir", full},
		{"extra"},
	} {
		var out, errs bytes.Buffer
		if code := run(args, &out, &errs); code != 2 || out.Len() != 0 {
			t.Errorf("run(%q) = %d, stdout %q; want 2 and nothing", args, code, out.String())
		}
	}
}

// TestKilledBeforeOpen: a first cycle whose kill comes before the child's
// Open has made the DB's directory verifies an empty DB and has nothing to
// repair, instead of failing to copy a directory that never existed (a CI
// run's early kill, 6.7 ms after the start, did).
func TestKilledBeforeOpen(t *testing.T) {
	c, err := parseConfig([]string{"-dir", t.TempDir(), "-keys", "50", "-repair"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cy := &cycle{cfg: c, n: 0, opts: tiny, seed: 1, plan: killPlan{early: true}}
	v, _, err := cy.run(state{})
	if err != nil {
		t.Fatalf("a kill before Open: %v", err)
	}
	if !v.ok() || cy.acked != 0 {
		t.Fatalf("a kill before Open: verdict %v, %d acknowledged", v, cy.acked)
	}
}
