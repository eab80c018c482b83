package raft

import (
	"bytes"
	"errors"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"testing"

	hraft "github.com/hashicorp/raft"
	"github.com/monbandb/monban/lsm"
	"github.com/monbandb/monban/vfs"
)

// TestOpenFSMKeepsOtherEntries: OpenFSM removes the leftovers of its own
// (a staged restore, a snapshot, LIVE.tmp) and nothing else in its root.
func TestOpenFSMKeepsOtherEntries(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"notes.txt", "data-7", "snapshot-x"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte("mine"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, dir := range []string{"raft", "data-000009", "snapshot-000003"} {
		if err := os.Mkdir(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f := openFSM(t, root, nil)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	checkRootHolds(t, vfs.Default, root, "data-000001", "notes.txt", "data-7", "snapshot-x", "raft")
}

// TestRestoreRefusesOtherDB: a well-formed stream of a DB that is not an
// FSM's state (no applied index: here a Store's log) is refused, the old
// state kept.
func TestRestoreRefusesOtherDB(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, filepath.Join(dir, "log"), nil)
	if err := s.StoreLogs([]*hraft.Log{{Index: 1, Term: 1, Data: []byte("x")}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	if err := writeSnapshot(vfs.Default, filepath.Join(dir, "log"), &stream); err != nil {
		t.Fatal(err)
	}
	f := openFSM(t, filepath.Join(dir, "fsm"), nil)
	apply(t, f, 1, PutCommand([]byte("mine"), []byte("kept")))
	if err := f.Restore(io.NopCloser(&stream)); !errors.Is(err, errBadSnapshot) {
		t.Fatalf("Restore of a Store's DB: %v, want errBadSnapshot", err)
	}
	checkState(t, f, 1, map[string]string{"mine": "kept"})
}

// TestReleaseAfterReopen: a snapshot an earlier FSM on the same root
// handed out, released after a reopen, removes nothing of the new FSM's.
func TestReleaseAfterReopen(t *testing.T) {
	root := t.TempDir()
	f := openFSM(t, root, nil)
	apply(t, f, 1, PutCommand([]byte("k"), []byte("v")))
	old, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	g := openFSM(t, root, nil)
	snap, err := g.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	old.Release()
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatalf("Persist after an older snapshot's Release: %v", err)
	}
	snap.Release()
}

// TestStoreRefusesIndexPastMax: nothing follows index MaxUint64; an entry
// at 0 after it is a gap, not a wrap to the log's start.
func TestStoreRefusesIndexPastMax(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	if err := s.StoreLogs([]*hraft.Log{{Index: math.MaxUint64 - 1}, {Index: math.MaxUint64}}); err != nil {
		t.Fatal(err)
	}
	if err := s.StoreLog(&hraft.Log{Index: 0}); !errors.Is(err, ErrNotContiguous) {
		t.Fatalf("StoreLog at 0 after MaxUint64: %v, want ErrNotContiguous", err)
	}
	if last, _ := s.LastIndex(); last != math.MaxUint64 {
		t.Fatalf("LastIndex %d, want MaxUint64", last)
	}
	var l hraft.Log
	if err := s.GetLog(math.MaxUint64, &l); err != nil {
		t.Fatal(err)
	}
}

// TestFSMRefusesWhatTheStateCannotHold: a command whose key or value the
// engine cannot store (the key with the FSM's prefix byte) is a bad
// command, answered for itself: the entries raft happens to batch with it
// apply all the same, so a replica's state never depends on how raft cut
// its log into batches.
func TestFSMRefusesWhatTheStateCannotHold(t *testing.T) {
	cmds := [][]byte{
		PutCommand([]byte("a"), []byte("1")),
		PutCommand(make([]byte, lsm.MaxKeySize), []byte("x")),
		DeleteCommand(make([]byte, lsm.MaxKeySize)),
		PutCommand([]byte("v"), make([]byte, lsm.MaxValueSize+1)),
		PutCommand([]byte("b"), []byte("2")),
	}
	want := map[string]string{"a": "1", "b": "2"}
	logs := make([]*hraft.Log, len(cmds))
	for i, c := range cmds {
		logs[i] = &hraft.Log{Index: uint64(i + 1), Term: 1, Type: hraft.LogCommand, Data: c}
	}
	check := func(f *FSM, how string, resp []any) {
		t.Helper()
		for i, r := range resp {
			bad := i >= 1 && i <= 3
			if err, _ := r.(error); bad != errors.Is(err, ErrBadCommand) || !bad && r != nil {
				t.Errorf("%s: entry %d: response %v", how, i+1, r)
			}
		}
		checkState(t, f, uint64(len(cmds)), want)
	}
	batched := openFSM(t, t.TempDir(), nil)
	check(batched, "one batch", batched.ApplyBatch(logs))
	single := openFSM(t, t.TempDir(), nil)
	var resp []any
	for _, l := range logs {
		resp = append(resp, single.Apply(l))
	}
	check(single, "one at a time", resp)
}

// closeAtEOF closes f the moment its stream has been read whole: Restore
// has staged the new state and not yet committed or swapped it in.
type closeAtEOF struct {
	r io.Reader
	f *FSM
}

func (c *closeAtEOF) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF && !c.f.closed {
		if cerr := c.f.Close(); cerr != nil {
			return n, cerr
		}
	}
	return n, err
}

// TestCloseDuringRestore: an FSM closed while a Restore stages its stream
// (raft never does this; a caller misusing the FSM might) leaves no DB
// open behind it: the directory opens again at once, whole, holding the
// old state or the new.
func TestCloseDuringRestore(t *testing.T) {
	src, want := sourceFSM(t)
	var snap bytes.Buffer
	persist(t, src, &snap)
	root := t.TempDir()
	f, err := OpenFSM(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, f, 1, PutCommand([]byte("mine"), []byte("old")))
	if err := f.Restore(io.NopCloser(&closeAtEOF{r: &snap, f: f})); !errors.Is(err, lsm.ErrClosed) {
		t.Errorf("Restore of a closed FSM: %v, want ErrClosed", err)
	}
	g, err := OpenFSM(root, nil)
	if err != nil {
		t.Fatalf("reopening after a Close during Restore: %v", err)
	}
	defer g.Close()
	if got := state(t, g); !maps.Equal(got, want) && !maps.Equal(got, map[string]string{"mine": "old"}) {
		t.Fatalf("state after a Close during Restore: %v", got)
	}
}
