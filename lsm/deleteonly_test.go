package lsm

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/monbandb/monban/compaction"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/vfs"
)

// Delete-only compactions (compaction.PickDeleteOnly): tables that a
// DeleteRange deletes wholly leave the manifest unread.

// readLog records which table files a FaultFS saw opened or read.
type readLog struct {
	mu   sync.Mutex
	read map[string]bool
}

func traceReads(fs *vfs.FaultFS) *readLog {
	l := &readLog{read: map[string]bool{}}
	fs.SetTrace(func(_ int64, op vfs.Op, name string, _ error) {
		if (op == vfs.OpRead || op == vfs.OpOpen) && filepath.Ext(name) == ".sst" {
			l.mu.Lock()
			l.read[filepath.Base(name)] = true
			l.mu.Unlock()
		}
	})
	return l
}

func (l *readLog) reset() {
	l.mu.Lock()
	clear(l.read)
	l.mu.Unlock()
}

func (l *readLog) has(f *manifest.FileMetadata) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.read[manifest.MakeFilename(manifest.KindTable, f.FileNum)]
}

// deleteOnlyDB opens a DB over fs whose tables are small, fills it with
// n keys in order and compacts them into the last level, and returns the
// model of its contents and the last level's tables. LBaseMaxBytes is
// large enough that a DeleteRange's compensated size never makes L0 due,
// so only a delete-only compaction or Compact acts on one.
func deleteOnlyDB(t *testing.T, fs vfs.FS, n int, l *EventListener) (*DB, model, []*manifest.FileMetadata) {
	t.Helper()
	d := openMem(t, fs, &Options{MemtableSize: 32 << 10, TargetFileSize: 8 << 10, BlockSize: 1024, LBaseMaxBytes: 1 << 40, EventListener: l})
	rng := rand.New(rand.NewPCG(1, 2))
	m := model{}
	for i := range n {
		k, v := fmt.Sprintf("k%05d", i), randValue(rng, 100)
		if err := d.Put([]byte(k), []byte(v)); err != nil {
			t.Fatal(err)
		}
		m[k] = v
	}
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	last := slices.Clone(d.rs.Load().version.Levels[NumLevels-1])
	if len(last) < 8 {
		t.Fatalf("the fill left %d tables in the last level, want 8 or more", len(last))
	}
	return d, m, last
}

// keyInside returns a key strictly inside f's range, of the model's keys.
func keyInside(t *testing.T, m model, f *manifest.FileMetadata) string {
	t.Helper()
	for _, k := range m.sortedRange(f.Smallest.UserKey, nil) {
		if k > string(f.Smallest.UserKey) && k < string(f.Largest.UserKey) {
			return k
		}
	}
	t.Fatalf("table %v has no key inside its bounds", f)
	return ""
}

// TestDeleteOnlyDropsCoveredTablesUnread: a raft log truncated from the
// front. A DeleteRange from below every key to inside the last level's
// table j, then Compact: tables 0..j-1 leave by delete-only compactions
// (counted in Stats, reported to the event listener, their files removed)
// and no byte of them is read; table j, cut by the tombstone, is merged.
func TestDeleteOnlyDropsCoveredTablesUnread(t *testing.T) {
	fs := vfs.NewFault(vfs.NewMem())
	var mu sync.Mutex
	var events []CompactionInfo
	l := &EventListener{CompactionEnd: func(info CompactionInfo) {
		mu.Lock()
		events = append(events, info)
		mu.Unlock()
	}}
	d, m, last := deleteOnlyDB(t, fs, 4000, l)
	defer d.Close()
	j := len(last) / 2
	end := keyInside(t, m, last[j])
	reads := traceReads(fs)
	before := d.Stats()
	mu.Lock()
	events = nil
	mu.Unlock()

	if err := d.DeleteRange([]byte("k"), []byte(end)); err != nil {
		t.Fatal(err)
	}
	m.deleteRange([]byte("k"), []byte(end))
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	d.waitIdle()
	after := d.Stats()

	var covered uint64
	for _, f := range last[:j] {
		covered += f.Size
		if reads.has(f) {
			t.Errorf("table %06d, wholly deleted, was read", f.FileNum)
		}
		if _, err := fs.Open(filepath.Join("/db", manifest.MakeFilename(manifest.KindTable, f.FileNum))); err == nil {
			t.Errorf("table %06d, wholly deleted, is still on disk", f.FileNum)
		}
	}
	if !reads.has(last[j]) {
		t.Errorf("table %06d, cut by the tombstone, was not read: want it merged", last[j].FileNum)
	}
	if n := after.Compactions.DeleteOnly - before.Compactions.DeleteOnly; n == 0 {
		t.Errorf("no delete-only compaction counted:\n%v", after)
	}
	if got := after.SpaceReclaimed - before.SpaceReclaimed; got < covered {
		t.Errorf("%d bytes reclaimed, want at least the %d of the deleted tables", got, covered)
	}
	var dropped []uint64
	mu.Lock()
	for _, e := range events {
		if e.Kind != compaction.KindDeleteOnly {
			continue
		}
		if len(e.Outputs) != 0 || e.Err != nil {
			t.Errorf("delete-only event %+v: want no outputs, no error", e)
		}
		for _, in := range e.Inputs {
			dropped = append(dropped, in.FileNum)
		}
	}
	mu.Unlock()
	slices.Sort(dropped)
	var want []uint64
	for _, f := range last[:j] {
		want = append(want, f.FileNum)
	}
	slices.Sort(want)
	if !slices.Equal(dropped, want) {
		t.Errorf("delete-only events dropped %v, want %v", dropped, want)
	}
	checkModel(t, d, m)
}

