package raft

import (
	"bytes"
	"errors"
	"io"
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

// closeAtEOF closes f the moment its stream has been read whole, and
// then runs then: Restore has staged the new state and not yet committed
// or swapped it in.
type closeAtEOF struct {
	r    io.Reader
	f    *FSM
	then func()
}

func (c *closeAtEOF) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if err == io.EOF && c.then != nil {
		if cerr := c.f.Close(); cerr != nil {
			return n, cerr
		}
		c.then()
		c.then = nil
	}
	return n, err
}

// TestCloseDuringRestore: an FSM closed while a Restore stages its stream
// (raft never does this; a caller misusing the FSM might), and the root
// opened by another FSM that applies entries, as a restart would: the
// Restore must neither leave its new DB open nor switch LIVE under the
// other FSM, whose entries stay (a review found them lost, LIVE naming a
// directory the other FSM's Open had removed).
func TestCloseDuringRestore(t *testing.T) {
	src, _ := sourceFSM(t)
	var snap bytes.Buffer
	persist(t, src, &snap)
	root := t.TempDir()
	f, err := OpenFSM(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	apply(t, f, 1, PutCommand([]byte("mine"), []byte("old")))
	var g *FSM
	reopen := func() {
		if g, err = OpenFSM(root, nil); err != nil {
			t.Fatalf("opening the root while the closed FSM's Restore runs: %v", err)
		}
		apply(t, g, 2, PutCommand([]byte("theirs"), []byte("new")))
	}
	// It fails: closed, or its staged directory gone with the other
	// FSM's Open, which removes what no LIVE names.
	if err := f.Restore(io.NopCloser(&closeAtEOF{r: &snap, f: f, then: reopen})); err == nil {
		t.Error("Restore of an FSM closed meanwhile: nil error")
	}
	if err := g.Close(); err != nil {
		t.Fatal(err)
	}
	h := openFSM(t, root, nil)
	checkState(t, h, 2, map[string]string{"mine": "old", "theirs": "new"})
}

// liveHookFS runs hook, once, as LIVE.tmp is created: Restore's commit.
type liveHookFS struct {
	vfs.FS
	hook func()
}

func (l *liveHookFS) Create(name string) (vfs.File, error) {
	if filepath.Base(name) == liveTmpName && l.hook != nil {
		h := l.hook
		l.hook = nil
		h()
	}
	return l.FS.Create(name)
}

// TestCloseDuringRestoreCommit: a Close that comes while Restore commits
// waits for it and then closes the new DB, so the next FSM on the root
// opens the restored state and applies on from it.
func TestCloseDuringRestoreCommit(t *testing.T) {
	src, want := sourceFSM(t)
	var snap bytes.Buffer
	persist(t, src, &snap)
	root := t.TempDir()
	fsys := &liveHookFS{FS: vfs.Default}
	f, err := OpenFSM(root, &lsm.Options{FS: fsys})
	if err != nil {
		t.Fatal(err)
	}
	apply(t, f, 1, PutCommand([]byte("mine"), []byte("old")))
	closed := make(chan error, 1)
	fsys.hook = func() { go func() { closed <- f.Close() }() }
	if err := f.Restore(io.NopCloser(&snap)); err != nil {
		t.Fatal(err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close during the commit: %v", err)
	}
	g := openFSM(t, root, nil)
	checkState(t, g, 302, want)
	apply(t, g, 303, PutCommand([]byte("theirs"), []byte("new")))
	want["theirs"] = "new"
	checkState(t, g, 303, want)
}
