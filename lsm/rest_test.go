package lsm

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/monbandb/monban/compaction"
	"github.com/monbandb/monban/vfs"
)

// restOpts make a small tree that a few thousand writes fill: 8 KiB
// memtables, a 64 KiB base level, so that L0 becomes due (and rest
// compactions may follow, restDue) long before the writes end.
func restOpts(l *EventListener) *Options {
	return &Options{MemtableSize: 8 << 10, TargetFileSize: 16 << 10, LBaseMaxBytes: 64 << 10, EventListener: l}
}

// restFill writes n random keys (with overwrites and deletes) into d and
// want, seeded.
func restFill(t *testing.T, d *DB, want model, rng *rand.Rand, n int) {
	t.Helper()
	for i := range n {
		k := fmt.Sprintf("k%05d", rng.IntN(4*n))
		if rng.IntN(10) == 0 {
			if err := d.Delete([]byte(k)); err != nil {
				t.Fatal(err)
			}
			delete(want, k)
			continue
		}
		v := fmt.Sprintf("v%d-%s", i, k)
		if err := d.Put([]byte(k), []byte(v)); err != nil {
			t.Fatal(err)
		}
		want[k] = v
	}
}

// settleL0 flushes d, waits until no flush or compaction runs, and
// returns L0's table count, failing if a compaction is still counted as
// running.
func settleL0(t *testing.T, d *DB) int {
	t.Helper()
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	d.waitIdle()
	s := d.Stats()
	if s.CompactionsRunning != 0 || s.BackgroundError != nil {
		t.Fatalf("idle: %d compactions running, background error %v", s.CompactionsRunning, s.BackgroundError)
	}
	return s.Levels[0].Files
}

// checkModel compares every key of d with want: an iteration and a Get
// each.
func checkModel(t *testing.T, d *DB, want model) {
	t.Helper()
	if got := dbContents(t, d); !maps.Equal(got, want) {
		t.Fatalf("DB differs from the model:\n%s", diffModels(got, want))
	}
	for k, v := range want {
		mustGet(t, d, k, v)
	}
}

// TestRestCompactionEmptiesL0: a DB filled past many flushes and left
// idle ends with at most one L0 table and no compaction running, every
// key as the model says; and each later round of writes and Flush that
// takes L0 to two tables ends, at rest, with one rest compaction that
// empties L0 again.
func TestRestCompactionEmptiesL0(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	var mu sync.Mutex // two compactions may end at once
	kinds := map[compaction.Kind]int{}
	l := &EventListener{CompactionEnd: func(i CompactionInfo) {
		mu.Lock()
		kinds[i.Kind]++
		mu.Unlock()
	}}
	d := openMem(t, vfs.NewMem(), restOpts(l))
	defer d.Close()
	want := model{}

	restFill(t, d, want, rng, 8000)
	if n := settleL0(t, d); n > 1 {
		t.Fatalf("at rest after the fill: %d L0 tables, want at most 1 (%v)", n, levelFiles(d.Stats()))
	}
	if d.Stats().Compactions.L0 == 0 {
		t.Fatalf("the fill never made L0 due: the test does not reach the rest rule")
	}
	checkModel(t, d, want)

	// Each round flushes one table into L0 at rest. Whenever that makes
	// two, a rest compaction takes both.
	for round := range 4 {
		before := d.Stats().Compactions.Rest
		l0 := d.Stats().Levels[0].Files
		restFill(t, d, want, rng, 50)
		n := settleL0(t, d)
		rest := d.Stats().Compactions.Rest - before
		switch {
		case l0 == 0 && (n != 1 || rest != 0):
			t.Fatalf("round %d: from an empty L0, one flush left %d L0 tables after %d rest compactions; want 1 after none", round, n, rest)
		case l0 == 1 && (n != 0 || rest != 1):
			t.Fatalf("round %d: a second L0 table left %d L0 tables after %d rest compactions; want 0 after 1", round, n, rest)
		}
		checkModel(t, d, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if s := d.Stats(); s.Compactions.Rest == 0 || uint64(kinds[compaction.KindRest]) != s.Compactions.Rest {
		t.Fatalf("%d rest compactions counted, %d CompactionEnd events of kind rest", s.Compactions.Rest, kinds[compaction.KindRest])
	}
}

// TestStaticDBBecomesIdle: once at rest, a DB nothing writes to starts no
// compaction, however often the scheduler is asked — with one table in
// L0, which a rest compaction must leave alone, or it would rewrite it
// for ever.
func TestStaticDBBecomesIdle(t *testing.T) {
	d := openMem(t, vfs.NewMem(), restOpts(nil))
	defer d.Close()
	want := model{}
	rng := rand.New(rand.NewPCG(1, 2))
	restFill(t, d, want, rng, 8000)
	settleL0(t, d)
	if d.Stats().Levels[0].Files == 0 {
		restFill(t, d, want, rng, 50)
	}
	if n := settleL0(t, d); n != 1 {
		t.Fatalf("%d L0 tables, want the one this test needs", n)
	}
	before := d.Stats().Compactions
	for range 10 {
		d.mu.Lock()
		d.maybeScheduleCompaction()
		d.mu.Unlock()
		settleL0(t, d) // Flush of an empty memtable: nothing to write
	}
	if after := d.Stats().Compactions; after != before {
		t.Fatalf("a static DB kept compacting: %+v, then %+v", before, after)
	}
	checkModel(t, d, want)
}

// TestPendingWriteDefersRest: a write that reached the memtable but no
// table yet means the DB is not at rest, so the flush that makes L0 two
// tables leaves them; the next Flush, which leaves nothing unflushed,
// compacts them.
func TestPendingWriteDefersRest(t *testing.T) {
	begun, release := make(chan struct{}), make(chan struct{})
	hold := false
	l := &EventListener{FlushBegin: func(FlushInfo) {
		if hold {
			begun <- struct{}{}
			<-release
		}
	}}
	d := openMem(t, vfs.NewMem(), restOpts(l))
	defer d.Close()
	want := model{}
	rng := rand.New(rand.NewPCG(3, 4))
	restFill(t, d, want, rng, 8000)
	settleL0(t, d)
	if d.Stats().Levels[0].Files == 0 {
		restFill(t, d, want, rng, 50)
		settleL0(t, d)
	}
	before := d.Stats().Compactions.Rest

	restFill(t, d, want, rng, 50)
	hold = true // no flush runs now: the settles above waited for them
	flushed := make(chan error)
	go func() { flushed <- d.Flush() }()
	<-begun
	hold = false
	restFill(t, d, want, rng, 1) // pending when the held flush ends
	close(release)
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	d.waitIdle()
	if s := d.Stats(); s.Levels[0].Files != 2 || s.Compactions.Rest != before {
		t.Fatalf("with a write pending: %d L0 tables after %d rest compactions, want 2 after none", s.Levels[0].Files, s.Compactions.Rest-before)
	}
	if n := settleL0(t, d); n != 0 || d.Stats().Compactions.Rest != before+1 {
		t.Fatalf("at rest: %d L0 tables after %d rest compactions, want 0 after 1", n, d.Stats().Compactions.Rest-before)
	}
	checkModel(t, d, want)
}
