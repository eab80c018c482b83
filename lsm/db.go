package lsm

import (
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/monbandb/monban/compaction"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/memtable"
	"github.com/monbandb/monban/sstable"
	"github.com/monbandb/monban/vfs"
)

// DB is an open monban database. All methods are safe for concurrent use.
type DB struct {
	dir  string
	opts Options
	fs   vfs.FS
	lock io.Closer
	vs   *manifest.VersionSet
	// dbID is the identity every WAL the DB writes begins with
	// (walIdentity): the manifest's, or for a manifest without one, the
	// one Open records in its edit.
	dbID   uint64
	tables *sstable.TableCache
	cache  *cache.Cache
	// metaBudget keeps Options.PinnedMetaLimit.
	metaBudget *sstable.MetaBudget
	// loading names the level of each table loadTables is opening before
	// the edit that adds it is applied, for inLastLevel: the current
	// version does not hold those tables yet.
	loadingMu sync.Mutex
	loading   map[uint64]int
	// loaded is closed when Open's background load of the tables has
	// ended, done or stopped by Close (open_tables.go, step 3).
	loaded chan struct{}
	// tree is the tree-wide filter (tree_filter.go), nil unless
	// Options.FilterScope is TreeWide; recentHashes the key-hash sets of
	// the tables written last, which it files without reading them back.
	tree         *treeFilter
	recentHashes *recentKeyHashes

	// rangeDelsPossible is false while no source of the DB can hold a range
	// tombstone: none was written (apply) and none of the tables opened
	// holds one (table); Open reads every table's count of them and opens
	// those that hold any (checkTables). A Get then
	// skips the range-tombstone checks of every source (get): a DB that
	// never had one reads as before DeleteRange existed. It is set before
	// a tombstone reaches a memtable, and a read loads it after its
	// sequence number, so a read that could see a tombstone sees it set.
	rangeDelsPossible atomic.Bool

	// closed is set once by Close; every operation checks it first.
	closed atomic.Bool

	// stickyErr mirrors d.mu.bgErr for the paths that do not take d.mu (a
	// Delete the filters prove unnecessary, Stats).
	stickyErr atomic.Pointer[error]

	// filesMu orders the deleter's deletions against Close: once
	// filesReleased is set, the directory lock is about to go or gone, and
	// obsolete files are left for the next Open to collect.
	filesMu       sync.Mutex
	filesReleased bool
	// obsolete tells the deleter (runDeleter) that a read state's last
	// reference went, and with it perhaps the last version holding some
	// tables; deleterRequests asks it for a pass and an answer (deleteNow);
	// deleterDone closes once it has returned. The last two are nil read
	// only, where nothing is deleted.
	obsolete        chan struct{}
	deleterRequests chan deleterRequest
	deleterDone     chan struct{}

	// visibleSeq is the highest sequence number whose write, and every
	// write before it, is in the memtable (invariant 1): what a new read
	// sees.
	visibleSeq atomic.Uint64
	// syncedSeq is the highest sequence number whose write, and every
	// write before it, is durable: in a WAL an fsync covered, or in
	// synced tables. A Sync delete the filters prove unnecessary writes
	// nothing only when it is not below visibleSeq (Delete).
	syncedSeq atomic.Uint64

	// rs is the read state: the memtables and version that reads walk. It
	// is replaced only while d.mu is held (installReadState) and read
	// without a lock (loadReadState).
	rs atomic.Pointer[readState]

	// mu guards the commit pipeline and the background work's state.
	mu struct {
		sync.Mutex
		// writeCond wakes queued writers; flushCond wakes whoever waits for a
		// flush or compaction (Flush, stalled writers, Close).
		writeCond, flushCond sync.Cond

		// bgErr is the first error of background work or of a WAL write; once
		// set, every later write fails with it (the WAL may be missing a
		// record that later records would depend on). Set by setBgErr.
		bgErr error

		writers []*writer // FIFO; writers[0] leads the current commit group
		// groupOrder is the leader's scratch for a group's commit order
		// (syncOrder); only the leader touches it.
		groupOrder []*writer
		lastSeq    base.SeqNum
		// returning is what awaitReturning knows of the writers the last
		// fsync released.
		returning returningWriters

		wal    walWriter
		walNum uint64
		// logNums maps each memtable of the mutable level to its WAL.
		logNums map[*memtable.Memtable]uint64
		// recycledWALs are obsolete WALs kept for their files, which the
		// next rotations write over (recycleWAL): at most maxRecycledWALs.
		recycledWALs []uint64

		// rotations counts memtables made immutable; flushes those written to
		// L0. Flush waits until flushes catches up with rotations.
		rotations, flushes uint64
		flushing           bool

		// compactions are the compactions running now, background or
		// manual, which Pick keeps apart (compaction.Conflicts);
		// manualCompaction is set while CompactRange runs, which runs
		// alone: it starts once none is running and none starts until it
		// ends.
		compactions      []*compaction.Compaction
		manualCompaction bool
	}

	// snapMu guards snapshots.
	snapMu    sync.RWMutex
	snapshots snapshotList
	// snapshotsWaited bounds the open snapshots that alone kept tables
	// from the picker's last delete-only or elision-only compaction
	// (compaction.PickDeleteOnly, PickElisionOnly): closing one of them
	// asks the picker again, since no flush or compaction may come to, and
	// closing any other does not take d.mu.
	snapshotsWaited atomic.Pointer[compaction.Waiting]
	// snapshotCloses counts Snapshot.Close calls, each counted after its
	// snapshot left the list and before it loads snapshotsWaited: a picker
	// that finds it changed while it ran picks again, so that a Close
	// between the picker's look at the snapshots and its store of
	// snapshotsWaited cannot miss its wake-up.
	snapshotCloses atomic.Uint64

	// manifestMu serializes VersionSet.LogAndApply between flushes and
	// compactions; it is never held with mu.
	manifestMu sync.Mutex

	stats dbStats
	// proofs gates Delete's absent-key proof (proof.go).
	proofs proofGate
	bg     sync.WaitGroup

	hooks testHooks
}

