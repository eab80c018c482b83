package lsm

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/vfs"
)

// dbContents reads every key and value of d.
func dbContents(t *testing.T, d *DB) model {
	t.Helper()
	got := model{}
	it := d.NewIter(nil)
	for k, v := range it.All() {
		got[string(k)] = string(v)
	}
	if err := it.Close(); err != nil {
		t.Fatalf("iterating: %v", err)
	}
	return got
}

// TestCrashRecovery crashes the machine (vfs.FaultFS.CrashKeeping:
// everything not synced is lost, but for some or all of the directory
// changes no SyncDir made durable, which a third of the crashes keep none
// of, a third half of, a third all of) at random points — during writes, flushes, compactions,
// manifest rollovers (the manifest rolls over past 1 KiB), after a single
// failed operation the DB may survive, and with the disk dying at a random
// operation — then reopens and checks: every write (put, delete or
// DeleteRange) acknowledged with Options.Sync (epochs 0 and 1) or made with
// lsm.Sync under a DB without it (epochs 2 and 3, where the other writes
// are lsm.NoSync: the DB holds a prefix of the commits, which ends no
// earlier than the last Sync write, or Sync Delete, elided or not) is
// present, nothing that
// was never written appears, a batch is all or nothing, Gets and short
// iterators with both bounds (which ask the range filters, drawn half the
// time) agree with the full scan, no table or WAL file is left that
// the DB does not use, and every checkpoint taken meanwhile holds its
// state whole if Checkpoint returned nil, and is refused or whole if not
// (checkCheckpoints). Memtables of 4–16 KiB hold dozens of
// commits; MaxOpenFiles 2 makes reads and compactions evict and reopen
// tables. Each round is four crashes; MONBAN_CRASH_ROUNDS runs more
// rounds (2500 for 10^4 crashes).
func TestCrashRecovery(t *testing.T) {
	rounds := 25
	if s := os.Getenv("MONBAN_CRASH_ROUNDS"); s != "" {
		rounds, _ = strconv.Atoi(s)
	}
	var st crashStats
	for round := range rounds {
		seed := modelSeed(t) + uint64(round)
		rng := rand.New(rand.NewPCG(seed, 2))
		mem := vfs.NewMem()
		acked := model{}
		memtableSize := int64(4+rng.IntN(13)) << 10
		for epoch := range 4 {
			ffs := vfs.NewFault(mem)
			if rng.IntN(2) == 0 {
				ffs.FailFromNth(vfs.OpAny, int64(rng.IntN(1000)+1))
				ffs.SetTornWrites(rng.IntN(2) == 0)
			}
			if rng.IntN(3) == 0 {
				// A single failure first, which the DB may survive.
				op := crashFaultOps[rng.IntN(len(crashFaultOps))]
				ffs.Inject(vfs.Fault{Op: op, Nth: int64(rng.IntN(100) + 1), Err: syscall.EIO})
			}
			opts := crashOptions(ffs, memtableSize)
			// Under Options.Sync every write is synced; without it a third
			// are made with lsm.Sync and the rest with lsm.NoSync, so that
			// a Sync write, or a Sync Delete the filters elide, is a
			// barrier: every write before it is durable.
			opts.Sync = epoch < 2
			// Synced commits are durable with the buffered WAL too.
			opts.BufferedWAL = epoch%2 == 1
			// Tables read paged half the time: the reads after recovery go
			// through index partitions and filter pages.
			if rng.IntN(2) == 0 {
				opts.PinnedMetaLimit = -1
			}
			// Prefixes in the filters half the time: recovery's flushes
			// and the reads after it must not answer otherwise.
			if rng.IntN(2) == 0 {
				opts.Split = fixedSplit("first", 1)
			}
			// Range filters half the time, of any precision and range
			// length: the bounded iterators after recovery ask them, and a
			// table they rule out wrongly loses keys from checkRanges.
			if rng.IntN(2) == 0 {
				opts.RangeFilter = randomRangeFilter(rng)
			}
			// The tree-wide filter half the time, switched at random at
			// each recovery: reads after it may not answer otherwise, with
			// tables written under either scope.
			opts.FilterScope = randFilterScope(rng)
			// since are the states after each write acknowledged since the
			// last one made durable, that one's first: a crash keeps one of
			// them. maybe is the state after the one write that failed,
			// which may or may not have reached the disk.
			since := []model{maps.Clone(acked)}
			var maybe model
			var checkpoints []crashCheckpoint
			dying, err := Open("/db", opts)
			if err == nil {
				dying.setMaxManifestSize(1 << 10)
				manifest := dying.vs.ManifestFileNum()
				since, maybe, checkpoints = crashWorkload(rng, dying, acked, epoch, !opts.Sync)
				st.rollovers += dying.vs.ManifestFileNum() - manifest
			}
			st.ops += ffs.Count(vfs.OpAny)
			// The crash keeps none, some or all of the directory changes
			// no SyncDir made durable (names created, renamed, removed),
			// in any order: what POSIX allows.
			keepP := []float64{0, 0.5, 1}[rng.IntN(3)]
			crashed, err := ffs.CrashKeeping(func(int) bool { return rng.Float64() < keepP })
			if err != nil {
				t.Fatal(err)
			}
			if dying != nil {
				// Its machine is gone: Close fails, and only releases what
				// the DB held in memory. Deferred to the test's end, the
				// DBs of 2500 rounds held 24 GB and the kernel killed the
				// test.
				dying.Close()
			}
			mem = crashed
			st.crashes++

			reopen := crashOptions(mem, memtableSize)
			reopen.PinnedMetaLimit, reopen.Split, reopen.RangeFilter = opts.PinnedMetaLimit, opts.Split, opts.RangeFilter
			d, err := Open("/db", reopen)
			if err != nil {
				t.Fatalf("seed %d epoch %d: reopen after crash: %v", seed, epoch, err)
			}
			got := dbContents(t, d)
			kept := slices.IndexFunc(since, func(m model) bool { return maps.Equal(got, m) })
			switch {
			case kept >= 0:
				acked = since[kept]
				st.unsyncedLost += len(since) - 1 - kept
			case maybe != nil && maps.Equal(got, maybe):
				acked = maybe
			default:
				t.Fatalf("seed %d epoch %d: after crash the DB holds %d keys, acknowledged %d, %d of them since the last durable write (unacknowledged alternative: %v)\n%s",
					seed, epoch, len(got), len(acked), len(since)-1, maybe != nil, diffModels(got, acked))
			}
			checkGets(t, seed, epoch, d, got)
			checkRanges(t, seed, epoch, rng, d, got)
			checkNoOrphans(t, seed, mem, d)
			checkCheckpoints(t, seed, epoch, reopen, checkpoints, &st)
			dst := d.Stats()
			st.maxTables = max(st.maxTables, dst.Total.Files)
			st.rangeSkips += dst.RangeSkips
			crashSnapshotCheck(t, seed, epoch, rng, d, acked, &st)
			if err := d.Close(); err != nil {
				t.Fatalf("seed %d epoch %d: close: %v", seed, epoch, err)
			}
		}
	}
	t.Logf("%d crashes, %d file-system operations before them, %d manifest rollovers, up to %d tables (MaxOpenFiles 2), %d tables skipped by range filters, %d snapshot checks of which %d kept a table from a delete-only compaction, %d acknowledged NoSync writes lost, %d checkpoints whole after the crash, %d failed ones refused and %d whole",
		st.crashes, st.ops, st.rollovers, st.maxTables, st.rangeSkips, st.snapChecks, st.snapHeld, st.unsyncedLost, st.checkpoints, st.failedRefused, st.failedWhole)
	if rounds >= 10 && (st.rollovers == 0 || st.maxTables <= 2 || st.rangeSkips == 0 || st.snapHeld == 0) {
		t.Fatalf("the workload never rolled the manifest over (%d), outgrew the table cache (%d tables), had a range filter skip a table (%d) or had a snapshot keep a table from a delete-only compaction (%d)",
			st.rollovers, st.maxTables, st.rangeSkips, st.snapHeld)
	}
}

