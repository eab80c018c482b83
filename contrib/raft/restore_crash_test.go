package raft

import (
	"bytes"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/monbandb/monban/lsm"
	"github.com/monbandb/monban/vfs"
)

// TestRestoreCrashAtEveryStep crashes the machine at each file-system
// operation of a Restore in turn — the disk dies at the nth operation,
// and what was synced by then, with none, half or all of the directory
// changes not synced, is what the next OpenFSM finds — and checks
// that the FSM comes back with the state before the restore or the one
// after, whole, and nothing else in its root.
func TestRestoreCrashAtEveryStep(t *testing.T) {
	src, want := sourceFSM(t)
	var snap bytes.Buffer
	persist(t, src, &snap)
	old := map[string]string{"mine": "before the restore"}
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 0))
	var outcomes [2]int // old state, new state
	for n := int64(1); ; n++ {
		mem := vfs.NewMem()
		faulty := vfs.NewFault(mem)
		f, err := OpenFSM("fsm", &lsm.Options{FS: faulty})
		if err != nil {
			t.Fatal(err)
		}
		apply(t, f, 1, PutCommand([]byte("mine"), []byte("before the restore")))
		// Closed and reopened, so that the old state is durable: Apply
		// does not sync.
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if f, err = OpenFSM("fsm", &lsm.Options{FS: faulty}); err != nil {
			t.Fatal(err)
		}
		faulty.Inject(vfs.Fault{Op: vfs.OpAny, Nth: n, Sticky: true})
		err = f.Restore(io.NopCloser(bytes.NewReader(snap.Bytes())))
		if faulty.Injected() == 0 {
			// The restore ended before its nth operation: every step
			// has had its crash.
			if err != nil {
				t.Fatalf("Restore without a fault: %v", err)
			}
			faulty.Heal()
			checkState(t, f, 302, want)
			break
		}
		if err == nil {
			// The rename of LIVE happened before the disk died: only the
			// removal of the old directory can have failed, and that is
			// not reported. Anything else must be.
			t.Logf("crash at operation %d: Restore returned nil", n)
		}
		// The crash keeps none, half or all of the directory changes no
		// SyncDir made durable, in any order (vfs.MemFS.CrashCloneKeeping).
		for _, p := range []float64{0, 0.5, 1} {
			g, err := OpenFSM("fsm", &lsm.Options{FS: mem.CrashCloneKeeping(func(int) bool { return rng.Float64() < p })})
			if err != nil {
				t.Fatalf("seed %d: crash at operation %d, keeping %v of the unsynced directory changes: reopening: %v", seed, n, p, err)
			}
			switch g.AppliedIndex() {
			case 1:
				checkState(t, g, 1, old)
				checkRootHolds(t, g.fs, "fsm", "data-000001")
				outcomes[0]++
			case 302:
				checkState(t, g, 302, want)
				checkRootHolds(t, g.fs, "fsm", "data-000002")
				outcomes[1]++
			default:
				t.Fatalf("seed %d: crash at operation %d, keeping %v of the unsynced directory changes: applied index %d, neither the old state's nor the snapshot's", seed, n, p, g.AppliedIndex())
			}
			if err := g.Close(); err != nil {
				t.Fatal(err)
			}
		}
		_ = f.Close() // on a dead disk: its error says so
	}
	if outcomes[0] == 0 || outcomes[1] == 0 {
		t.Fatalf("crashes left the old state %d times and the new %d: a test that never sees both proves little", outcomes[0], outcomes[1])
	}
	t.Logf("crashes: %d left the old state, %d the new", outcomes[0], outcomes[1])
}
