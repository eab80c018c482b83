package lsm

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/vfs"
)

// walEvents records the WALs a DB created and deleted.
type walEvents struct {
	mu               sync.Mutex
	created, deleted []WALFileInfo
}

func (e *walEvents) listener() *EventListener {
	return &EventListener{
		WALCreated: func(i WALFileInfo) { e.mu.Lock(); e.created = append(e.created, i); e.mu.Unlock() },
		WALDeleted: func(i WALFileInfo) { e.mu.Lock(); e.deleted = append(e.deleted, i); e.mu.Unlock() },
	}
}

// TestWALsAreRecycled: once flushes have made WALs obsolete, rotations
// write the next WALs over their files, each file taken once, none of them
// reported deleted; the data reads back after a reopen, and Close leaves
// no obsolete WAL behind.
func TestWALsAreRecycled(t *testing.T) {
	mem := vfs.NewMem()
	var ev walEvents
	d := openMem(t, mem, &Options{MemtableSize: 16 << 10, EventListener: ev.listener()})
	m := model{}
	for i := range 3000 {
		k, v := fmt.Sprintf("k%05d", i%700), fmt.Sprintf("v%d-%s", i, make([]byte, 60))
		if err := d.Put([]byte(k), []byte(v)); err != nil {
			t.Fatal(err)
		}
		m[k] = v
	}
	// Flushed, every WAL but the active one is obsolete: kept or deleted.
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	created := map[uint64]bool{}
	taken := map[uint64]bool{}
	for _, c := range ev.created {
		if r := c.RecycledFrom; r != 0 {
			if !created[r] || taken[r] {
				t.Fatalf("WAL %d reuses %d: created %v, already taken %v", c.FileNum, r, created[r], taken[r])
			}
			taken[r] = true
		}
		created[c.FileNum] = true
	}
	if len(taken) < 5 {
		t.Fatalf("%d of %d WALs reused a file: too few to test recycling", len(taken), len(ev.created))
	}
	for _, del := range ev.deleted {
		if taken[del.FileNum] {
			t.Errorf("WAL %d was reported deleted, but its file was reused", del.FileNum)
		}
	}
	if logs := filesOf(t, mem, "/db", manifest.KindLog); len(logs) != 1 {
		t.Errorf("after Close the directory holds WALs %v, want only the live one", logs)
	}
	r := openMem(t, mem, nil)
	defer r.Close()
	if got := dbContents(t, r); !maps.Equal(got, m) {
		t.Fatalf("after reopening, the DB holds %d keys, %d were written", len(got), len(m))
	}
}

// TestRecycledWALsNeverReplayTheirPast: a recycled file holds an older
// WAL's records past the new WAL's end, and at first nothing else. Keys
// are written, deleted and compacted away, so that an old record replayed
// as the new WAL's would bring a deleted key back. A machine crash is
// taken just after each rotation that reused a file (the new WAL renamed,
// the old one not yet sealed) and at random commits; every reopened copy
// must hold exactly the synced commits.
func TestRecycledWALsNeverReplayTheirPast(t *testing.T) {
	for _, buffered := range []bool{false, true} {
		t.Run(fmt.Sprint("BufferedWAL=", buffered), func(t *testing.T) { testRecycledWALs(t, buffered) })
	}
}

