package lsm

import (
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

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

// TestCrashRecovery crashes the machine (vfs.FaultFS.Crash: everything not
// synced is lost) at random points — during writes, flushes, compactions,
// manifest rollovers (the manifest rolls over past 1 KiB), after a single
// failed operation the DB may survive, and with the disk dying at a random
// operation — then reopens and checks: every write (put, delete or
// DeleteRange) acknowledged with Options.Sync (epochs 0 and 1) or made with
// lsm.Sync under a DB without it (epochs 2 and 3) is present, nothing that
// was never written appears, a batch is all or nothing, and no table or WAL file is
// left that the DB does not use. Memtables of 4–16 KiB hold dozens of
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
			var wo *WriteOptions // nil: Options.Sync
			opts.Sync = epoch < 2
			if !opts.Sync {
				wo = Sync
			}
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
			// maybe is the state after the one write that failed, which may
			// or may not have reached the disk.
			var maybe model
			dying, err := Open("/db", opts)
			if err == nil {
				dying.setMaxManifestSize(1 << 10)
				manifest := dying.vs.ManifestFileNum()
				maybe = crashWorkload(rng, dying, acked, epoch, wo)
				st.rollovers += dying.vs.ManifestFileNum() - manifest
			}
			st.ops += ffs.Count(vfs.OpAny)
			crashed, err := ffs.Crash()
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
			reopen.PinnedMetaLimit, reopen.Split = opts.PinnedMetaLimit, opts.Split
			d, err := Open("/db", reopen)
			if err != nil {
				t.Fatalf("seed %d epoch %d: reopen after crash: %v", seed, epoch, err)
			}
			got := dbContents(t, d)
			switch {
			case maps.Equal(got, acked):
			case maybe != nil && maps.Equal(got, maybe):
				acked = maybe
			default:
				t.Fatalf("seed %d epoch %d: after crash the DB holds %d keys, acknowledged %d (unacknowledged alternative: %v)\n%s",
					seed, epoch, len(got), len(acked), maybe != nil, diffModels(got, acked))
			}
			checkGets(t, seed, epoch, d, got)
			checkNoOrphans(t, seed, mem, d)
			st.maxTables = max(st.maxTables, d.Stats().Total.Files)
			if err := d.Close(); err != nil {
				t.Fatalf("seed %d epoch %d: close: %v", seed, epoch, err)
			}
		}
	}
	t.Logf("%d crashes, %d file-system operations before them, %d manifest rollovers, up to %d tables (MaxOpenFiles 2)",
		st.crashes, st.ops, st.rollovers, st.maxTables)
	if rounds >= 10 && (st.rollovers == 0 || st.maxTables <= 2) {
		t.Fatalf("the workload never rolled the manifest over (%d) or outgrew the table cache (%d tables)", st.rollovers, st.maxTables)
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

type crashStats struct {
	crashes, ops int64
	rollovers    uint64
	maxTables    int
}

func crashOptions(fs vfs.FS, memtableSize int64) *Options {
	return &Options{
		FS: fs, MemtableSize: memtableSize, BlockSize: 256, TargetFileSize: 4 << 10,
		LBaseMaxBytes: 16 << 10, L0CompactionThreshold: 2, MaxOpenFiles: 2,
	}
}

// crashWorkload writes to d until its operations run out or one fails
// with the sticky error, updating acked with every acknowledged write. It
// returns the state that the failed write would have made, if one failed
// so. A write that fails while Stats.BackgroundError is nil never reached
// the WAL: it must not appear, and the workload goes on. Values of 40–140
// bytes fill a memtable in a few dozen commits.
func crashWorkload(rng *rand.Rand, d *DB, acked model, epoch int, wo *WriteOptions) model {
	for i := range rng.IntN(300) {
		next := maps.Clone(acked)
		var b Batch
		for range rng.IntN(4) + 1 {
			n := rng.IntN(150)
			k := fmt.Sprintf("k%03d", n)
			switch r := rng.IntN(16); {
			case r < 4:
				b.Delete([]byte(k))
				delete(next, k)
			case r < 5:
				end := []byte(fmt.Sprintf("k%03d", n+1+rng.IntN(8)))
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
		var err error
		switch {
		case rng.IntN(40) == 0:
			err = d.Flush()
			next = maps.Clone(acked)
		case rng.IntN(100) == 0:
			err = d.Compact()
			next = maps.Clone(acked)
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
			return next
		}
		clear(acked)
		maps.Copy(acked, next)
	}
	return nil
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
			fmt.Fprintf(&b, "  %s: got %q (present %v), want %q\n", k, g, ok, v)
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&b, "  %s: got %q, never written or deleted\n", k, v)
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