// crashSnapshotCheck runs on the DB reopened after a crash, whose
// contents acked holds: it takes a snapshot, deletes a range with
// DeleteRange (mostly the keys of one table below L0, the kind a
// delete-only compaction drops), flushes, puts some of the range's keys
// back and runs CompactRange over it. The snapshot must still read
// exactly acked as it was, and the DB acked with the range deleted and
// the puts made, which acked then holds: a table dropped while the
// snapshot needed it (compaction.PickDeleteOnly's condition 2) shows in
// the first, one dropped though its puts are newer than the tombstone
// (condition 1) in the second. st.snapHeld counts the checks whose
// covered table was still there when CompactRange began: below the
// tombstone, older than the snapshot, kept from a delete-only compaction
// by the snapshot alone.
func crashSnapshotCheck(t *testing.T, seed uint64, epoch int, rng *rand.Rand, d *DB, acked model, st *crashStats) {
	t.Helper()
	lo, hi, covered := crashCoveringRange(t, rng, d)
	where := fmt.Sprintf("seed %d epoch %d: snapshot across DeleteRange [%q, %q)", seed, epoch, lo, hi)
	before := maps.Clone(acked)
	snap := d.NewSnapshot()
	crashCheckSnapshot(t, snap, before, lo, hi, where+", before it")
	if err := d.DeleteRange(lo, hi); err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	acked.deleteRange(lo, hi)
	if err := d.Flush(); err != nil {
		t.Fatalf("%s: Flush: %v", where, err)
	}
	// Puts newer than the tombstone, flushed by CompactRange to a table
	// the tombstone's range holds whole: it must not go with the tombstone.
	for i, k := range before.sortedRange(lo, hi) {
		if i%3 == 0 {
			v := fmt.Sprintf("s%d-%d-%s", epoch, i, strings.Repeat("x", 30+rng.IntN(100)))
			if err := d.Put([]byte(k), []byte(v)); err != nil {
				t.Fatalf("%s: Put: %v", where, err)
			}
			acked[k] = v
		}
	}
	st.snapChecks++
	if covered != 0 && crashHasTable(t, d, covered) {
		st.snapHeld++
	}
	if err := d.CompactRange(lo, hi); err != nil {
		t.Fatalf("%s: CompactRange: %v", where, err)
	}
	crashCheckSnapshot(t, snap, before, lo, hi, where+", after Flush and CompactRange")
	if got := dbContents(t, d); !maps.Equal(got, acked) {
		t.Fatalf("%s: after Flush and CompactRange the DB holds %d keys, want %d\n%s", where, len(got), len(acked), diffModels(got, acked))
	}
	if err := snap.Close(); err != nil {
		t.Fatalf("%s: snapshot Close: %v", where, err)
	}
}

