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
