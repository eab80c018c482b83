package raft

import (
	"bytes"
	"errors"
	"io"
	"syscall"
	"testing"

	hraft "github.com/hashicorp/raft"
	"github.com/monbandb/monban/lsm"
	"github.com/monbandb/monban/vfs"
)

// TestRestoreFailsAtEveryStep fails each file-system operation of a
// Restore in turn (one EIO, the disk healthy after it), where
// TestRestoreCrashAtEveryStep kills the disk. The node goes on after such
// an error, so the FSM must too: it holds the old state or the new one,
// whole, and says which by its applied index; an error not wrapping the
// EIO is a lie about the cause; it takes the next Apply, a retried Restore
// succeeds, and a reopen finds what the FSM last held and nothing else in
// its root.
func TestRestoreFailsAtEveryStep(t *testing.T) {
	src, want := sourceFSM(t)
	var snap bytes.Buffer
	persist(t, src, &snap)
	old := map[string]string{"mine": "before the restore"}
	restore := func(f *FSM) error { return f.Restore(io.NopCloser(bytes.NewReader(snap.Bytes()))) }
	var outcomes [2]int // old state, new state
	for n := int64(1); ; n++ {
		mem := vfs.NewMem()
		faulty := vfs.NewFault(mem)
		f := openFSM(t, "fsm", &lsm.Options{FS: faulty})
		apply(t, f, 1, PutCommand([]byte("mine"), []byte("before the restore")))
		faulty.Inject(vfs.Fault{Op: vfs.OpAny, Nth: n, Err: syscall.EIO})
		err := restore(f)
		fired := faulty.Injected() > 0
		faulty.Heal()
		if !fired {
			if err != nil {
				t.Fatalf("Restore without a fault: %v", err)
			}
			checkState(t, f, 302, want)
			t.Logf("%d operations failed in turn: %d left the old state, %d the new", n-1, outcomes[0], outcomes[1])
			if outcomes[0] == 0 || outcomes[1] == 0 {
				t.Fatal("a test that never sees both states proves little")
			}
			return
		}
		if err != nil && !errors.Is(err, syscall.EIO) {
			t.Fatalf("fault at operation %d: Restore: %v, not the disk's error", n, err)
		}
		var live string
		var applied uint64
		var st map[string]string
		switch f.AppliedIndex() {
		case 1:
			outcomes[0]++
			if err == nil {
				t.Fatalf("fault at operation %d: Restore returned nil and kept the old state", n)
			}
			checkState(t, f, 1, old)
			apply(t, f, 2, PutCommand([]byte("after"), []byte("x")))
			if err := restore(f); err != nil {
				t.Fatalf("fault at operation %d: the retried Restore: %v", n, err)
			}
			live, applied, st = "data-000002", 302, want
		case 302:
			after := &hraft.Log{Index: 303, Term: 1, Type: hraft.LogCommand, Data: PutCommand([]byte("after"), []byte("y"))}
			if r := f.Apply(after); r != nil {
				t.Fatalf("fault at operation %d: Apply after the restore: %v", n, r)
			}
			outcomes[1]++
			live, applied, st = "data-000002", 303, with(want, "after", "y")
		default:
			t.Fatalf("fault at operation %d: applied index %d, neither the old state's nor the snapshot's", n, f.AppliedIndex())
		}
		if got := f.AppliedIndex(); got != applied {
			t.Fatalf("fault at operation %d: applied index %d, want %d", n, got, applied)
		}
		_ = f.Close()
		g, err := OpenFSM("fsm", &lsm.Options{FS: mem})
		if err != nil {
			t.Fatalf("fault at operation %d: reopening: %v", n, err)
		}
		checkState(t, g, applied, st)
		checkRootHolds(t, mem, "fsm", live)
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// with returns a copy of m with k set to v.
func with(m map[string]string, k, v string) map[string]string {
	c := map[string]string{k: v}
	for mk, mv := range m {
		if mk != k {
			c[mk] = mv
		}
	}
	return c
}