// crashCoveringRange draws the range crashSnapshotCheck deletes: three
// times in four, if d has a table below L0, that table's keys, from its
// smallest to just past its largest (covered is its number); else a run of
// up to 40 keys of one kind.
func crashCoveringRange(t *testing.T, rng *rand.Rand, d *DB) (lo, hi []byte, covered uint64) {
	tables, err := d.Tables()
	if err != nil {
		t.Fatal(err)
	}
	tables = slices.DeleteFunc(tables, func(tb TableInfo) bool { return tb.Level == 0 })
	if len(tables) > 0 && rng.IntN(4) != 0 {
		tb := tables[rng.IntN(len(tables))]
		return tb.Smallest, append(tb.Largest, 0), tb.FileNum
	}
	ints, n := rng.IntN(2) == 0, rng.IntN(crashKeys)
	return []byte(crashKey(ints, n)), []byte(crashKey(ints, n+1+rng.IntN(40))), 0
}

// crashHasTable reports whether table n is in d's current version.
func crashHasTable(t *testing.T, d *DB, n uint64) bool {
	tables, err := d.Tables()
	if err != nil {
		t.Fatal(err)
	}
	return slices.ContainsFunc(tables, func(tb TableInfo) bool { return tb.FileNum == n })
}

// crashCheckSnapshot reads snap whole and with a Get of every key of want
// in [lo, hi), and fails unless it reads exactly want.
func crashCheckSnapshot(t *testing.T, snap *Snapshot, want model, lo, hi []byte, where string) {
	t.Helper()
	got := model{}
	it := snap.NewIter(nil)
	for k, v := range it.All() {
		got[string(k)] = string(v)
	}
	if err := it.Close(); err != nil {
		t.Fatalf("%s: snapshot iterator: %v", where, err)
	}
	if !maps.Equal(got, want) {
		t.Fatalf("%s: the snapshot holds %d keys, it held %d\n%s", where, len(got), len(want), diffModels(got, want))
	}
	for _, k := range want.sortedRange(lo, hi) {
		if v, err := snap.Get([]byte(k)); err != nil || string(v) != want[k] {
			t.Fatalf("%s: snapshot Get(%q) = %q, %v; it held %q", where, k, v, err, want[k])
		}
	}
}