// testHooks stop the engine between two steps whose order matters, so a
// test can replay an interleaving step by step. Tests set them right after
// Open; they are nil otherwise.
type testHooks struct {
	// beforePublish runs in a commit leader after its group is in the
	// memtable and before its sequence numbers are visible.
	beforePublish func()
	// betweenReadLoads runs in a Get or NewIter between loading the read
	// state and the sequence number.
	betweenReadLoads func()
	// afterInstall runs in logAndApply after a flush's or compaction's
	// edit is installed, under manifestMu.
	afterInstall func()
	// beforeWaitedStore runs in the compaction picker after it looked at
	// the open snapshots and before it stores snapshotsWaited, under d.mu.
	beforeWaitedStore func()
}

// readState is what a read walks: the mutable level and the current
// version. It is replaced as a whole (copy on write) when a memtable
// rotates, a flush or a compaction completes; readers hold a reference so
// the version's tables stay alive while they use them (invariant 2).
type readState struct {
	db      *DB
	refs    atomic.Int32
	mem     *memtable.Level
	version *manifest.Version
	// rangeDels are the version's tables' range tombstones, for iterators
	// (rangedel_read.go).
	rangeDels versionRangeDels
}

// unref drops a reference. The last one releases the version, which may
// leave tables that no live version holds (invariant 2): the deleter is
// told, so that whichever reader lets go last, a Get's or an iterator's,
// pays for no unlink and runs no EventListener.TableDeleted.
func (rs *readState) unref() {
	if rs.refs.Add(-1) == 0 {
		rs.eachMemtable((*memtable.Memtable).Unref)
		rs.version.Unref()
		select {
		case rs.db.obsolete <- struct{}{}:
		default: // told already: its next pass takes every table obsolete by then
		}
	}
}

// setBgErr records err, the failure of background work or of a commit, as
// the DB's sticky error if it is the first. d.mu is held. Work that Close
// interrupted (ErrClosed) is no failure: its inputs are all still live.
func (d *DB) setBgErr(err error) {
	if d.mu.bgErr != nil || errors.Is(err, ErrClosed) {
		return
	}
	d.mu.bgErr = err
	d.stickyErr.Store(&err)
	d.opts.Logger.Error("monban: background error, the DB is now read-only", "err", err)
	d.opts.EventListener.BackgroundError(err)
}

// snapshotSeqs returns the open snapshots' sequence numbers, ascending.
func (d *DB) snapshotSeqs() []base.SeqNum {
	d.snapMu.RLock()
	defer d.snapMu.RUnlock()
	return d.snapshots.seqs()
}

// loadReadState returns the current read state with a reference the caller
// must drop with unref, or nil once Close has released it.
//
// It takes no lock: a state whose reference count is above zero is alive
// (its version referenced, its tables undeleted), and only the last unref
// brings the count to zero, after installReadState has replaced the state,
// so a count seen at zero never rises again and the state it belongs to is
// no longer current: loading d.rs again finds its successor. A state
// replaced between the load and the reference is still one that was
// current during this call, which is all invariant 4 asks.
func (d *DB) loadReadState() *readState {
	for {
		rs := d.rs.Load()
		if rs == nil || rs.tryRef() {
			return rs
		}
	}
}

// tryRef adds a reference unless the last one is gone.
func (rs *readState) tryRef() bool {
	for n := rs.refs.Load(); n > 0; n = rs.refs.Load() {
		if rs.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
	return false
}

// installReadState replaces the read state and returns the old one, whose
// reference the caller drops with unref (the last one tells the deleter).
// version must carry a reference for the new state to own.
func (d *DB) installReadState(mem *memtable.Level, version *manifest.Version) (old *readState) {
	rs := &readState{db: d, mem: mem, version: version}
	rs.refs.Store(1)
	rs.eachMemtable((*memtable.Memtable).Ref)
	return d.rs.Swap(rs)
}

// eachMemtable calls f on every memtable of rs's level. A read state
// holds a reference on each (Memtable.Ref), so a flushed memtable's arena
// is freed when the last read state that can reach it lets go, not when
// the collector next runs.
func (rs *readState) eachMemtable(f func(*memtable.Memtable)) {
	f(rs.mem.Active())
	for _, m := range rs.mem.Immutables() {
		f(m)
	}
}
