package raft

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"testing"
	"time"

	hraft "github.com/hashicorp/raft"
	"github.com/monbandb/monban/lsm"
	"github.com/monbandb/monban/vfs"
)

// writeOldLayout writes logs into the DB in dir as a Store of the layout
// before runs wrote them: each entry under its 'l' key, and the first
// index under firstKey, as its first StoreLogs did.
func writeOldLayout(t *testing.T, dir string, opts *lsm.Options, logs []*hraft.Log) {
	t.Helper()
	db, err := lsm.Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	var b lsm.Batch
	for _, l := range logs {
		b.Put(logKey(l.Index), appendLog(nil, l))
	}
	b.Put([]byte(firstKey), logKey(logs[0].Index)[1:])
	if err := errors.Join(db.Write(&b, lsm.Sync), db.Close()); err != nil {
		t.Fatal(err)
	}
}

// keysUnder counts the keys under prefix.
func keysUnder(t *testing.T, s *Store, prefix byte) int {
	t.Helper()
	it := s.db.NewIter(&lsm.IterOptions{LowerBound: []byte{prefix}, UpperBound: []byte{prefix + 1}})
	n := 0
	for range it.All() {
		n++
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	return n
}

// testdata/store-v1 is a directory a Store of the layout before runs
// wrote (the code of f40a0a2): entries 1-60 of term 1 in batches of 10,
// a flush, the head 1-10 deleted, 61-80 stored, the suffix 71-80 deleted
// and 71-75 stored again in term 2, then CurrentTerm 2 and LastVoteCand
// "n2". This version opens it, reads it, and writes after it.
func TestOldLayoutDirectoryReads(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/store-v1")); err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir, nil)
	term2 := map[uint64]uint64{71: 2, 72: 2, 73: 2, 74: 2, 75: 2}
	checkLog(t, s, 11, 75, 1, term2)
	if v, err := s.GetUint64([]byte("CurrentTerm")); err != nil || v != 2 {
		t.Fatalf("CurrentTerm %d, %v", v, err)
	}
	if v, err := s.Get([]byte("LastVoteCand")); err != nil || string(v) != "n2" {
		t.Fatalf("LastVoteCand %q, %v", v, err)
	}
	if n := keysUnder(t, s, runPrefix); n != 0 {
		t.Fatalf("opening and reading wrote %d runs", n)
	}
	// Appends go to runs after the old entries; truncations cut both.
	store(t, s, entries(76, 90, 3))
	for i := uint64(76); i <= 90; i++ {
		term2[i] = 3
	}
	checkLog(t, s, 11, 90, 1, term2)
	if err := s.DeleteRange(20, math.MaxUint64); err != nil { // into the old entries
		t.Fatal(err)
	}
	checkLog(t, s, 11, 19, 1, nil)
	store(t, s, entries(20, 30, 4))
	terms := map[uint64]uint64{}
	for i := uint64(20); i <= 30; i++ {
		terms[i] = 4
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir, nil)
	checkLog(t, s, 11, 30, 1, terms)
	if err := s.DeleteRange(0, 25); err != nil { // past the old entries
		t.Fatal(err)
	}
	if b := s.bounds.Load(); b.oldLast != 0 {
		t.Fatalf("after the old entries' deletion, oldLast is %d", b.oldLast)
	}
	checkLog(t, s, 26, 30, 4, nil)
	if err := errors.Join(s.db.Flush(), s.db.Compact()); err != nil {
		t.Fatal(err)
	}
	if n := keysUnder(t, s, logPrefix); n != 0 {
		t.Fatalf("%d 'l' keys left after the head passed them", n)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checkLog(t, openStore(t, dir, nil), 26, 30, 4, nil)
}

// A batch is one run up to runMaxEntries entries or runMaxBytes bytes,
// more runs past either; a call is still one commit.
func TestRunLimits(t *testing.T) {
	s := openStore(t, "db", &lsm.Options{FS: vfs.NewMem()})
	store(t, s, entries(1, 64, 1))
	if n := keysUnder(t, s, runPrefix); n != 1 {
		t.Fatalf("a batch of 64: %d runs, want 1", n)
	}
	store(t, s, entries(65, 65+2*runMaxEntries, 1))
	if n := keysUnder(t, s, runPrefix); n != 4 {
		t.Fatalf("then a batch of %d: %d runs, want 1+3", 2*runMaxEntries+1, n)
	}
	checkLog(t, s, 1, 65+2*runMaxEntries, 1, nil)
	// Entries of a third of runMaxBytes, with their fields, go two to a
	// run; one larger than runMaxBytes is a run alone.
	big := append(benchLogs(5, runMaxBytes/3), benchLogs(1, 2*runMaxBytes)...)
	for i, l := range big {
		l.Index = uint64(66 + 2*runMaxEntries + i)
	}
	store(t, s, big)
	if n := keysUnder(t, s, runPrefix); n != 4+3+1 {
		t.Fatalf("then 5 entries of %d bytes and 1 of %d: %d runs, want 4+3+1", runMaxBytes/3, 2*runMaxBytes, n)
	}
	for _, l := range big {
		var got hraft.Log
		if err := s.GetLog(l.Index, &got); err != nil || !bytes.Equal(got.Data, l.Data) {
			t.Fatalf("GetLog(%d): %v", l.Index, err)
		}
	}
}

// Truncations that cut runs: a head truncation leaves the run whole and
// hides its entries below the first index, across reopens; a suffix
// truncation writes the run's kept entries again, dropping the hidden.
func TestTruncationCutsRuns(t *testing.T) {
	mem := vfs.NewMem()
	opts := &lsm.Options{FS: mem}
	s := openStore(t, "db", opts)
	reopen := func() {
		t.Helper()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s = openStore(t, "db", opts)
	}
	store(t, s, entries(1, 10, 1))
	store(t, s, entries(11, 20, 1))
	if err := s.DeleteRange(1, 4); err != nil {
		t.Fatal(err)
	}
	checkLog(t, s, 5, 20, 1, nil)
	reopen()
	checkLog(t, s, 5, 20, 1, nil)
	if err := s.DeleteRange(8, 30); err != nil { // cuts the run 1-10, already cut at 5
		t.Fatal(err)
	}
	checkLog(t, s, 5, 7, 1, nil)
	reopen()
	checkLog(t, s, 5, 7, 1, nil)
	it := s.db.NewIter(runIterOptions)
	if !it.First() || !bytes.Equal(it.Key(), runKey(7)) {
		t.Fatalf("the run left is %x, want the run ending at 7", it.Key())
	}
	r, err := parseRun(7, it.Value())
	if err := errors.Join(err, it.Close()); err != nil || r.first != 5 {
		t.Fatalf("the run ending at 7 starts at %d, %v; want 5, the first index", r.first, err)
	}
	store(t, s, entries(8, 12, 2))
	if err := s.DeleteRange(10, 12); err != nil { // cuts the run 8-12
		t.Fatal(err)
	}
	if err := s.DeleteRange(8, 9); err != nil { // the whole run 8-9, exactly
		t.Fatal(err)
	}
	checkLog(t, s, 5, 7, 1, nil)
	store(t, s, entries(8, 9, 3))
	reopen()
	checkLog(t, s, 5, 9, 1, map[uint64]uint64{8: 3, 9: 3})
	if err := s.DeleteRange(6, 9); err != nil { // cuts the run 5-7 to one entry
		t.Fatal(err)
	}
	if err := s.DeleteRange(4, 5); err != nil { // that entry is all there is
		t.Fatal(err)
	}
	checkLog(t, s, 0, 0, 0, nil)
	reopen()
	checkLog(t, s, 0, 0, 0, nil)
}

// A log whose head is in the layout before runs and whose tail is runs,
// cut at and around the boundary.
func TestMixedLayout(t *testing.T) {
	for _, c := range []struct {
		name       string
		from, to   uint64
		first, end uint64 // the bounds after: end = last
	}{
		{"suffix inside the old entries", 15, math.MaxUint64, 10, 14},
		{"suffix from the first run", 21, 100, 10, 20},
		{"suffix inside the first run", 23, 100, 10, 22},
		{"head to the last old entry", 0, 20, 21, 40},
		{"head inside the old entries", 1, 12, 13, 40},
		{"head into the runs", 1, 25, 26, 40},
	} {
		t.Run(c.name, func(t *testing.T) {
			mem := vfs.NewMem()
			opts := &lsm.Options{FS: mem}
			writeOldLayout(t, "db", opts, entries(10, 20, 1))
			s := openStore(t, "db", opts)
			store(t, s, entries(21, 30, 1))
			store(t, s, entries(31, 40, 1))
			checkLog(t, s, 10, 40, 1, nil)
			if err := s.DeleteRange(c.from, c.to); err != nil {
				t.Fatal(err)
			}
			checkLog(t, s, c.first, c.end, 1, nil)
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = openStore(t, "db", opts)
			checkLog(t, s, c.first, c.end, 1, nil)
			store(t, s, entries(c.end+1, c.end+3, 2))
			checkLog(t, s, c.first, c.end+3, 1, map[uint64]uint64{c.end + 1: 2, c.end + 2: 2, c.end + 3: 2})
		})
	}
}

// logModel is what a log must hold: each index's entry, and the bounds.
type logModel struct {
	logs        map[uint64]*hraft.Log
	first, last uint64
}

func (m *logModel) store(logs []*hraft.Log) {
	for _, l := range logs {
		m.logs[l.Index] = l
	}
	if m.last == 0 {
		m.first = logs[0].Index
	}
	m.last = logs[len(logs)-1].Index
}

// deleteRange is raft's contract for a monotonic log, not the Store's
// code: a prefix, a suffix or all of it goes, anything else inside the
// log is a hole.
func (m *logModel) deleteRange(from, to uint64) error {
	if from > to || m.last == 0 || to < m.first || from > m.last {
		return nil
	}
	switch {
	case from <= m.first && to >= m.last:
		m.first, m.last = 0, 0
	case from <= m.first:
		m.first = to + 1
	case to >= m.last:
		m.last = from - 1
	default:
		return ErrHole
	}
	for i := range m.logs {
		if i >= from && i <= to {
			delete(m.logs, i)
		}
	}
	return nil
}

// randomLogs returns n entries from index on, of random terms, types,
// times and sizes (sometimes none), each with its own bytes.
func randomLogs(rng *rand.Rand, index uint64, n int) []*hraft.Log {
	logs := make([]*hraft.Log, n)
	for i := range logs {
		l := &hraft.Log{Index: index + uint64(i), Term: rng.Uint64N(5) + 1, Type: hraft.LogType(rng.IntN(6)),
			AppendedAt: time.Unix(rng.Int64N(1<<40)-1<<39, rng.Int64N(1e9)).UTC()}
		if rng.IntN(10) > 0 {
			l.Data = make([]byte, rng.IntN(300))
			for j := range l.Data {
				l.Data[j] = byte(rng.Uint32())
			}
		}
		if rng.IntN(5) == 0 {
			l.Extensions = fmt.Appendf(nil, "ext %d", l.Index)
		}
		logs[i] = l
	}
	return logs
}

// TestLogAgainstModel runs random StoreLogs, DeleteRange, GetLog, reopen
// and compaction sequences against logModel, half of them on a log whose
// head is in the layout before runs, and checks after each step the
// bounds and the entries at and around them and at random. The memtable
// is small, so that runs and range tombstones go through flushes and
// compactions into tables.
func TestLogAgainstModel(t *testing.T) {
	seeds, steps := 12, 150
	if long() {
		seeds, steps = 200, 500
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 27))
			mem := vfs.NewMem()
			opts := &lsm.Options{FS: mem, MemtableSize: 64 << 10}
			m := &logModel{logs: map[uint64]*hraft.Log{}}
			if seed%2 == 1 {
				old := randomLogs(rng, 1+rng.Uint64N(100), 1+rng.IntN(100))
				writeOldLayout(t, "db", opts, old)
				m.store(old)
			}
			s := openStore(t, "db", opts)
			for step := range steps {
				op := rng.IntN(20)
				switch {
				case op < 8: // append
					next := m.last + 1
					if m.last == 0 {
						next = 1 + rng.Uint64N(1000)
					}
					n := 1 + rng.IntN(70)
					if rng.IntN(20) == 0 {
						n = runMaxEntries + rng.IntN(runMaxEntries)
					}
					logs := randomLogs(rng, next, n)
					store(t, s, logs)
					m.store(logs)
				case op < 9: // a gap or a step back
					if m.last == 0 {
						continue
					}
					at := m.last + 2
					if rng.IntN(2) == 0 {
						at = m.first + rng.Uint64N(m.last-m.first+1)
					}
					if err := s.StoreLogs(randomLogs(rng, at, 3)); !errors.Is(err, ErrNotContiguous) {
						t.Fatalf("step %d: StoreLogs at %d of [%d, %d]: %v", step, at, m.first, m.last, err)
					}
				case op < 14: // truncate: a prefix, a suffix, all, outside, a hole
					lo, hi := m.first, m.last
					span := hi - lo + 10
					from, to := lo+rng.Uint64N(span)-5, lo+rng.Uint64N(span)-5
					switch rng.IntN(4) {
					case 0:
						from = rng.Uint64N(lo + 1)
					case 1:
						to = hi + rng.Uint64N(3)
						if rng.IntN(4) == 0 {
							to = math.MaxUint64
						}
					}
					want := m.deleteRange(from, to)
					if err := s.DeleteRange(from, to); !errors.Is(err, want) || (want == nil && err != nil) {
						t.Fatalf("step %d: DeleteRange(%d, %d) of [%d, %d]: %v, want %v", step, from, to, lo, hi, err, want)
					}
				case op < 17:
					if err := s.Close(); err != nil {
						t.Fatal(err)
					}
					if rng.IntN(2) == 0 {
						mem = mem.CrashClone() // every write was synced
						opts.FS = mem
					}
					s = openStore(t, "db", opts)
				case op < 18:
					if err := errors.Join(s.db.Flush(), s.db.Compact()); err != nil {
						t.Fatal(err)
					}
				}
				checkModel(t, s, m, rng, step)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = openStore(t, "db", opts)
			for i := m.first; i <= m.last && m.last != 0; i++ {
				checkEntry(t, s, m, i, steps)
			}
		})
	}
}