// crashFaultOps are the kinds of the single failures a crash epoch may
// meet before the machine dies.
var crashFaultOps = []vfs.Op{vfs.OpWrite, vfs.OpSync, vfs.OpCreate, vfs.OpSyncDir, vfs.OpRename, vfs.OpRemove, vfs.OpOpen, vfs.OpRead}

// checkGets asks Get for every key the scan found, and for keys between
// them that it did not: the point-read path (filters, index, paged or
// pinned) must agree with the scan after recovery.
func checkGets(t *testing.T, seed uint64, epoch int, d *DB, got model) {
	t.Helper()
	for k, want := range got {
		if v, err := d.Get([]byte(k)); err != nil || string(v) != want {
			t.Fatalf("seed %d epoch %d: Get(%q) = %q, %v; the scan found %q", seed, epoch, k, v, err, want)
		}
		if _, err := d.Get([]byte(k + "\x00")); !errors.Is(err, ErrNotFound) {
			t.Fatalf("seed %d epoch %d: Get(%q) = %v, want ErrNotFound", seed, epoch, k+"\x00", err)
		}
	}
}

// checkRanges iterates d over short bounded ranges, both bounds set so
// that the range filters are asked, and compares each with got, the
// contents the full scan found and the test verified: a table a filter
// rules out wrongly after recovery loses its keys here, or shows an older
// value from a table below it. Half the ranges are over the integer keys
// and mostly start between two of them; many hold no key, the ranges for
// which a filter may skip tables.
func checkRanges(t *testing.T, seed uint64, epoch int, rng *rand.Rand, d *DB, got model) {
	t.Helper()
	for range 32 {
		lo, hi := crashBounds(rng)
		where := fmt.Sprintf("seed %d epoch %d: [%q, %q)", seed, epoch, lo, hi)
		it := d.NewIter(&IterOptions{LowerBound: lo, UpperBound: hi})
		keys := iterKeys(t, it, rng.IntN(2) == 0, got, where)
		if err := it.Close(); err != nil {
			t.Fatalf("%s: close: %v", where, err)
		}
		if want := got.sortedRange(lo, hi); !slices.Equal(keys, want) {
			t.Fatalf("%s: bounded iterator after crash:\n got %q\nwant %q", where, keys, want)
		}
	}
}

type crashStats struct {
	crashes, ops int64
	rollovers    uint64
	maxTables    int
	rangeSkips   uint64
	// snapChecks counts crashSnapshotCheck's runs, snapHeld those in
	// which its snapshot alone kept a table from a delete-only compaction.
	snapChecks, snapHeld int
	// unsyncedLost counts the acknowledged NoSync writes crashes took.
	unsyncedLost int
	// checkpoints counts the checkpoints read whole after a crash;
	// failedRefused and failedWhole the failed ones Open refused and
	// those whose removal the crash undid.
	checkpoints, failedRefused, failedWhole int
}

func crashOptions(fs vfs.FS, memtableSize int64) *Options {
	return &Options{
		FS: fs, MemtableSize: memtableSize, BlockSize: 256, TargetFileSize: 4 << 10,
		LBaseMaxBytes: 16 << 10, L0CompactionThreshold: 2, MaxOpenFiles: 2,
	}
}

// randomRangeFilter draws a range filter's parameters: bits per key from
// the fewest the builder takes (a false positive in most ranges) to many,
// and range lengths from a single point to more than a short scan spans
// (0 is the default, 32).
func randomRangeFilter(rng *rand.Rand) filter.GrafiteOptions {
	return filter.GrafiteOptions{
		BitsPerKey: []int{filter.GrafiteMinBitsPerKey, 10, 16, 24}[rng.IntN(4)],
		RangeLen:   []uint64{0, 1, 8, 1000}[rng.IntN(4)],
	}
}

// crashKeys is the number of keys of each kind the crash workload writes:
// 150 in all fill dozens of 4 KiB tables, and checkGets asks each twice
// after every crash.
const crashKeys = 75

// crashIntGap spaces the integer keys, so that a short range between two
// of them holds none, and a range filter can tell it from one that does.
const crashIntGap = 8

