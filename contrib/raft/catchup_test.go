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
		if err := f.CatchUp(s, nil); err != nil {
			t.Fatal(err)
		}
		checkState(t, f, 310, want)
		live := f.live
		if err := f.CatchUp(s, nil); err != nil || f.live != live {
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
		if err := f.CatchUp(store(t, 2), nil); err != nil {
			t.Fatal(err)
		}
		checkState(t, f, 2, map[string]string{"mine": "ahead"})
	})
	t.Run("no snapshot", func(t *testing.T) {
		f := behind(t)
		if err := f.CatchUp(store(t), nil); err != nil {
			t.Fatal(err)
		}
		checkState(t, f, 1, map[string]string{"mine": "before"})
	})
	// A node's own snapshot taken after a barrier: its index is past the
	// FSM's applied index by entries raft never hands the FSM. With the
	// log store showing them, CatchUp restores nothing (the snapshot is
	// damaged: a restore would fail); any doubt — a command among them, an
	// entry missing, the last of another term than the snapshot's — and it
	// restores (and fails).
	ownLog := func(t *testing.T, types map[uint64]hraft.LogType, terms map[uint64]uint64, last uint64) *Store {
		logs := openStore(t, t.TempDir(), nil)
		for i := uint64(1); i <= last; i++ {
			l := &hraft.Log{Index: i, Term: 1, Type: hraft.LogCommand}
			if typ, ok := types[i]; ok {
				l.Type = typ
			}
			if term, ok := terms[i]; ok {
				l.Term = term
			}
			if err := logs.StoreLog(l); err != nil {
				t.Fatal(err)
			}
		}
		return logs
	}
	noCommands := map[uint64]hraft.LogType{2: hraft.LogBarrier, 3: hraft.LogNoop, 4: hraft.LogConfiguration}
	t.Run("ahead by no commands", func(t *testing.T) {
		f := behind(t)
		live := f.live
		if err := f.CatchUp(store(t, 2, 4), ownLog(t, noCommands, nil, 4)); err != nil {
			t.Fatal(err)
		}
		if f.live != live {
			t.Fatalf("restored data-%06d in place of data-%06d", f.live, live)
		}
		checkState(t, f, 4, map[string]string{"mine": "before"})
	})
	for name, logs := range map[string]func(t *testing.T) *Store{
		"a command among them": func(t *testing.T) *Store {
			return ownLog(t, map[uint64]hraft.LogType{2: hraft.LogBarrier, 3: hraft.LogCommand, 4: hraft.LogNoop}, nil, 4)
		},
		"the last missing": func(t *testing.T) *Store { return ownLog(t, noCommands, nil, 3) },
		"another term":     func(t *testing.T) *Store { return ownLog(t, noCommands, map[uint64]uint64{4: 2}, 4) },
	} {
		t.Run("ahead, "+name, func(t *testing.T) {
			f := behind(t)
			if err := f.CatchUp(store(t, 2, 4), logs(t)); err == nil {
				t.Fatal("CatchUp behind a damaged newest snapshot: nil error")
			}
			checkState(t, f, 1, map[string]string{"mine": "before"})
		})
	}
	t.Run("newest damaged", func(t *testing.T) {
		// raft, under NoSnapshotRestoreOnStart, takes the newest snapshot's
		// index as applied without opening it: an older one restored
		// instead would leave the entries between the two unapplied.
		f := behind(t)
		if err := f.CatchUp(store(t, 305, 320), nil); err == nil {
			t.Fatal("CatchUp behind a damaged newest snapshot: nil error")
		}
		checkState(t, f, 1, map[string]string{"mine": "before"})
		g := behind(t)
		apply(t, g, 2, PutCommand([]byte("x"), []byte("y")))
		if err := g.CatchUp(store(t, 2, 320), nil); err == nil {
			t.Fatal("CatchUp behind a damaged snapshot, past the other: nil error")
		}
	})
}
