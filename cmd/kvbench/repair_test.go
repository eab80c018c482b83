package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/monbandb/monban/lsm"
)

// TestRepairSubcommand: repair -db rebuilds a DB whose CURRENT is gone and
// prints the report; the DB then opens with every key.
func TestRepairSubcommand(t *testing.T) {
	dir := t.TempDir()
	db, err := lsm.Open(dir, &lsm.Options{MemtableSize: 4 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if err := db.Put(fmt.Appendf(nil, "k%03d", i), []byte(strings.Repeat("v", 50))); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "CURRENT")); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runArgs(t, "repair", "-db", dir)
	if code != 0 || !strings.Contains(stdout, "200 keys") {
		t.Fatalf("repair = %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	db, err = lsm.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if v, err := db.Get([]byte("k199")); err != nil || len(v) != 50 {
		t.Fatalf("Get(k199) = %q, %v", v, err)
	}
}

func TestRepairBadUsage(t *testing.T) {
	for _, args := range [][]string{{"repair"}, {"repair", "-db", t.TempDir(), "extra"}} {
		if code, _, stderr := runArgs(t, args...); code != 2 || !strings.Contains(stderr, "usage") {
			t.Errorf("run(%q) = %d, want 2 with usage; stderr:\n%s", args, code, stderr)
		}
	}
}

// TestRepairForce: repair refuses a directory of another program's files,
// naming -force, and leaves them; with -force it sets them aside in lost/.
func TestRepairForce(t *testing.T) {
	dir := t.TempDir()
	foreign := map[string]string{"CURRENT": "MANIFEST-000000\n", "MANIFEST-000000": "not ours", "000001.log": "nor this"}
	for name, data := range foreign {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	code, stdout, stderr := runArgs(t, "repair", "-db", dir)
	if code == 0 || !strings.Contains(stderr, "not a monban DB") || !strings.Contains(stderr, "-force") {
		t.Fatalf("repair of a foreign directory = %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "000001.log")); err != nil || string(b) != foreign["000001.log"] {
		t.Fatalf("the refused repair touched 000001.log: %q, %v", b, err)
	}
	if code, stdout, stderr = runArgs(t, "repair", "-db", dir, "-force"); code != 0 || !strings.Contains(stdout, "not monban's, set aside (lost/000001.log)") {
		t.Fatalf("repair -force = %d, stdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "lost", "000001.log")); err != nil || string(b) != foreign["000001.log"] {
		t.Fatalf("lost/000001.log: %q, %v", b, err)
	}
}
