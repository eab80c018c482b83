package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
)

// Runs in processes of their own (-fresh). The harness runs its engines
// one after another in one process, so every run but the first starts at
// the memory the earlier ones left (Go returns freed heap to the system
// lazily): at 50M keys monban's second run started at 43 MiB, Pebble's
// first at 21, and the peak-RSS column compared unlike things. With
// -fresh each run is this program again, given that run's engine entry and
// -json, and its records are the run's.

// entry is r as an -engines entry that gives a child exactly r's options.
func (r runSpec) entry() string {
	e := fmt.Sprintf("%s:bits=%d:cache=%dB:memtable=%dB", r.engine, r.opts.BitsPerKey, r.opts.CacheBytes, r.opts.MemtableBytes)
	if r.opts.PinnedMeta != 0 {
		e += fmt.Sprintf(":pinned=%dB", r.opts.PinnedMeta)
	}
	return e
}

// childArgs are the flags this process was given, but for those the child
// gets its own values of.
func childArgs(r runSpec, workloads []string) []string {
	var args []string
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "engines", "fresh", "json", "bitsweep", "bits", "workloads":
			return
		}
		args = append(args, "-"+f.Name+"="+f.Value.String())
	})
	// The workloads as this process resolved them: -bitsweep, which the
	// child does not get, changes their default.
	return append(args, "-engines="+r.entry(), "-workloads="+strings.Join(append([]string{wFill}, workloads...), ","), "-json")
}

// child is the process of the -fresh run under way, if any: an interrupt
// is passed on to it, so that it removes its directories as this process
// does, before this one exits.
var child struct {
	sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited
}

// stopChild passes s on to the child under way and waits for it to exit.
func stopChild(s os.Signal) {
	child.Lock()
	cmd, done := child.cmd, child.done
	child.Unlock()
	if cmd == nil || cmd.Process.Signal(s) != nil {
		return
	}
	<-done
}

// runFresh runs r as run idx in a child process and returns the child's
// phase and run records, renumbered as run idx. The child's progress goes
// to this process's standard error.
func runFresh(idx int, r runSpec, workloads []string) ([]phaseResult, runResult, error) {
	cmd := exec.Command(os.Args[0], childArgs(r, workloads)...)
	cmd.Stderr = os.Stderr
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	err := cmd.Start()
	if err == nil {
		done := make(chan struct{})
		child.Lock()
		child.cmd, child.done = cmd, done
		child.Unlock()
		err = cmd.Wait()
		close(done)
		child.Lock()
		child.cmd = nil
		child.Unlock()
	}
	out := stdout.Bytes()
	var phases []phaseResult
	sum := runResult{Type: "run", Run: idx, Engine: r.engine, Bits: r.opts.BitsPerKey}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		switch rec.Type {
		case "phase":
			var p phaseResult
			if jerr := json.Unmarshal(sc.Bytes(), &p); jerr == nil {
				p.Run = idx
				phases = append(phases, p)
			}
		case "run":
			if jerr := json.Unmarshal(sc.Bytes(), &sum); jerr == nil {
				sum.Run = idx
			}
		}
	}
	if err != nil {
		return phases, sum, fmt.Errorf("run %d in a process of its own: %w", idx, err)
	}
	return phases, sum, nil
}
