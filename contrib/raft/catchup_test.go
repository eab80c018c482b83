package raft

import (
	"bytes"
	"io"
	"testing"

	hraft "github.com/hashicorp/raft"
	"github.com/monbandb/monban/lsm"
	"github.com/monbandb/monban/vfs"
)

// TestCatchUp: a state behind the newest snapshot raft keeps (a node that
// crashed between raft keeping an installed snapshot and the FSM's
// Restore) is restored from it by CatchUp, its applied index raised to the
// snapshot's; a state at or past it, or no snapshot, is left alone; and a
// damaged newest snapshot the state is behind is reported, the state left
// as it was, whatever older snapshots there are.
func TestCatchUp(t *testing.T) {
	src, want := sourceFSM(t) // applied 302
	var snap bytes.Buffer
	persist(t, src, &snap)
	store := func(t *testing.T, indexes ...uint64) hraft.SnapshotStore {
		s, err := hraft.NewFileSnapshotStore(t.TempDir(), max(len(indexes), 1), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		for i, index := range indexes {
			sink, err := s.Create(hraft.SnapshotVersionMax, index, 1, hraft.Configuration{}, 1, nil)
			if err != nil {
				t.Fatal(err)
			}
			data := snap.Bytes()
			if i == len(indexes)-1 && len(indexes) > 1 {
				data = data[:len(data)/2] // the newest, cut short
			}
			if _, err := sink.Write(data); err != nil {
				t.Fatal(err)
			}
			if err := sink.Close(); err != nil {
				t.Fatal(err)
			}
		}
		return s
	}
	behind := func(t *testing.T) *FSM {
		f := openFSM(t, t.TempDir(), &lsm.Options{FS: vfs.Default})
		apply(t, f, 1, PutCommand([]byte("mine"), []byte("before")))
		return f
	}

	t.Run("behind", func(t *testing.T) {
		f, s := behind(t), store(t, 310) // 303-310: no-ops and barriers
		if err := f.CatchUp(s); err != nil {
			t.Fatal(err)
		}
		checkState(t, f, 310, want)
		live := f.live
		if err := f.CatchUp(s); err != nil || f.live != live {
			t.Fatalf("a second CatchUp: %v, live data-%06d, was data-%06d", err, f.live, live)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		g := openFSM(t, f.root, nil)
		checkState(t, g, 310, want)
	})
	t.Run("abreast", func(t *testing.T) {
		f := behind(t)
		apply(t, f, 2, PutCommand([]byte("mine"), []byte("ahead")))
		if err := f.CatchUp(store(t, 2)); err != nil {
			t.Fatal(err)
		}
		checkState(t, f, 2, map[string]string{"mine": "ahead"})
	})
	t.Run("no snapshot", func(t *testing.T) {
		f := behind(t)
		if err := f.CatchUp(store(t)); err != nil {
			t.Fatal(err)
		}
		checkState(t, f, 1, map[string]string{"mine": "before"})
	})
	t.Run("newest damaged", func(t *testing.T) {
		// raft, under NoSnapshotRestoreOnStart, takes the newest snapshot's
		// index as applied without opening it: an older one restored
		// instead would leave the entries between the two unapplied.
		f := behind(t)
		if err := f.CatchUp(store(t, 305, 320)); err == nil {
			t.Fatal("CatchUp behind a damaged newest snapshot: nil error")
		}
		checkState(t, f, 1, map[string]string{"mine": "before"})
		g := behind(t)
		apply(t, g, 2, PutCommand([]byte("x"), []byte("y")))
		if err := g.CatchUp(store(t, 2, 320)); err == nil {
			t.Fatal("CatchUp behind a damaged snapshot, past the other: nil error")
		}
	})
}