// checkModel compares the store's bounds with the model's, and reads the
// entries at the bounds, just outside them, and at random inside.
func checkModel(t *testing.T, s *Store, m *logModel, rng *rand.Rand, step int) {
	t.Helper()
	first, err1 := s.FirstIndex()
	last, err2 := s.LastIndex()
	if err := errors.Join(err1, err2); err != nil || first != m.first || last != m.last {
		t.Fatalf("step %d: bounds [%d, %d], %v; model [%d, %d]", step, first, last, err, m.first, m.last)
	}
	checkRunIndex(t, s, step)
	probes := []uint64{m.first, m.last, m.first - 1, m.last + 1, rng.Uint64N(m.last + 2)}
	for range 5 {
		if m.last != 0 {
			probes = append(probes, m.first+rng.Uint64N(m.last-m.first+1))
		}
	}
	for _, i := range probes {
		checkEntry(t, s, m, i, step)
	}
	// A stretch read in order, as raft reads, which GetLog serves from
	// the run it keeps: kept before this step's write, it must not serve.
	from := m.first + rng.Uint64N(m.last-m.first+1)
	for i := from; i <= m.last+1 && i < from+40 && m.last != 0; i++ {
		checkEntry(t, s, m, i, step)
	}
}

// checkRunIndex checks the runs the bounds know against the DB's: each
// is there, follows the one before it, and the last ends the log.
func checkRunIndex(t *testing.T, s *Store, step int) {
	t.Helper()
	b := s.bounds.Load()
	if b.oldLast > b.known || (b.last != 0 && b.known > b.last) {
		t.Fatalf("step %d: oldLast %d, known %d, last %d", step, b.oldLast, b.known, b.last)
	}
	prev := b.known
	for i, end := range b.ends {
		v, err := s.db.Get(runKey(end))
		if err != nil {
			t.Fatalf("step %d: known run ending at %d: %v", step, end, err)
		}
		r, err := parseRun(end, v)
		if err != nil || end <= prev || r.first > prev+1 || (i > 0 && r.first != prev+1) {
			t.Fatalf("step %d: known run [%d, %d], %v, after %d", step, r.first, end, err, prev)
		}
		prev = end
	}
	if b.last != 0 && prev != b.last {
		t.Fatalf("step %d: the runs known end at %d, the log at %d", step, prev, b.last)
	}
}