// crashKey is key n of one of two kinds: "k%03d", or, with ints, the
// 8-byte big-endian integer n·crashIntGap, which a range filter tells
// apart at the granularity of single integers (a range filter projects a
// key to its first 8 bytes). Integer keys sort before the others.
func crashKey(ints bool, n int) string {
	if ints {
		return intKey(uint64(n * crashIntGap))
	}
	return fmt.Sprintf("k%03d", n)
}

// crashBounds draws the bounds of a short range over either kind of key:
// mostly from a key or from between keys, up to three keys long;
// sometimes a lower bound of the short "k" keys cut to a prefix, or an
// upper bound longer than 8 bytes, so that the filter's projection of
// bounds meets keys of other lengths.
func crashBounds(rng *rand.Rand) (lo, hi []byte) {
	if rng.IntN(2) == 0 {
		x := uint64(rng.IntN(crashKeys * crashIntGap))
		lo, hi = []byte(intKey(x)), []byte(intKey(x+1+uint64(rng.IntN(3*crashIntGap))))
	} else {
		n := rng.IntN(crashKeys)
		lo, hi = []byte(crashKey(false, n)), []byte(crashKey(false, n+1+rng.IntN(3)))
	}
	switch rng.IntN(6) {
	case 0:
		lo = lo[:1+rng.IntN(len(lo)-1)]
	case 1:
		hi = append(hi, 0, byte(rng.IntN(256)))
	}
	return lo, hi
}

// crashWorkload writes to d until its operations run out or one fails
// with the sticky error, updating acked with every acknowledged write. It
// returns the states after each acknowledged write since the last durable
// one (that one's first: a Sync write or Delete, a Flush or Compact, or,
// when !mixed, every write, the DB syncing them all), the state that
// the failed write would have made, if one failed so, and the checkpoints
// it took now and then, under the later writes' flushes and compactions
// (which unlink the tables a checkpoint links to). With mixed, a third
// of the writes are made with lsm.Sync, the rest with lsm.NoSync. A write
// that fails while Stats.BackgroundError is nil never reached the WAL: it
// must not appear, and the workload goes on. Values of 40–140 bytes fill a
// memtable in a few dozen commits.
func crashWorkload(rng *rand.Rand, d *DB, acked model, epoch int, mixed bool) (since []model, maybe model, checkpoints []crashCheckpoint) {
	since = []model{maps.Clone(acked)}
	for i := range rng.IntN(300) {
		if rng.IntN(60) == 0 {
			dir := fmt.Sprintf("/checkpoint-%d-%d", epoch, i)
			err := d.Checkpoint(dir)
			checkpoints = append(checkpoints, crashCheckpoint{dir, maps.Clone(acked), err})
			continue
		}
		next := maps.Clone(acked)
		var b Batch
		for range rng.IntN(4) + 1 {
			n := rng.IntN(crashKeys)
			ints := rng.IntN(2) == 0
			k := crashKey(ints, n)
			switch r := rng.IntN(16); {
			case r < 4:
				b.Delete([]byte(k))
				delete(next, k)
			case r < 5:
				end := []byte(crashKey(ints, n+1+rng.IntN(8)))
				b.DeleteRange([]byte(k), end)
				next.deleteRange([]byte(k), end)
			default:
				v := fmt.Appendf(nil, "e%d-%d-", epoch, i)
				for range 30 + rng.IntN(100) { // letters: tables stay large
					v = append(v, byte('a'+rng.IntN(26)))
				}
				b.Put([]byte(k), v)
				next[k] = string(v)
			}
		}
		var wo *WriteOptions // nil: Options.Sync, every write synced
		durable := !mixed
		if mixed {
			wo, durable = NoSync, false
			if rng.IntN(3) == 0 {
				wo, durable = Sync, true
			}
		}
		var err error
		switch {
		case rng.IntN(40) == 0:
			err = d.Flush()
			next, durable = maps.Clone(acked), true
		case rng.IntN(100) == 0:
			err = d.Compact()
			next, durable = maps.Clone(acked), true
		case b.Len() == 1 && rng.IntN(2) == 0:
			// Single deletes go through Delete, which may elide them.
			if k, ok := singleDelete(&b); ok {
				err = d.Delete(k, wo)
				break
			}
			fallthrough
		default:
			err = d.Write(&b, wo)
		}
		if err != nil && d.Stats().BackgroundError == nil {
			continue
		}
		if err != nil {
			return since, next, checkpoints
		}
		clear(acked)
		maps.Copy(acked, next)
		if durable {
			since = since[:0]
		}
		since = append(since, maps.Clone(acked))
	}
	return since, nil, checkpoints
}

