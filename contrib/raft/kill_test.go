package raft

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	hraft "github.com/hashicorp/raft"
)

// killChildEnv names the directory a child process of TestKilledWriter
// writes in; set, the test is the child.
const killChildEnv = "MONBAN_RAFT_KILL_CHILD"

// TestKilledWriter runs a child process that appends to a Store and
// applies the same entries to an FSM, printing each index StoreLogs
// acknowledged, and SIGKILLs it mid-stream. The directories must reopen
// (the locks died with the process), hold every acknowledged entry and a
// contiguous log, and the FSM a state no further than the log.
func TestKilledWriter(t *testing.T) {
	if dir := os.Getenv(killChildEnv); dir != "" {
		killChild(dir)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriter$")
	cmd.Env = append(os.Environ(), killChildEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked uint64
	lines := bufio.NewScanner(out)
	for acked < 2000 && lines.Scan() {
		if acked, err = strconv.ParseUint(lines.Text(), 10, 64); err != nil {
			t.Fatalf("child printed %q", lines.Text())
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait() // killed: its error says so
	if acked < 2000 {
		t.Fatalf("the child acknowledged %d entries before it stopped printing", acked)
	}

	s := openStore(t, filepath.Join(dir, "log"), nil)
	first, _ := s.FirstIndex()
	last, _ := s.LastIndex()
	if first != 1 || last < acked {
		t.Fatalf("after the kill the log is [%d, %d]; %d entries were acknowledged", first, last, acked)
	}
	for i := first; i <= last; i++ {
		var l hraft.Log
		if err := s.GetLog(i, &l); err != nil || string(l.Data) != string(PutCommand(fmt.Append(nil, i%100), fmt.Append(nil, i))) {
			t.Fatalf("entry %d: %q, %v", i, l.Data, err)
		}
	}
	f := openFSM(t, filepath.Join(dir, "fsm"), nil)
	if f.AppliedIndex() > last {
		t.Fatalf("the FSM applied up to %d, the log ends at %d", f.AppliedIndex(), last)
	}
	t.Logf("killed after %d acknowledged entries: the log holds %d, the FSM applied %d", acked, last, f.AppliedIndex())
}

// killChild appends batches of 8 entries until it is killed, applying
// each batch to the FSM once it is stored.
func killChild(dir string) {
	s, err := Open(filepath.Join(dir, "log"), nil)
	if err != nil {
		die(err)
	}
	f, err := OpenFSM(filepath.Join(dir, "fsm"), nil)
	if err != nil {
		die(err)
	}
	w := bufio.NewWriter(os.Stdout)
	for next := uint64(1); ; {
		logs := make([]*hraft.Log, 8)
		for i := range logs {
			logs[i] = &hraft.Log{Index: next, Term: 1, Type: hraft.LogCommand,
				Data: PutCommand(fmt.Append(nil, next%100), fmt.Append(nil, next))}
			next++
		}
		if err := s.StoreLogs(logs); err != nil {
			die(err)
		}
		fmt.Fprintln(w, next-1)
		w.Flush()
		for _, r := range f.ApplyBatch(logs) {
			if r != nil {
				die(r)
			}
		}
	}
}

// die ends the child; the parent sees it stop printing too soon.
func die(v any) {
	fmt.Fprintln(os.Stderr, v)
	os.Exit(1)
}