func checkEntry(t *testing.T, s *Store, m *logModel, i uint64, step int) {
	t.Helper()
	var got hraft.Log
	err := s.GetLog(i, &got)
	want, ok := m.logs[i]
	if !ok {
		if err != hraft.ErrLogNotFound {
			t.Fatalf("step %d: GetLog(%d) outside [%d, %d]: %+v, %v; want raft.ErrLogNotFound", step, i, m.first, m.last, got, err)
		}
		return
	}
	if err != nil {
		t.Fatalf("step %d: GetLog(%d) of [%d, %d]: %v", step, i, m.first, m.last, err)
	}
	if !got.AppendedAt.Equal(want.AppendedAt) {
		t.Fatalf("step %d: GetLog(%d): AppendedAt %v, want %v", step, i, got.AppendedAt, want.AppendedAt)
	}
	w := *want
	got.AppendedAt, w.AppendedAt = time.Time{}, time.Time{}
	if len(w.Data) == 0 {
		w.Data = nil
	}
	if !reflect.DeepEqual(got, w) {
		t.Fatalf("step %d: GetLog(%d) = %+v, want %+v", step, i, got, w)
	}
}

// encodeRun returns logs as a run, as doc.go describes it.
func encodeRun(logs []*hraft.Log) []byte {
	p := binary.AppendUvarint([]byte{runFormatV2}, uint64(len(logs)))
	for _, l := range logs {
		e := appendEntry(nil, l)
		p = append(binary.AppendUvarint(p, uint64(len(e))), e...)
	}
	return p
}

