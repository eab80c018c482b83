package raft

import (
	"errors"
	"fmt"
	"math"
	"sync/atomic"
	"testing"
	"time"

	hraft "github.com/hashicorp/raft"
	"github.com/monbandb/monban/lsm"
	"github.com/monbandb/monban/vfs"
)

func openStore(t *testing.T, dir string, opts *lsm.Options) *Store {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// entries returns logs from..to, each of term and carrying its index in
// its data, so that a read can tell which write it sees.
func entries(from, to, term uint64) []*hraft.Log {
	var logs []*hraft.Log
	for i := from; i <= to; i++ {
		logs = append(logs, &hraft.Log{Index: i, Term: term, Type: hraft.LogCommand,
			Data: fmt.Appendf(nil, "entry %d of term %d", i, term), AppendedAt: time.Unix(int64(i), 0)})
	}
	return logs
}

func store(t *testing.T, s *Store, logs []*hraft.Log) {
	t.Helper()
	if err := s.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
}

// checkLog asserts the store's bounds, that every index in them reads
// back as written in term (terms[i] overriding it for index i), and that
// the indexes on either side are ErrLogNotFound.
func checkLog(t *testing.T, s *Store, first, last, term uint64, terms map[uint64]uint64) {
	t.Helper()
	f, err1 := s.FirstIndex()
	l, err2 := s.LastIndex()
	if err := errors.Join(err1, err2); err != nil || f != first || l != last {
		t.Fatalf("bounds [%d, %d], %v; want [%d, %d]", f, l, err, first, last)
	}
	for i := first; i <= last && last != 0; i++ {
		want := term
		if tm, ok := terms[i]; ok {
			want = tm
		}
		var got hraft.Log
		if err := s.GetLog(i, &got); err != nil {
			t.Fatalf("GetLog(%d): %v", i, err)
		}
		if got.Index != i || got.Term != want || string(got.Data) != fmt.Sprintf("entry %d of term %d", i, want) ||
			!got.AppendedAt.Equal(time.Unix(int64(i), 0)) {
			t.Fatalf("GetLog(%d) = %+v, want term %d", i, got, want)
		}
	}
	for _, i := range []uint64{first - 1, last + 1} {
		if i == 0 && first != 0 {
			continue
		}
		var got hraft.Log
		if err := s.GetLog(i, &got); err != hraft.ErrLogNotFound {
			t.Fatalf("GetLog(%d) outside [%d, %d]: %v, want raft.ErrLogNotFound itself", i, first, last, err)
		}
	}
}

func TestEmptyLog(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	checkLog(t, s, 0, 0, 0, nil)
	if err := s.DeleteRange(1, 10); err != nil {
		t.Fatalf("DeleteRange on an empty log: %v", err)
	}
	if !s.IsMonotonic() {
		t.Fatal("IsMonotonic is false")
	}
}

func TestStoreLogsAndGet(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	store(t, s, entries(1, 1, 1))
	if err := s.StoreLog(entries(2, 2, 1)[0]); err != nil {
		t.Fatal(err)
	}
	store(t, s, entries(3, 40, 1))
	checkLog(t, s, 1, 40, 1, nil)
	if err := s.StoreLogs(nil); err != nil {
		t.Fatalf("StoreLogs of nothing: %v", err)
	}
	checkLog(t, s, 1, 40, 1, nil)
}

// TestLargestLogEntry: an entry whose Data is MaxLogData, with every other
// field at its widest, stores and reads back; one of lsm.MaxValueSize is
// refused with lsm.ErrInvalidValue and changes nothing. The README said a
// log entry could be 32 MiB, which its fields put out of reach (a
// black-box attack).
func TestLargestLogEntry(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	widest := &hraft.Log{Index: 1, Term: math.MaxUint64, Type: hraft.LogCommand,
		Data: make([]byte, MaxLogData), AppendedAt: time.Unix(1<<62, 999_999_999)}
	widest.Data[len(widest.Data)-1] = 7
	store(t, s, []*hraft.Log{widest})
	var got hraft.Log
	if err := s.GetLog(1, &got); err != nil || len(got.Data) != MaxLogData || got.Data[MaxLogData-1] != 7 || got.Term != widest.Term {
		t.Fatalf("GetLog of the widest entry: %d bytes, term %d, %v", len(got.Data), got.Term, err)
	}
	// Past MaxLogData by a byte, with Data or Extensions, however little
	// the other fields take (a black-box attack stored up to 20 bytes
	// more: the engine's limit on the run was the only check).
	for _, l := range []*hraft.Log{
		{Index: 2, Term: 1, Data: make([]byte, lsm.MaxValueSize)},
		{Index: 2, Term: 1, Data: make([]byte, MaxLogData+1)},
		{Index: 2, Term: 1, Data: make([]byte, MaxLogData), Extensions: []byte{1}},
	} {
		err := s.StoreLogs([]*hraft.Log{l})
		if n := len(l.Data) + len(l.Extensions); !errors.Is(err, lsm.ErrInvalidValue) {
			t.Fatalf("StoreLogs of %d bytes of data and extensions: %v, want lsm.ErrInvalidValue", n, err)
		}
	}
	if last, err := s.LastIndex(); last != 1 || err != nil {
		t.Fatalf("LastIndex after the refused entries: %d, %v", last, err)
	}
}

// An empty log takes its first entry at any index: a new node starts at
// 1, a node whose log a snapshot replaced at the snapshot's index + 1.
func TestEmptyLogStartsAnywhere(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	store(t, s, entries(1000, 1009, 3))
	checkLog(t, s, 1000, 1009, 3, nil)
}

func TestGapsRefused(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	if err := s.StoreLogs(entries(0, 2, 1)); !errors.Is(err, ErrNotContiguous) {
		t.Fatalf("index 0 on an empty log: %v, want ErrNotContiguous", err)
	}
	// An empty log took its first index from the first entry before it
	// looked at it (a black-box attack: a nil one panicked).
	if err := s.StoreLogs([]*hraft.Log{nil}); !errors.Is(err, ErrNotContiguous) {
		t.Fatalf("a nil entry on an empty log: %v, want ErrNotContiguous", err)
	}
	store(t, s, entries(1, 3, 1))
	for name, logs := range map[string][]*hraft.Log{
		"gap after last":   entries(5, 6, 1),
		"gap inside batch": append(entries(4, 4, 1), entries(6, 6, 1)...),
		"back to last":     entries(3, 4, 2),
		"out of order":     append(entries(5, 5, 1), entries(4, 4, 1)...),
		"nil entry":        {entries(4, 4, 1)[0], nil},
	} {
		if err := s.StoreLogs(logs); !errors.Is(err, ErrNotContiguous) {
			t.Errorf("%s: %v, want ErrNotContiguous", name, err)
		}
		// A refused batch stores nothing, not even its valid head.
		checkLog(t, s, 1, 3, 1, nil)
	}
}

func TestDeleteRangeTruncatesHead(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	store(t, s, entries(1, 20, 1))
	if err := s.DeleteRange(1, 5); err != nil {
		t.Fatal(err)
	}
	checkLog(t, s, 6, 20, 1, nil)
	// Raft compacts from an index it remembers, which may be below the
	// first entry left: the part outside the log is no error.
	if err := s.DeleteRange(0, 8); err != nil {
		t.Fatal(err)
	}
	checkLog(t, s, 9, 20, 1, nil)
	for _, r := range [][2]uint64{{1, 8}, {21, 30}, {12, 10}} {
		if err := s.DeleteRange(r[0], r[1]); err != nil {
			t.Fatalf("DeleteRange%v outside the log: %v", r, err)
		}
	}
	checkLog(t, s, 9, 20, 1, nil)
	store(t, s, entries(21, 22, 1))
	checkLog(t, s, 9, 22, 1, nil)
}

// A follower's entries after a leader change may conflict with the new
// leader's: raft deletes the suffix from the first conflict and stores
// the leader's entries in its place.
func TestOverwriteSuffix(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	store(t, s, entries(1, 10, 1))
	if err := s.DeleteRange(7, 10); err != nil {
		t.Fatal(err)
	}
	checkLog(t, s, 1, 6, 1, nil)
	store(t, s, entries(7, 8, 2))
	checkLog(t, s, 1, 8, 1, map[uint64]uint64{7: 2, 8: 2})
	// A suffix deletion past the end, up to the largest index.
	if err := s.DeleteRange(5, math.MaxUint64); err != nil {
		t.Fatal(err)
	}
	checkLog(t, s, 1, 4, 1, nil)
	store(t, s, entries(5, 5, 3))
	checkLog(t, s, 1, 5, 1, map[uint64]uint64{5: 3})
}

// After a snapshot install a monotonic store loses its whole log, and the
// next entry follows the snapshot, wherever that is.
func TestDeleteAllThenStartElsewhere(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	store(t, s, entries(1, 10, 1))
	if err := s.DeleteRange(1, 10); err != nil {
		t.Fatal(err)
	}
	checkLog(t, s, 0, 0, 0, nil)
	store(t, s, entries(500, 501, 4))
	checkLog(t, s, 500, 501, 4, nil)
	if err := s.DeleteRange(0, math.MaxUint64); err != nil {
		t.Fatal(err)
	}
	checkLog(t, s, 0, 0, 0, nil)
}

func TestHoleRefused(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	store(t, s, entries(1, 10, 1))
	if err := s.DeleteRange(3, 5); !errors.Is(err, ErrHole) {
		t.Fatalf("DeleteRange(3, 5) of [1, 10]: %v, want ErrHole", err)
	}
	checkLog(t, s, 1, 10, 1, nil)
}

func TestStable(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	if v, err := s.Get([]byte("CurrentTerm")); err != ErrKeyNotFound || err.Error() != "not found" || v != nil {
		t.Fatalf("Get of a key never set: %q, %v; raft wants an error reading \"not found\"", v, err)
	}
	if v, err := s.GetUint64([]byte("CurrentTerm")); err != ErrKeyNotFound || v != 0 {
		t.Fatalf("GetUint64 of a key never set: %d, %v", v, err)
	}
	for _, v := range []string{"node-a", "", "node-b"} {
		if err := s.Set([]byte("LastVoteCand"), []byte(v)); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Get([]byte("LastVoteCand")); err != nil || string(got) != v {
			t.Fatalf("Get after Set(%q): %q, %v", v, got, err)
		}
	}
	for _, v := range []uint64{0, 1, 1 << 32, math.MaxUint64} {
		if err := s.SetUint64([]byte("CurrentTerm"), v); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetUint64([]byte("CurrentTerm")); err != nil || got != v {
			t.Fatalf("GetUint64 after SetUint64(%d): %d, %v", v, got, err)
		}
	}
	if _, err := s.GetUint64([]byte("LastVoteCand")); !errors.Is(err, lsm.ErrCorruption) {
		t.Fatalf("GetUint64 of a 6-byte value: %v, want ErrCorruption", err)
	}
	// Stable keys and log keys live apart: a stable key shaped like a log
	// key is not an entry, and the log's bounds ignore it.
	if err := s.Set(logKey(3), []byte("x")); err != nil {
		t.Fatal(err)
	}
	checkLog(t, s, 0, 0, 0, nil)
}

func TestReopenKeepsEverything(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, nil)
	store(t, s, entries(1, 100, 1))
	if err := errors.Join(s.DeleteRange(1, 30), s.DeleteRange(91, 100), s.SetUint64([]byte("term"), 7),
		s.Set([]byte("vote"), []byte("n2"))); err != nil {
		t.Fatal(err)
	}
	check := func(s *Store) {
		t.Helper()
		checkLog(t, s, 31, 90, 1, nil)
		if v, err := s.GetUint64([]byte("term")); err != nil || v != 7 {
			t.Fatalf("term %d, %v", v, err)
		}
		if v, err := s.Get([]byte("vote")); err != nil || string(v) != "n2" {
			t.Fatalf("vote %q, %v", v, err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir, nil) // from the WAL: entries and range tombstones in the memtable
	check(s)
	// Again from tables: the range tombstones flushed and compacted with
	// the entries they cover.
	if err := errors.Join(s.db.Flush(), s.db.Compact(), s.Close()); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir, nil)
	check(s)
}

func TestClosedStoreErrs(t *testing.T) {
	s, err := Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	store(t, s, entries(1, 3, 1))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var l hraft.Log
	_, e1 := s.FirstIndex()
	_, e2 := s.LastIndex()
	_, e3 := s.Get([]byte("k"))
	_, e4 := s.GetUint64([]byte("k"))
	for i, err := range []error{e1, e2, e3, e4, s.GetLog(1, &l), s.StoreLogs(entries(4, 4, 1)), s.StoreLog(entries(4, 4, 1)[0]),
		s.DeleteRange(1, 2), s.Set([]byte("k"), nil), s.SetUint64([]byte("k"), 1), s.Close()} {
		if !errors.Is(err, lsm.ErrClosed) {
			t.Errorf("call %d on a closed store: %v, want ErrClosed", i, err)
		}
	}
}

// Each write is one commit and one fsync, however many entries it holds:
// one of the WAL by the engine's count, and one sync of any file or
// directory by the file system's, so that no sync the engine does not
// count as the WAL's (a table's, the manifest's, a directory's) hides
// behind it.
func TestOneSyncPerWrite(t *testing.T) {
	var fsSyncs atomic.Uint64
	s := openStore(t, "db", &lsm.Options{FS: syncCountFS{vfs.NewMem(), &fsSyncs}})
	walSyncs := func() uint64 { return s.db.Stats().WALSyncs }
	for _, w := range []struct {
		name  string
		write func() error
	}{ // in this order: DeleteRange needs the entries
		{"StoreLogs of 64", func() error { return s.StoreLogs(entries(1, 64, 1)) }},
		{"StoreLog", func() error { return s.StoreLog(entries(65, 65, 1)[0]) }},
		{"DeleteRange", func() error { return s.DeleteRange(1, 40) }},
		{"SetUint64", func() error { return s.SetUint64([]byte("t"), 1) }},
	} {
		before, fsBefore := walSyncs(), fsSyncs.Load()
		if err := w.write(); err != nil {
			t.Fatal(err)
		}
		if n := walSyncs() - before; n != 1 {
			t.Errorf("%s: %d WAL fsyncs, want 1", w.name, n)
		}
		if n := fsSyncs.Load() - fsBefore; n != 1 {
			t.Errorf("%s: %d syncs of files and directories, want 1", w.name, n)
		}
	}
}

// syncCountFS counts the syncs of its files and directories. Its files
// stay vfs.Mappers when the FS's are, so that the WAL is appended as it
// is on the OS, through a mapping.
type syncCountFS struct {
	vfs.FS
	syncs *atomic.Uint64
}

func (f syncCountFS) Create(name string) (vfs.File, error) {
	file, err := f.FS.Create(name)
	if err != nil {
		return nil, err
	}
	counted := syncCountFile{file, f.syncs}
	if m, ok := file.(vfs.Mapper); ok {
		return mappedSyncCountFile{counted, m}, nil
	}
	return counted, nil
}

func (f syncCountFS) SyncDir(dir string) error {
	f.syncs.Add(1)
	return f.FS.SyncDir(dir)
}

type syncCountFile struct {
	vfs.File
	syncs *atomic.Uint64
}

func (f syncCountFile) Sync() error {
	f.syncs.Add(1)
	return f.File.Sync()
}

type mappedSyncCountFile struct {
	syncCountFile
	vfs.Mapper
}

// What a write acknowledged survives a machine crash: the file system
// keeps only what was synced.
func TestAcknowledgedWritesSurviveCrash(t *testing.T) {
	mem := vfs.NewMem()
	s := openStore(t, "db", &lsm.Options{FS: mem})
	store(t, s, entries(1, 50, 1))
	if err := errors.Join(s.DeleteRange(1, 10), s.DeleteRange(45, 50), s.SetUint64([]byte("term"), 3)); err != nil {
		t.Fatal(err)
	}
	store(t, s, entries(45, 47, 2))
	s2 := openStore(t, "db", &lsm.Options{FS: mem.CrashClone()})
	checkLog(t, s2, 11, 47, 1, map[uint64]uint64{45: 2, 46: 2, 47: 2})
	if v, err := s2.GetUint64([]byte("term")); err != nil || v != 3 {
		t.Fatalf("term after the crash: %d, %v", v, err)
	}
}

// A truncated head costs one range tombstone to write; its space comes
// back when compaction merges the tombstone with the entries it covers.
func TestTruncationGivesSpaceBack(t *testing.T) {
	s := openStore(t, t.TempDir(), &lsm.Options{MemtableSize: 1 << 20})
	logs := benchLogsForTest(20000, 1024)
	for i := 0; i < len(logs); i += 500 {
		store(t, s, logs[i:i+500])
	}
	if err := errors.Join(s.db.Flush(), s.db.Compact()); err != nil {
		t.Fatal(err)
	}
	before := s.db.Stats().Total.Bytes
	walBefore := s.db.Stats().WALBytes
	if err := s.DeleteRange(1, 19900); err != nil {
		t.Fatal(err)
	}
	if n := s.db.Stats().WALBytes - walBefore; n > 100 {
		t.Fatalf("truncating 19,900 entries wrote %d WAL bytes: more than one range tombstone", n)
	}
	if err := errors.Join(s.db.Flush(), s.db.Compact()); err != nil {
		t.Fatal(err)
	}
	after := s.db.Stats().Total.Bytes
	// 100 entries of 1 KiB are left: 0.5% of what there was; allow 2%.
	if after > before/50 {
		t.Fatalf("tables hold %d bytes after truncating 99.5%% of %d and compacting", after, before)
	}
	t.Logf("table bytes: %d before the truncation, %d after it and a compaction", before, after)
	checkLogRange(t, s, 19901, 20000)
}

// benchLogsForTest returns n contiguous entries from index 1, each with a
// value of size random bytes of its own (which snappy cannot shrink).
func benchLogsForTest(n, size int) []*hraft.Log {
	logs := benchLogs(n, size)
	for i, l := range logs {
		l.Index = uint64(i + 1)
	}
	return logs
}

func checkLogRange(t *testing.T, s *Store, first, last uint64) {
	t.Helper()
	f, _ := s.FirstIndex()
	l, _ := s.LastIndex()
	if f != first || l != last {
		t.Fatalf("bounds [%d, %d], want [%d, %d]", f, l, first, last)
	}
	var e hraft.Log
	for _, i := range []uint64{first, last} {
		if err := s.GetLog(i, &e); err != nil {
			t.Fatalf("GetLog(%d): %v", i, err)
		}
	}
	if err := s.GetLog(first-1, &e); err != hraft.ErrLogNotFound {
		t.Fatalf("GetLog(%d): %v", first-1, err)
	}
}

// A new Store's directory, and the directories above it that Open made,
// survive a machine crash with what was written in them.
func TestNewDirectorySurvivesCrash(t *testing.T) {
	mem := vfs.NewMem()
	s := openStore(t, "a/b/log", &lsm.Options{FS: mem})
	store(t, s, entries(1, 5, 1))
	f := openFSM(t, "a/c/fsm", &lsm.Options{FS: mem})
	apply(t, f, 1, PutCommand([]byte("k"), []byte("v")))
	snap, err := f.Snapshot() // syncs the state
	if err != nil {
		t.Fatal(err)
	}
	snap.Release()
	crashed := mem.CrashClone()
	checkLog(t, openStore(t, "a/b/log", &lsm.Options{FS: crashed}), 1, 5, 1, nil)
	checkState(t, openFSM(t, "a/c/fsm", &lsm.Options{FS: crashed}), 1, map[string]string{"k": "v"})
}

// Readers racing a writer that appends, truncates the head and drops the
// suffix always see the bounds of one write, never the first of one with
// the last of another: an empty log, or first ≤ last. Under -race it also
// checks that the reads need no lock.
func TestConcurrentReadersSeeWholeBounds(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	done := make(chan struct{})
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			for {
				select {
				case <-done:
					errs <- nil
					return
				default:
				}
				b := s.bounds.Load() // what FirstIndex and LastIndex read
				if (b.first == 0) != (b.last == 0) || b.first > b.last {
					errs <- fmt.Errorf("bounds [%d, %d]", b.first, b.last)
					return
				}
				var l hraft.Log
				if err := s.GetLog(b.last, &l); err != nil && err != hraft.ErrLogNotFound {
					errs <- err // ErrLogNotFound: deleted since, or an empty log
					return
				}
			}
		}()
	}
	next := uint64(1)
	for round := range 200 {
		store(t, s, entries(next, next+9, 1))
		next += 10
		switch round % 3 {
		case 0:
			first, _ := s.FirstIndex()
			if err := s.DeleteRange(first, first+4); err != nil {
				t.Fatal(err)
			}
		case 1:
			if err := s.DeleteRange(next-3, next-1); err != nil {
				t.Fatal(err)
			}
			next -= 3
		case 2:
			if round%30 == 2 {
				if err := s.DeleteRange(0, next); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	close(done)
	for range 3 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// Open after a long head truncation reads a few blocks, not the entries
// the range tombstone covers: until compaction drops them an iterator
// steps over each, so Open seeks from the first index the Store recorded
// with the truncation.
func TestOpenAfterTruncationSkipsDeletedEntries(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, &lsm.Options{MemtableSize: 1 << 20})
	logs := benchLogsForTest(20000, 1024)
	for i := 0; i < len(logs); i += 500 {
		store(t, s, logs[i:i+500])
	}
	if err := errors.Join(s.DeleteRange(1, 19900), s.db.Flush(), s.Close()); err != nil {
		t.Fatal(err)
	}
	counting := vfs.NewFault(vfs.Default) // counts, injects nothing
	s = openStore(t, dir, &lsm.Options{FS: counting})
	checkLogRange(t, s, 19901, 20000)
	// Opening the tables (footers, indexes, filters), the two ends of
	// the log, checkLogRange's reads: tens of reads, where stepping over
	// 19,900 entries of 1 KiB reads thousands of blocks.
	if n := counting.Count(vfs.OpRead); n > 500 {
		t.Fatalf("Open and three reads made %d file reads: Open stepped over the deleted entries", n)
	}
	t.Logf("%d file reads", counting.Count(vfs.OpRead))
}

// The first index Open seeks from stays a lower bound of the first entry
// through every kind of write, across reopens: head truncation, deleting
// everything, starting again below and above where the log was.
func TestFirstIndexAcrossReopens(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, nil)
	reopen := func() {
		t.Helper()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = openStore(t, dir, nil)
	}
	store(t, s, entries(100, 120, 1))
	reopen()
	checkLog(t, s, 100, 120, 1, nil)
	if err := s.DeleteRange(100, 110); err != nil {
		t.Fatal(err)
	}
	reopen()
	checkLog(t, s, 111, 120, 1, nil)
	if err := s.DeleteRange(115, 120); err != nil { // a suffix: first unchanged
		t.Fatal(err)
	}
	reopen()
	checkLog(t, s, 111, 114, 1, nil)
	if err := s.DeleteRange(0, math.MaxUint64); err != nil {
		t.Fatal(err)
	}
	reopen()
	checkLog(t, s, 0, 0, 0, nil)
	store(t, s, entries(50, 55, 2)) // below where the log was
	reopen()
	checkLog(t, s, 50, 55, 2, nil)
	if err := s.DeleteRange(50, 55); err != nil {
		t.Fatal(err)
	}
	store(t, s, entries(7000, 7001, 3)) // above
	reopen()
	checkLog(t, s, 7000, 7001, 3, nil)
}