func testRecycledWALs(t *testing.T, buffered bool) {
	seed := modelSeed(t)
	rng := rand.New(rand.NewPCG(seed, 29))
	mem := vfs.NewMem()
	type crash struct {
		fs   *vfs.MemFS
		want model
		why  string
	}
	var crashes []crash
	m := model{}
	reused := 0
	// Rotations run on the committing goroutine, this test's: m is what
	// was acknowledged, and so synced, when the callback runs.
	listener := &EventListener{WALCreated: func(i WALFileInfo) {
		if i.RecycledFrom == 0 {
			return
		}
		reused++
		crashes = append(crashes, crash{mem.CrashClone(), maps.Clone(m), fmt.Sprintf("WAL %d created over %d", i.FileNum, i.RecycledFrom)})
	}}
	d := openMem(t, mem, &Options{Sync: true, BufferedWAL: buffered, MemtableSize: 16 << 10, EventListener: listener})
	defer d.Close()
	for commit := 1; commit <= 2500; commit++ {
		k := []byte(fmt.Sprintf("k%03d", rng.IntN(400)))
		if _, had := m[string(k)]; had && rng.IntN(2) == 0 {
			if err := d.Delete(k); err != nil {
				t.Fatal(err)
			}
			delete(m, string(k))
		} else {
			v := fmt.Sprintf("v%d-%s", commit, make([]byte, rng.IntN(300)))
			if err := d.Put(k, []byte(v)); err != nil {
				t.Fatal(err)
			}
			m[string(k)] = v
		}
		if rng.IntN(100) == 0 {
			crashes = append(crashes, crash{mem.CrashClone(), maps.Clone(m), fmt.Sprintf("commit %d", commit)})
		}
		if commit%400 == 0 {
			// Tombstones reach the last level and go: only the recycled
			// files still hold the keys' old puts.
			if err := d.Compact(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if reused < 5 {
		t.Fatalf("%d rotations reused a file: too few to test recycling", reused)
	}
	for _, c := range crashes {
		r, err := Open("/db", &Options{FS: c.fs})
		if err != nil {
			t.Fatalf("seed %d, crash at %s: reopen: %v", seed, c.why, err)
		}
		got := dbContents(t, r)
		// Recovery flushed what it replayed: every WAL but its new one is
		// obsolete, those kept for reuse included, and Open deleted them.
		if logs := filesOf(t, c.fs, "/db", manifest.KindLog); len(logs) != 1 {
			t.Errorf("seed %d, crash at %s: after Open the directory holds WALs %v, want only the new one", seed, c.why, logs)
		}
		r.Close()
		if !maps.Equal(got, c.want) {
			for k, v := range got {
				if w, ok := c.want[k]; !ok || w != v {
					t.Errorf("seed %d, crash at %s: %s = %.12q, the synced commits say %.12q (present %v)", seed, c.why, k, v, w, ok)
					break
				}
			}
			t.Fatalf("seed %d, crash at %s: the crashed copy holds %d keys, the synced commits %d", seed, c.why, len(got), len(c.want))
		}
	}
}

// TestWALReuseFailureFallsBack: a rotation whose file cannot be reused
// creates a new one, and deletes the obsolete file it could not reuse;
// writes go on.
func TestWALReuseFailureFallsBack(t *testing.T) {
	mem := vfs.NewMem()
	ffs := vfs.NewFault(mem)
	var ev walEvents
	d := openMem(t, ffs, &Options{MemtableSize: 16 << 10, EventListener: ev.listener()})
	m := model{}
	put := func(n int) {
		for i := range n {
			k, v := fmt.Sprintf("k%05d", i%500), fmt.Sprintf("v%d-%s", i, make([]byte, 60))
			if err := d.Put([]byte(k), []byte(v)); err != nil {
				t.Fatal(err)
			}
			m[k] = v
		}
	}
	put(1500)
	// Match sees the Reuse the rule fails, the first from now: its WAL,
	// and where the rotation's WALCreated will fall among the events.
	failed, createdBefore := "", 0
	ffs.Inject(vfs.Fault{Op: vfs.OpReuse, Nth: 1, Match: func(name string) bool {
		if failed == "" {
			failed = name
			ev.mu.Lock()
			createdBefore = len(ev.created)
			ev.mu.Unlock()
		}
		return true
	}})
	put(1500)
	ev.mu.Lock()
	created, deleted := slices.Clone(ev.created), slices.Clone(ev.deleted)
	ev.mu.Unlock()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if ffs.Injected() != 1 || failed == "" {
		t.Fatalf("%d faults injected on %q, want the one Reuse", ffs.Injected(), failed)
	}
	_, num, _ := manifest.ParseFilename(filepath.Base(failed))
	if len(created) <= createdBefore || created[createdBefore].RecycledFrom != 0 {
		t.Fatalf("the rotation whose Reuse failed created %+v, want a new file", created[createdBefore:])
	}
	if !slices.ContainsFunc(deleted, func(i WALFileInfo) bool { return i.FileNum == num }) {
		t.Fatalf("WAL %d, which could not be reused, was not deleted before Close: deleted %v", num, deleted)
	}
	r := openMem(t, mem, nil)
	defer r.Close()
	if got := dbContents(t, r); !maps.Equal(got, m) {
		t.Fatalf("the DB holds %d keys, %d were written", len(got), len(m))
	}
}

// TestRepairCallsAnUntouchedRecycledWALMonbans: Flush rotates onto a
// recycled file, and Close follows after no commit, or a few, so the live
// WAL ends where the older log's bytes it was written over go on. Where no
// mapped writer cuts the file on Close (FaultFS's files are no Mappers;
// BufferedWAL's writer never maps), Repair of that healthy directory must
// still merge the WAL whole, not set it aside as another program's or as
// damaged: Close seals the log.
func TestRepairCallsAnUntouchedRecycledWALMonbans(t *testing.T) {
	cases := []struct {
		name    string
		fs      func(vfs.FS) vfs.FS
		opts    Options
		commits int
	}{
		{"no-mapper", func(fs vfs.FS) vfs.FS { return vfs.NewFault(fs) }, Options{}, 0},
		{"buffered-wal", func(fs vfs.FS) vfs.FS { return fs }, Options{BufferedWAL: true}, 10},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mem := vfs.NewMem()
			var ev walEvents
			opts := c.opts
			opts.MemtableSize, opts.EventListener = 16<<10, ev.listener()
			d := openMem(t, c.fs(mem), &opts)
			for i := range 3000 {
				if err := d.Put(fmt.Appendf(nil, "k%05d", i%700), make([]byte, 60)); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
			for i := range c.commits {
				if err := d.Put(fmt.Appendf(nil, "after%d", i), nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			if last := ev.created[len(ev.created)-1]; last.RecycledFrom == 0 {
				t.Fatalf("the live WAL %d was not recycled: the test needs one that was", last.FileNum)
			}
			repairFindsNothingWrong(t, "after a clean Close", mem)
		})
	}
}

// TestRepairCallsACrashedRecycledWALEmpty: a crash right after a rotation
// onto a recycled file, before any commit, leaves the live WAL holding only
// the older log's bytes, and no seal. Open takes it for an empty log;
// Repair must too (wal.OlderLog: its first fragment verifies as an older
// log's), merging it as empty, not setting it aside as another program's
// file (a black-box crash attack found it so).
func TestRepairCallsACrashedRecycledWALEmpty(t *testing.T) {
	mem := vfs.NewMem()
	var ev walEvents
	d := openMem(t, mem, &Options{EventListener: ev.listener()})
	defer d.Close()
	last := flushUntilRecycled(t, d, &ev, 3, func(round int) {
		for i := range 50 {
			if err := d.Put(fmt.Appendf(nil, "k%03d", i), fmt.Appendf(nil, "v%d-%d", round, i)); err != nil {
				t.Fatal(err)
			}
		}
	})
	for _, crash := range []struct {
		name string
		fs   *vfs.MemFS
	}{{"process crash", mem.ProcessCrashClone()}, {"machine crash", mem.CrashClone()}} {
		repairFindsNothingWrong(t, crash.name, crash.fs)
		r := openMem(t, crash.fs, nil)
		mustGet(t, r, "k007", fmt.Sprintf("v%d-7", last))
		r.Close()
	}
}

// TestRepairAfterACrashOnARecycledWAL: the newest WAL took commits, in a
// file recycled from a longer log, and a crash left it unsealed: past its
// records lie the older log's bytes, as after most crashes once WALs are
// recycled. Repair, like Open, must read that as the log's end, not as
// damage to set aside (a review found every such crash reported so), and
// hold what Open holds.
func TestRepairAfterACrashOnARecycledWAL(t *testing.T) {
	mem := vfs.NewMem()
	var ev walEvents
	d := openMem(t, mem, &Options{MemtableSize: 256 << 10, EventListener: ev.listener()})
	defer d.Close()
	flushUntilRecycled(t, d, &ev, 4, func(round int) {
		for i := range 1500 {
			if err := d.Put(fmt.Appendf(nil, "k%04d", i), fmt.Appendf(nil, "v%d-%0200d", round, i)); err != nil {
				t.Fatal(err)
			}
		}
	})
	for i := range 3 {
		if err := d.Put(fmt.Appendf(nil, "after%d", i), []byte("x"), Sync); err != nil {
			t.Fatal(err)
		}
	}
	d.waitIdle() // no table half written when the crash comes
	for _, crash := range []struct {
		name string
		fs   *vfs.MemFS
	}{{"process crash", mem.ProcessCrashClone()}, {"machine crash", mem.CrashClone()}} {
		o := openMem(t, crash.fs.ProcessCrashClone(), nil)
		want := dbContents(t, o)
		o.Close()
		repairFindsNothingWrong(t, crash.name, crash.fs)
		r := openMem(t, crash.fs, nil)
		if got := dbContents(t, r); !maps.Equal(got, want) {
			t.Errorf("%s: Repair holds %d keys, Open held %d", crash.name, len(got), len(want))
		}
		mustGet(t, r, "after2", "x")
		r.Close()
	}
}

// repairFindsNothingWrong runs Repair on the DB in fs, whose files are all
// the engine's and whole (a clean Close, or a crash's leavings), and fails
// unless it calls each merged, obsolete or a superseded manifest, with no
// damage named.
func repairFindsNothingWrong(t *testing.T, what string, fs vfs.FS) {
	t.Helper()
	rep, err := Repair("/db", &Options{FS: fs})
	if err != nil {
		t.Fatalf("%s: Repair: %v", what, err)
	}
	for _, f := range rep.Files {
		if f.Fate != FateMerged && f.Fate != FateObsolete && f.Fate != FateSuperseded || f.Err != nil {
			t.Errorf("%s: Repair calls %s %v (%v)", what, f.Name, f.Fate, f.Err)
		}
	}
}

// flushUntilRecycled runs rounds of write, then Flush, at least min of
// them, until the last rotation (Flush's) took a recycled file, and
// returns the last round's number: which rotation does depends on when
// the flushes before it ended, so a fixed count of rounds would be flaky.
func flushUntilRecycled(t *testing.T, d *DB, ev *walEvents, min int, write func(round int)) int {
	t.Helper()
	for round := 0; ; round++ {
		if round == 40 {
			t.Fatal("no rotation in 40 rounds took a recycled file: the test needs one that did")
		}
		write(round)
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
		d.waitIdle() // the WALs the flushes retired are free to recycle
		ev.mu.Lock()
		recycled := ev.created[len(ev.created)-1].RecycledFrom != 0
		ev.mu.Unlock()
		if round+1 >= min && recycled {
			return round
		}
	}
}