// FuzzDecodeRun: whatever the key and the bytes, every index of a run
// decodes to an entry or a corruption error, never a panic; and the
// entries that decode, encoded again as a run, decode to themselves.
func FuzzDecodeRun(f *testing.F) {
	for _, logs := range [][]*hraft.Log{
		entries(7, 7, 1),
		entries(3, 9, 2),
		{{Index: 1, Type: hraft.LogConfiguration, Extensions: []byte{1, 2}}},
	} {
		f.Add(logs[len(logs)-1].Index, encodeRun(logs))
	}
	f.Add(uint64(5), []byte{runFormatV2, 6})
	f.Add(uint64(1), []byte{runFormatV2, 1, 200})
	f.Fuzz(func(t *testing.T, last uint64, p []byte) {
		r, err := parseRun(last, p)
		if err != nil {
			if !errors.Is(err, lsm.ErrCorruption) {
				t.Fatalf("parseRun: %v does not wrap ErrCorruption", err)
			}
			return
		}
		if r.last != last || r.first == 0 || r.first > last {
			t.Fatalf("run [%d, %d] under the key of %d", r.first, r.last, last)
		}
		var good []*hraft.Log
		for i := r.first; i <= r.last && i-r.first < 1000; i++ {
			var l hraft.Log
			if err := r.decode(i, &l); err != nil {
				if !errors.Is(err, lsm.ErrCorruption) {
					t.Fatalf("decode(%d): %v does not wrap ErrCorruption", i, err)
				}
				break
			}
			if l.Index != i {
				t.Fatalf("decode(%d) gave index %d", i, l.Index)
			}
			good = append(good, &l)
		}
		if len(good) == 0 {
			return
		}
		// The entries that decode, as a run of their own: the same.
		end := good[len(good)-1].Index
		again, err := parseRun(end, encodeRun(good))
		if err != nil || again.first != r.first {
			t.Fatalf("re-encoded: [%d, %d], %v; want from %d", again.first, again.last, err, r.first)
		}
		for _, l := range good {
			var got hraft.Log
			if err := again.decode(l.Index, &got); err != nil || !reflect.DeepEqual(&got, l) {
				t.Fatalf("re-encoded %d: %+v, %v; want %+v", l.Index, got, err, *l)
			}
		}
	})
}
