package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/monbandb/monban/lsm"
)

// TestCheckCheckpoints gives the parent's check real checkpoint
// directories, as a kill could leave them, and a history naming them:
// 0-1 finished and right; 0-2 cut short with only its LOCK written; 0-3
// cut short before its CURRENT; 0-4 cut short after it; and 0-5, finished
// but taken after a put that started after its "K" line, which the check
// must fail and keep.
func TestCheckCheckpoints(t *testing.T) {
	c, err := parseConfig([]string{"-dir", t.TempDir(), "-keys", "50"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cy := &cycle{cfg: c, opts: tiny}
	db, err := lsm.Open(filepath.Join(t.TempDir(), "db"), tiny.lsm())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	put := func(seq uint64, size int) {
		if err := db.Put(keyName(0), value(0, 0, seq, size), nil); err != nil {
			t.Fatal(err)
		}
	}
	checkpoint := func(name string) string {
		dir := filepath.Join(checkpointsDir(c), name)
		if err := db.Checkpoint(dir); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	put(1, 30)
	checkpoint("0-1")
	if err := os.MkdirAll(filepath.Join(checkpointsDir(c), "0-2"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(checkpointsDir(c), "0-2", "LOCK"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(checkpoint("0-3"), "CURRENT")); err != nil {
		t.Fatal(err)
	}
	checkpoint("0-4")
	put(2, 40)
	checkpoint("0-5")

	ops, ckpts, err := readAckLog([]byte(`S 0 1 p0:30
D 0 1
C 1 0-1
K 1
C 2 0-2
C 3 0-3
C 4 0-4
C 5 0-5
K 5
S 0 2 p0:40
D 0 2
`))
	if err != nil {
		t.Fatal(err)
	}
	var v verdict
	if err := cy.checkCheckpoints(state{}, ops, ckpts, &v); err != nil {
		t.Fatal(err)
	}
	if want := (checkpointTotals{ckptVerified: 2, ckptRefused: 1, ckptEmpty: 1, ckptComplete: 1}); cy.checkpoints != want {
		t.Errorf("counted %+v, want %+v", cy.checkpoints, want)
	}
	if v.lost != 0 || v.unexpected != 1 || !strings.Contains(strings.Join(v.problems, "\n"), "checkpoint 0-5: unexpected: key 0: shows value of w0.s2") {
		t.Errorf("checkpoint 0-5 holds a put started after its end: lost %d, unexpected %d, %q", v.lost, v.unexpected, v.problems)
	}
	ents, err := os.ReadDir(checkpointsDir(c))
	if err != nil || len(ents) != 1 || ents[0].Name() != "0-5" {
		t.Errorf("ckpt/ holds %v (%v), want only the failing 0-5 kept", ents, err)
	}
}
