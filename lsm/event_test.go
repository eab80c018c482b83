package lsm

import (
	"bytes"
	"expvar"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/monbandb/monban/vfs"
)

// TestEventListener: a flush and a compaction report their events in
// order — begin, the tables written, end, then the inputs deleted — with
// the files they name; nil callbacks are allowed.
func TestEventListener(t *testing.T) {
	var mu sync.Mutex
	var events []string
	record := func(format string, args ...any) {
		mu.Lock()
		events = append(events, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	l := &EventListener{
		FlushBegin: func(i FlushInfo) { record("flush begin %d entries", i.Entries) },
		FlushEnd: func(i FlushInfo) {
			record("flush end %v %v", tableNums(i.Output), i.Err)
		},
		CompactionBegin: func(i CompactionInfo) { record("compaction begin %s L%d %v", i.Kind, i.Level, tableNums(i.Inputs)) },
		CompactionEnd: func(i CompactionInfo) {
			record("compaction end L%d %v %v", i.OutputLevel, tableNums(i.Outputs), i.Err)
		},
		TableCreated: func(i TableFileInfo) { record("table created %06d L%d", i.FileNum, i.Level) },
		TableDeleted: func(i TableFileInfo) { record("table deleted %06d", i.FileNum) },
		WALCreated:   func(i WALFileInfo) { record("wal created %06d", i.FileNum) },
	}
	d := openMem(t, vfs.NewMem(), &Options{EventListener: l})
	defer d.Close()
	for i := range 100 {
		d.Put(fmt.Appendf(nil, "k%03d", i), []byte("v"))
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	tables, _ := d.Tables()
	if len(tables) != 1 {
		t.Fatalf("%d tables after one flush", len(tables))
	}
	flushed := tables[0].FileNum
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	tables, _ = d.Tables()
	compacted := tables[0].FileNum
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		"wal created", // the one Open starts, then the flush's rotation
		"wal created",
		"flush begin 100 entries",
		fmt.Sprintf("table created %06d L0", flushed),
		fmt.Sprintf("flush end [%06d] <nil>", flushed),
		fmt.Sprintf("compaction begin move L0 [%06d]", flushed),
		fmt.Sprintf("compaction end L6 [%06d] <nil>", flushed),
	}
	if compacted != flushed {
		t.Fatalf("a one-table Compact into an empty tree rewrote %06d as %06d; want a move", flushed, compacted)
	}
	i := 0
	for _, e := range events {
		if i < len(want) && strings.HasPrefix(e, want[i]) {
			i++
		}
	}
	if i < len(want) {
		t.Fatalf("events:\n%s\nmissing, in this order, from %q on", strings.Join(events, "\n"), want[i])
	}
	// A rewrite: overwrite and compact again, the old table is deleted
	// after the compaction that replaced it ends.
	mu.Unlock()
	for i := range 100 {
		d.Put(fmt.Appendf(nil, "k%03d", i), []byte("w"))
	}
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	d.waitIdle()
	mu.Lock()
	end := slices.IndexFunc(events, func(e string) bool {
		return strings.HasPrefix(e, "compaction end L6") && !strings.Contains(e, fmt.Sprintf("[%06d]", flushed))
	})
	del := slices.Index(events, fmt.Sprintf("table deleted %06d", flushed))
	if end < 0 || del < end {
		t.Fatalf("events:\n%s\nwant %06d deleted after the compaction that merged it ended", strings.Join(events, "\n"), flushed)
	}
}

func tableNums(ts []TableFileInfo) []string {
	var out []string
	for _, t := range ts {
		out = append(out, fmt.Sprintf("%06d", t.FileNum))
	}
	return out
}

// TestStatsString: the table has a row per non-empty level and the total;
// an FPR nothing measured prints "n/a"; the expvar form carries the sticky
// error as text.
func TestStatsString(t *testing.T) {
	fs := vfs.NewFault(vfs.NewMem())
	d := openMem(t, fs, nil)
	defer d.Close()
	for i := range 100 {
		d.Put(fmt.Appendf(nil, "k%03d", i), []byte("v"))
	}
	d.Compact()
	d.Get([]byte("k050"))
	d.Get([]byte("k050x"))
	s := d.Stats().String()
	lines := strings.Split(s, "\n")
	l0, l6, total := strings.Fields(lines[1]), strings.Fields(lines[2]), strings.Fields(lines[3])
	switch {
	case !strings.Contains(lines[0], "FPR") || l0[0] != "L0" || l6[0] != "L6" || total[0] != "total":
		t.Fatalf("Stats.String rows:\n%s", s)
	case l0[6] != "n/a": // L0 was never probed: no FPR to speak of
		t.Fatalf("L0's FPR, which nothing measured, printed as %s:\n%s", l0[6], s)
	case l6[6] != "0.0000%" || l6[3] != "2" || l6[4] != "1": // one negative, no false positive: a measured 0
		t.Fatalf("L6 row %v:\n%s", l6, s)
	}
	d.PublishExpvar("monban-test")
	fs.Inject(vfs.Fault{Op: vfs.OpCreate, Nth: 1, Match: vfs.MatchBase("*.sst")}) // the flush's table
	d.Put([]byte("x"), []byte("y"))
	d.Flush()
	if v := expvar.Get("monban-test").String(); !strings.Contains(v, `"BackgroundError":"monban: flush`) || !strings.Contains(v, `"Flushes":`) {
		t.Fatalf("expvar: %s", v)
	}
}

// TestStatsShowDebt: while a compaction is held at its start, Stats says
// one is running, L0's score is at least 1 and the debt is positive; once
// it is done the debt is gone.
func TestStatsShowDebt(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	l := &EventListener{CompactionBegin: func(CompactionInfo) {
		select {
		case started <- struct{}{}:
			<-release
		default:
		}
	}}
	d := openMem(t, vfs.NewMem(), &Options{EventListener: l, L0CompactionThreshold: 2})
	defer d.Close()
	for round := range 2 {
		for i := range 100 {
			d.Put(fmt.Appendf(nil, "k%03d", i), fmt.Appendf(nil, "v%d", round))
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	<-started
	s := d.Stats()
	close(release)
	if s.CompactionsRunning != 1 || s.Levels[0].Score < 1 || s.CompactionDebt == 0 {
		t.Fatalf("with a compaction held: running %d, L0 score %.2f, debt %d", s.CompactionsRunning, s.Levels[0].Score, s.CompactionDebt)
	}
	d.waitIdle()
	if s := d.Stats(); s.CompactionsRunning != 0 || s.CompactionDebt != 0 || s.Levels[NumLevels-1].Target == 0 {
		t.Fatalf("after the compaction: running %d, debt %d, last level target %d", s.CompactionsRunning, s.CompactionDebt, s.Levels[NumLevels-1].Target)
	}
}

// TestReadersLeaveDeletionToTheDeleter: when an iterator holds the last
// reference to a version whose tables a compaction replaced, closing it
// removes no file itself: the deleter does, on its own goroutine, so a
// read never waits for an unlink or runs a TableDeleted callback.
func TestReadersLeaveDeletionToTheDeleter(t *testing.T) {
	type deletion struct {
		num      uint64
		inReader bool // the callback ran under a read state's unref
	}
	deleted := make(chan deletion, 16)
	l := &EventListener{TableDeleted: func(i TableFileInfo) {
		stack := make([]byte, 64<<10)
		stack = stack[:runtime.Stack(stack, false)]
		deleted <- deletion{i.FileNum, bytes.Contains(stack, []byte("(*readState).unref"))}
	}}
	d := openMem(t, vfs.NewMem(), &Options{EventListener: l})
	defer d.Close()
	for _, v := range []string{"v1", "v2"} {
		for i := range 100 {
			d.Put(fmt.Appendf(nil, "k%03d", i), []byte(v))
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	before, _ := d.Tables()
	it := d.NewIter(nil)
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	select {
	case del := <-deleted:
		t.Fatalf("table %06d deleted while an iterator holds its version", del.num)
	default:
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	// Every table of the tree the iterator held is gone now, each
	// deleted off the read path.
	for range before {
		if del := <-deleted; del.inReader {
			t.Fatalf("table %06d deleted inside the iterator's Close", del.num)
		}
	}
}