// TestDeleteOnlyKeptForSnapshot: a snapshot taken before the DeleteRange
// reads the covered tables, so no delete-only compaction drops them, and
// the snapshot still reads their keys; its Close lets the picker drop
// them, with no Compact and nothing else due. A snapshot taken after the
// DeleteRange keeps nothing.
func TestDeleteOnlyKeptForSnapshot(t *testing.T) {
	fs := vfs.NewFault(vfs.NewMem())
	d, m, last := deleteOnlyDB(t, fs, 2000, nil)
	defer d.Close()
	j := len(last) / 2
	lo, hi := string(last[1].Smallest.UserKey), keyInside(t, m, last[j])
	snap := d.NewSnapshot()
	old := m.clone()
	if err := d.DeleteRange([]byte(lo), []byte(hi)); err != nil {
		t.Fatal(err)
	}
	m.deleteRange([]byte(lo), []byte(hi))
	later := d.NewSnapshot()
	reads := traceReads(fs)
	settleL0(t, d)
	if s := d.Stats(); s.Compactions.DeleteOnly != 0 || s.Levels[NumLevels-1].Files != len(last) {
		t.Fatalf("with a snapshot older than the tombstone: %d delete-only compactions, %d tables in the last level; want none, %d",
			s.Compactions.DeleteOnly, s.Levels[NumLevels-1].Files, len(last))
	}
	k := string(last[2].Smallest.UserKey)
	mustGet(t, snap, k, old[k])
	mustGet(t, d, k, "")

	// Only the older snapshot's Close can let the tables go, so only it
	// asks the picker again.
	if w := d.snapshotsWaited.Load(); w == nil || !w.Holds(snap.seq) || w.Holds(later.seq) {
		t.Fatalf("waiting for snapshots in %v: want the one at %d, not the one at %d", w, snap.seq, later.seq)
	}
	reads.reset()
	if err := snap.Close(); err != nil {
		t.Fatal(err)
	}
	d.waitIdle()
	s := d.Stats()
	if s.Compactions.DeleteOnly == 0 || s.Levels[NumLevels-1].Files != len(last)-(j-1) {
		t.Fatalf("the snapshot closed: %d delete-only compactions, %d tables in the last level; want some, %d",
			s.Compactions.DeleteOnly, s.Levels[NumLevels-1].Files, len(last)-(j-1))
	}
	for _, f := range last[1:j] {
		if reads.has(f) {
			t.Errorf("table %06d, wholly deleted, was read", f.FileNum)
		}
	}
	checkModel(t, d, m)
	mustGet(t, later, k, "")
	if w := d.snapshotsWaited.Load(); w != nil {
		t.Errorf("nothing left to drop, still waiting for snapshots in %v", w)
	}
	later.Close()
}

// TestDeleteOnlyKeepsNewerAndPartial: a Put newer than the tombstone, in
// its range, survives the delete-only compaction of the tables below;
// tables the tombstone only cuts stay until a merge; and an iterator
// opened before the DeleteRange still reads a dropped table's keys, its
// file on disk until the iterator closes.
func TestDeleteOnlyKeepsNewerAndPartial(t *testing.T) {
	fs := vfs.NewFault(vfs.NewMem())
	d, m, last := deleteOnlyDB(t, fs, 2000, nil)
	defer d.Close()
	it := d.NewIter(nil)
	itOpen := true
	defer func() {
		if itOpen {
			it.Close()
		}
	}()
	lo, hi := keyInside(t, m, last[0]), keyInside(t, m, last[3])
	if err := d.DeleteRange([]byte(lo), []byte(hi)); err != nil {
		t.Fatal(err)
	}
	m.deleteRange([]byte(lo), []byte(hi))
	newer := string(last[1].Smallest.UserKey)
	if err := d.Put([]byte(newer), []byte("newer")); err != nil {
		t.Fatal(err)
	}
	m[newer] = "newer"
	settleL0(t, d)
	version := d.rs.Load().version
	for i, f := range last[:5] {
		dropped := i == 1 || i == 2
		if got := !slices.Contains(version.Levels[NumLevels-1], f); got != dropped {
			t.Errorf("table %d of the last level (%v): dropped %v, want %v", i, f, got, dropped)
		}
	}
	checkModel(t, d, m)

	// The iterator's read state holds the version the tables were in.
	name := filepath.Join("/db", manifest.MakeFilename(manifest.KindTable, last[1].FileNum))
	if _, err := fs.Open(name); err != nil {
		t.Fatalf("a dropped table an iterator may read is gone: %v", err)
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	if it.Err() != nil || n != 2000 {
		t.Fatalf("the iterator opened before the DeleteRange read %d keys (err %v), want 2000", n, it.Err())
	}
	it.Close()
	itOpen = false
	d.waitIdle()
	if _, err := fs.Open(name); err == nil {
		t.Errorf("table %06d is still on disk once no iterator holds it", last[1].FileNum)
	}
}