// crashCheckpoint is a checkpoint crashWorkload took: into dir, of the
// state want, and what Checkpoint returned.
type crashCheckpoint struct {
	dir  string
	want model
	err  error
}

// checkCheckpoints opens, read-only, each checkpoint of the epoch a crash
// ended, on the crashed file system (opts'), and removes it. One that
// Checkpoint acknowledged must hold its state whole, though the machine
// died and the DB's compactions unlinked the tables it shares since; one
// that failed, its files removed or left when the disk died, must be
// refused by Open, or hold the whole state where the crash undid the
// removal of a finished one: never a part of it.
func checkCheckpoints(t *testing.T, seed uint64, epoch int, opts *Options, checkpoints []crashCheckpoint, st *crashStats) {
	t.Helper()
	ro := *opts
	ro.ReadOnly = true
	for _, c := range checkpoints {
		d, err := Open(c.dir, &ro)
		switch {
		case err != nil && c.err == nil:
			t.Fatalf("seed %d epoch %d: Open of checkpoint %s after the crash: %v", seed, epoch, c.dir, err)
		case err != nil:
			st.failedRefused++
		default:
			got := dbContents(t, d)
			if err := d.Close(); err != nil {
				t.Fatalf("seed %d epoch %d: Close of checkpoint %s: %v", seed, epoch, c.dir, err)
			}
			if !maps.Equal(got, c.want) {
				t.Fatalf("seed %d epoch %d: checkpoint %s (Checkpoint returned %v) after the crash:\n%s", seed, epoch, c.dir, c.err, diffModels(got, c.want))
			}
			if c.err == nil {
				st.checkpoints++
			} else {
				st.failedWhole++
			}
		}
		removeAll(t, opts.FS, c.dir)
	}
}

func singleDelete(b *Batch) ([]byte, bool) {
	var key []byte
	ok := false
	decodeBatch(b.encode(0), func(e batchEntry) error {
		key, ok = e.Key, e.Kind == 0
		return nil
	})
	return key, ok
}

// checkNoOrphans checks that the directory holds exactly the tables of the
// current version and one WAL.
func checkNoOrphans(t *testing.T, seed uint64, fs vfs.FS, d *DB) {
	t.Helper()
	d.waitIdle()
	tables, err := d.Tables()
	if err != nil {
		t.Fatal(err)
	}
	live := map[string]bool{}
	for _, tb := range tables {
		live[fmt.Sprintf("%06d.sst", tb.FileNum)] = true
	}
	names, err := fs.List("/db")
	if err != nil {
		t.Fatal(err)
	}
	logs := 0
	for _, n := range names {
		switch {
		case strings.HasSuffix(n, ".sst") && !live[n]:
			t.Fatalf("seed %d: orphaned table %s (live %v)", seed, n, live)
		case strings.HasSuffix(n, ".log"):
			logs++
		}
	}
	if logs != 1 {
		t.Fatalf("seed %d: %d WAL files after recovery, want 1: %v", seed, logs, names)
	}
}

func diffModels(got, want model) string {
	var b strings.Builder
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			fmt.Fprintf(&b, "  %q: got %q (present %v), want %q\n", k, g, ok, v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&b, "  %q: got %q, never written or deleted\n", k, v)
		}
	}
	return b.String()
}

// waitIdle waits until no flush or compaction is running, and the deleter
// has removed the files they made obsolete.
func (d *DB) waitIdle() {
	d.mu.Lock()
	for d.mu.flushing || len(d.mu.compactions) > 0 || d.mu.manualCompaction {
		d.mu.flushCond.Wait()
	}
	d.mu.Unlock()
	d.deleteNow(false)
}

// setMaxManifestSize makes d's manifest roll over once it passes n bytes.
// The VersionSet wants it serialized with LogAndApply, which the DB runs
// under manifestMu.
func (d *DB) setMaxManifestSize(n int64) {
	d.manifestMu.Lock()
	defer d.manifestMu.Unlock()
	d.vs.SetMaxManifestSize(n)
}
