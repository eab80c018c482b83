package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestMain lets TestInterruptRemovesTempDB run the test binary as kvbench.
func TestMain(m *testing.M) {
	if os.Getenv("KVBENCH_AS_MAIN") == "1" {
		os.Args = append(os.Args[:1], strings.Fields(os.Getenv("KVBENCH_ARGS"))...)
		main()
		return
	}
	os.Exit(m.Run())
}

// TestInterruptRemovesTempDB: SIGINT during a default-style run (temporary
// DB) stops the workload, removes the directory, and exits 130.
func TestInterruptRemovesTempDB(t *testing.T) {
	tmp := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	// Big enough to be still filling when the signal comes.
	cmd.Env = append(os.Environ(), "KVBENCH_AS_MAIN=1", "TMPDIR="+tmp,
		"KVBENCH_ARGS=-num 5000000 -benchmarks fillrandom,readrandom")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m, _ := filepath.Glob(filepath.Join(tmp, "kvbench-*", "*.log")); len(m) > 0 {
			break // the DB is open and being written
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no DB appeared in %s; stderr:\n%s", tmp, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("exit %d (%v), want 130; stderr:\n%s", code, err, stderr.String())
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "kvbench-*")); len(left) > 0 {
		t.Fatalf("temporary DB left behind: %v", left)
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Fatalf("stderr:\n%s", stderr.String())
	}
}

// A done context stops a run between workloads too.
func TestCancelledRunStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dir := filepath.Join(t.TempDir(), "db")
	var o, e strings.Builder
	if code := runContext(ctx, append([]string{"-db", dir}, tiny...), &o, &e); code != 130 {
		t.Fatalf("runContext = %d; stderr:\n%s", code, e.String())
	}
}

// TestBrokenPipeRemovesTempDB: a reader that goes away (kvbench | head)
// killed kvbench with SIGPIPE at its next write, leaving its temporary DB
// behind (a black-box attack). It must stop as if interrupted and remove
// the directory.
func TestBrokenPipeRemovesTempDB(t *testing.T) {
	tmp := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "KVBENCH_AS_MAIN=1", "TMPDIR="+tmp,
		// Long enough that the reader is gone before the run is done.
		"KVBENCH_ARGS=-num 200000 -reads 20000 -benchmarks fillrandom,readrandom,readmissing,readrandom,readmissing")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var first [1]byte
	if _, err := out.Read(first[:]); err != nil { // the header: the DB is made
		cmd.Process.Kill()
		t.Fatal(err)
	}
	out.Close()
	err = cmd.Wait()
	if left, _ := filepath.Glob(filepath.Join(tmp, "kvbench-*")); len(left) > 0 {
		t.Fatalf("temporary DB left behind: %v (%v)", left, err)
	}
}
