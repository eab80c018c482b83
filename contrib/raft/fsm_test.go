package raft

import (
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"slices"
	"testing"
	"testing/iotest"

	hraft "github.com/hashicorp/raft"
	"github.com/monbandb/monban/lsm"
	"github.com/monbandb/monban/vfs"
)

func openFSM(t *testing.T, root string, opts *lsm.Options) *FSM {
	t.Helper()
	f, err := OpenFSM(root, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

// apply applies cmds as entries from index on, in one ApplyBatch, and
// fails on any response but nil.
func apply(t *testing.T, f *FSM, index uint64, cmds ...[]byte) {
	t.Helper()
	var logs []*hraft.Log
	for i, c := range cmds {
		logs = append(logs, &hraft.Log{Index: index + uint64(i), Term: 1, Type: hraft.LogCommand, Data: c})
	}
	for i, r := range f.ApplyBatch(logs) {
		if r != nil {
			t.Fatalf("entry %d: %v", index+uint64(i), r)
		}
	}
}

// state returns the FSM's whole key-value map.
func state(t *testing.T, f *FSM) map[string]string {
	t.Helper()
	f.mu.RLock()
	defer f.mu.RUnlock()
	m := map[string]string{}
	it := f.db.NewIter(&lsm.IterOptions{LowerBound: []byte{dataPrefix}, UpperBound: []byte{dataPrefix + 1}})
	for k, v := range it.All() {
		m[string(k[1:])] = string(v)
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return m
}

func checkState(t *testing.T, f *FSM, applied uint64, want map[string]string) {
	t.Helper()
	if got := state(t, f); !maps.Equal(got, want) {
		t.Fatalf("state %v, want %v", got, want)
	}
	if got := f.AppliedIndex(); got != applied {
		t.Fatalf("applied index %d, want %d", got, applied)
	}
}

func TestFSMApply(t *testing.T) {
	f := openFSM(t, t.TempDir(), nil)
	apply(t, f, 1, PutCommand([]byte("a"), []byte("1")), PutCommand([]byte("b"), []byte("2")),
		PutCommand([]byte(""), []byte("empty key")), PutCommand([]byte("c"), nil))
	if r := f.Apply(&hraft.Log{Index: 5, Type: hraft.LogCommand, Data: DeleteCommand([]byte("a"))}); r != nil {
		t.Fatal(r)
	}
	checkState(t, f, 5, map[string]string{"b": "2", "": "empty key", "c": ""})
	if v, err := f.Get([]byte("b")); err != nil || string(v) != "2" {
		t.Fatalf("Get(b) = %q, %v", v, err)
	}
	if _, err := f.Get([]byte("a")); !errors.Is(err, lsm.ErrNotFound) {
		t.Fatalf("Get of a deleted key: %v", err)
	}
	// Entries that are no command: a response, no change, but applied.
	bad := [][]byte{nil, {9, 0}, {cmdPut, 5, 'k'}, append(DeleteCommand([]byte("b")), 'x')}
	for i, data := range bad {
		if r := f.Apply(&hraft.Log{Index: 6 + uint64(i), Type: hraft.LogCommand, Data: data}); !errors.Is(r.(error), ErrBadCommand) {
			t.Fatalf("Apply(% x) = %v, want ErrBadCommand", data, r)
		}
	}
	if r := f.Apply(&hraft.Log{Index: 10, Type: hraft.LogConfiguration, Data: []byte{cmdDelete, 1, 'b'}}); r != nil {
		t.Fatalf("a configuration entry: %v", r)
	}
	checkState(t, f, 10, map[string]string{"b": "2", "": "empty key", "c": ""})
	// Raft replays its log after a restart: entries the state holds
	// already change nothing, the ones after them apply.
	apply(t, f, 9, PutCommand([]byte("b"), []byte("old")), DeleteCommand([]byte("c")),
		PutCommand([]byte("d"), []byte("11")))
	checkState(t, f, 11, map[string]string{"b": "2", "": "empty key", "c": "", "d": "11"})
}

// TestFSMApplySplitsLargeBatches: commands that would take one lsm batch
// past lsm.MaxBatchSize (lowered here to 4 KiB) are applied in several,
// and the state and the applied index are as one batch would leave them.
func TestFSMApplySplitsLargeBatches(t *testing.T) {
	defer func(n int) { maxApplyBatch = n }(maxApplyBatch)
	maxApplyBatch = 4096
	f := openFSM(t, t.TempDir(), nil)
	want := map[string]string{}
	var cmds [][]byte
	for i := range 20 {
		k, v := fmt.Sprintf("k%02d", i), string(bytes.Repeat([]byte{byte('a' + i)}, 1000))
		cmds = append(cmds, PutCommand([]byte(k), []byte(v)))
		want[k] = v
	}
	before := f.db.Stats().Commits
	apply(t, f, 1, cmds...)
	checkState(t, f, 20, want)
	// A put of 1,008 bytes in the batch, 1,015 counted for room: four to
	// a batch of 4 KiB, so five batches.
	if n := f.db.Stats().Commits - before; n != 5 {
		t.Fatalf("%d batches for 20 KB of commands, want 5 of at most 4 KiB", n)
	}
}

func TestFSMReopen(t *testing.T) {
	root := t.TempDir()
	f := openFSM(t, root, nil)
	apply(t, f, 1, PutCommand([]byte("a"), []byte("1")), PutCommand([]byte("b"), []byte("2")), DeleteCommand([]byte("a")))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f = openFSM(t, root, nil)
	checkState(t, f, 3, map[string]string{"b": "2"})
}

func TestClosedFSMErrs(t *testing.T) {
	f, err := OpenFSM(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var snap bytes.Buffer
	persist(t, f, &snap)
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	_, e1 := f.Get([]byte("k"))
	_, e2 := f.Snapshot()
	r := f.Apply(&hraft.Log{Index: 1, Type: hraft.LogCommand, Data: PutCommand([]byte("k"), nil)})
	e3, _ := r.(error)
	for i, err := range []error{e1, e2, e3, f.Restore(io.NopCloser(&snap)), f.Close()} {
		if !errors.Is(err, lsm.ErrClosed) {
			t.Errorf("call %d on a closed FSM: %v, want ErrClosed", i, err)
		}
	}
}

// memSink is a raft.SnapshotSink into memory.
type memSink struct {
	bytes.Buffer
	closed, cancelled bool
}

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Close() error  { s.closed = true; return nil }
func (s *memSink) Cancel() error { s.cancelled = true; return nil }

// persist writes a snapshot of f to buf.
func persist(t *testing.T, f *FSM, buf *bytes.Buffer) {
	t.Helper()
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	var sink memSink
	if err := snap.Persist(&sink); err != nil || !sink.closed || sink.cancelled {
		t.Fatalf("Persist: %v; sink closed %v, cancelled %v", err, sink.closed, sink.cancelled)
	}
	buf.Write(sink.Bytes())
}

// sourceFSM returns an FSM with entries in a table and in its memtable,
// and its state.
func sourceFSM(t *testing.T) (*FSM, map[string]string) {
	f := openFSM(t, t.TempDir(), nil)
	want := map[string]string{}
	var cmds [][]byte
	for i := range 300 {
		k, v := fmt.Sprintf("key%03d", i), fmt.Sprintf("value %d", i)
		cmds = append(cmds, PutCommand([]byte(k), []byte(v)))
		want[k] = v
	}
	apply(t, f, 1, cmds...)
	f.mu.RLock()
	err := f.db.Flush()
	f.mu.RUnlock()
	if err != nil {
		t.Fatal(err)
	}
	apply(t, f, 301, DeleteCommand([]byte("key007")), PutCommand([]byte("key400"), []byte("in the memtable")))
	delete(want, "key007")
	want["key400"] = "in the memtable"
	return f, want
}

func TestSnapshotRestore(t *testing.T) {
	src, want := sourceFSM(t)
	var snap bytes.Buffer
	persist(t, src, &snap)
	// The source goes on; the snapshot keeps the state it was taken at.
	apply(t, src, 303, PutCommand([]byte("later"), []byte("x")))

	root := t.TempDir()
	dst := openFSM(t, root, nil)
	apply(t, dst, 1, PutCommand([]byte("only in dst"), []byte("gone after the restore")))
	if err := dst.Restore(io.NopCloser(bytes.NewReader(snap.Bytes()))); err != nil {
		t.Fatal(err)
	}
	checkState(t, dst, 302, want)
	checkRootHolds(t, vfs.Default, root, "data-000002")
	apply(t, dst, 303, PutCommand([]byte("after"), []byte("y")))
	want["after"] = "y"
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	dst = openFSM(t, root, nil)
	checkState(t, dst, 303, want)
}

// checkRootHolds asserts that an FSM's root holds its lock, LIVE, the
// live DB's directory and others (not the FSM's), and nothing else: no
// staged restore, no snapshot.
func checkRootHolds(t *testing.T, fsys vfs.FS, root, live string, others ...string) {
	t.Helper()
	names, err := fsys.List(root)
	if err != nil {
		t.Fatal(err)
	}
	if want := append([]string{lockName, liveName, live}, others...); !slices.Equal(names, slices.Sorted(slices.Values(want))) {
		t.Fatalf("root holds %v, want %v", names, want)
	}
}

// A stream damaged anywhere, cut short, or followed by more bytes is
// refused, and the state before it stays live, its directory the only one.
func TestRestoreRefusesBadStream(t *testing.T) {
	src, _ := sourceFSM(t)
	var snap bytes.Buffer
	persist(t, src, &snap)
	good := snap.Bytes()
	root := t.TempDir()
	dst := openFSM(t, root, nil)
	apply(t, dst, 1, PutCommand([]byte("mine"), []byte("kept")))
	bad := map[string][]byte{
		"empty":          nil,
		"no checksum":    good[:len(good)-4],
		"half":           good[:len(good)/2],
		"a byte after":   append(slices.Clone(good), 0),
		"name climbs up": nil,
	}
	for _, at := range []int{0, 7, 8, 9, 20, len(good) / 3, len(good) / 2, len(good) - 5, len(good) - 1} {
		b := slices.Clone(good)
		b[at] ^= 0x40
		bad[fmt.Sprintf("byte %d flipped", at)] = b
	}
	// A stream whose checksum is right but whose file is named out of the
	// directory.
	var climb bytes.Buffer
	climb.WriteString(snapshotMagic)
	climb.Write([]byte{5, '.', '.', '/', 'x', 'y', 1, 'z', 0})
	bad["name climbs up"] = append(climb.Bytes(), crc32Of(climb.Bytes())...)
	streams := map[string]io.Reader{}
	for name, b := range bad {
		streams[name] = bytes.NewReader(b)
	}
	// The whole stream, then a read error: the stream's end is unknown.
	errReset := errors.New("connection reset")
	streams["an error after the checksum"] = io.MultiReader(bytes.NewReader(good), iotest.ErrReader(errReset))
	for name, r := range streams {
		if err := dst.Restore(io.NopCloser(r)); err == nil {
			t.Fatalf("%s: Restore took it", name)
		}
		checkState(t, dst, 1, map[string]string{"mine": "kept"})
		checkRootHolds(t, vfs.Default, root, "data-000001")
	}
}

func crc32Of(p []byte) []byte {
	var w bytes.Buffer
	crc := crc32.New(castagnoli)
	crc.Write(p)
	w.Write(crc.Sum(nil))
	return w.Bytes()
}

// One FSM per root and one Store per directory: a second open would
// remove the first's staged restores and snapshots under it.
func TestSecondOpenRefused(t *testing.T) {
	root := t.TempDir()
	openFSM(t, root, nil)
	if f, err := OpenFSM(root, nil); !errors.Is(err, vfs.ErrLocked) {
		t.Fatalf("a second OpenFSM of one root: %v, %v; want ErrLocked", f, err)
	}
	dir := t.TempDir()
	openStore(t, dir, nil)
	if s, err := Open(dir, nil); !errors.Is(err, lsm.ErrLocked) {
		t.Fatalf("a second Open of one directory: %v, %v; want ErrLocked", s, err)
	}
}

// Apply does not sync; Snapshot makes what was applied durable, so that a
// machine crash never leaves the state behind a snapshot raft keeps.
func TestSnapshotMakesStateDurable(t *testing.T) {
	mem := vfs.NewMem()
	f := openFSM(t, "fsm", &lsm.Options{FS: mem})
	apply(t, f, 1, PutCommand([]byte("a"), []byte("1")), PutCommand([]byte("b"), []byte("2")))
	crashed := openFSM(t, "fsm", &lsm.Options{FS: mem.CrashClone()})
	if crashed.AppliedIndex() != 0 {
		t.Fatalf("a crash before any sync kept applied index %d: the test proves nothing", crashed.AppliedIndex())
	}
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	snap.Release()
	crashed = openFSM(t, "fsm", &lsm.Options{FS: mem.CrashClone()})
	checkState(t, crashed, 2, map[string]string{"a": "1", "b": "2"})
}
