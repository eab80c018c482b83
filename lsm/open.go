package lsm

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/memtable"
	"github.com/monbandb/monban/sstable"
	"github.com/monbandb/monban/vfs"
	"github.com/monbandb/monban/wal"
)

// Open opens the DB in dir, creating it if it holds no DB file at all.
// opts may be nil for the defaults. A directory another DB has open gives
// ErrLocked.
//
// Recovery: the manifest names the live tables; WALs at or above its log
// number are replayed into memtables and written to L0, so the DB starts
// with an empty memtable and one fresh WAL. A torn record at the tail of the
// newest WAL or of the manifest (what a crash leaves, docs/format.md) is
// dropped and logged.
//
// Open is paranoid about what it is given: a missing or damaged CURRENT or
// manifest, a manifest whose live WAL is gone (it lost edits), a live table
// that is missing, of another size or another table's file, and damage
// anywhere but a crash's torn tail fail Open with an error wrapping
// ErrCorruption that names the file; Repair rebuilds such a DB. Of a
// table it checks the tail (footer and properties); the tables load after
// it returns (open_tables.go), and damage deeper in one is reported by the
// first read that needs it. A failed Open deletes nothing but the tables
// its own WAL replay wrote. Only after a clean recovery does it delete
// other files, and only those the recovered state proves unneeded: its
// own WALs below the log number, tables no live version names whose
// entries the manifest or the WALs account for (the output of a flush or
// compaction whose edit never reached the manifest, an input the deleter
// had not removed), and tables cut short under their temporary name. A
// file under a table's name that does not read as a table stays.
func Open(dir string, opts *Options) (*DB, error) {
	d := &DB{dir: dir, opts: opts.withDefaults(), obsolete: make(chan struct{}, 1), loaded: make(chan struct{})}
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	if err := d.opts.validate(); err != nil {
		return nil, err
	}
	d.fs = d.opts.FS
	d.mu.writeCond.L = &d.mu
	d.mu.flushCond.L = &d.mu
	d.mu.logNums = make(map[*memtable.Memtable]uint64)
	if !d.opts.ReadOnly && !d.opts.ErrorIfNotExists {
		if err := mkdirDurable(d.fs, dir); err != nil {
			return nil, fmt.Errorf("monban: %w", err)
		}
	}
	names, err := d.fs.List(dir)
	if err != nil {
		return nil, fmt.Errorf("monban: %w", err)
	}
	lockName := manifest.MakeFilename(manifest.KindLock, 0)
	hadLock := slices.Contains(names, lockName)
	// Locking creates LOCK if it is missing, which a read-only Open must
	// not: without one (a copy that left it out, a read-only mount of
	// one) it goes unlocked, and recover says what the directory holds.
	if !d.opts.ReadOnly || hadLock {
		lock, err := lockDir(d.fs, dir)
		if err != nil {
			return nil, err
		}
		d.lock = lock
	}
	if err := d.recover(); err != nil {
		if !hadLock && d.lock != nil {
			// A refused Open leaves the directory as it was. Removed while
			// held, the lock cannot be another taker's meanwhile.
			_ = d.fs.Remove(filepath.Join(dir, lockName))
		}
		d.closeResources()
		return nil, d.explainRefusal(names, err)
	}
	if !d.opts.ReadOnly {
		d.deleterRequests, d.deleterDone = make(chan deleterRequest), make(chan struct{})
		go d.runDeleter()
	}
	return d, nil
}

// explainRefusal says why Open refused the directory: a damaged DB's
// error points to Repair; but a directory none of whose files is in
// monban's format is another program's, which Repair would not fix.
func (d *DB) explainRefusal(names []string, err error) error {
	if !errors.Is(err, ErrCorruption) {
		return err
	}
	if own, _, oerr := ownsDir(d.fs, d.dir, names); oerr == nil && !own {
		return fmt.Errorf("%w: none of the files of %s (%s) is in monban's format, so it was left as it is (opening it as one failed: %v)",
			ErrNotDB, d.dir, listNames(names), err)
	}
	return fmt.Errorf("%w (lsm.Repair, or kvbench repair -db DIR, rebuilds a DB from the files it holds)", err)
}

// checkDir rejects a directory name no DB can live at. The empty name
// would otherwise reach the file system as the current directory of some
// calls and as no name at all of others.
func checkDir(dir string) error {
	if dir == "" {
		return fmt.Errorf("monban: a DB needs a directory name, and the one given is empty: %w", fs.ErrInvalid)
	}
	return nil
}

// mkdirDurable makes dir and its missing parents, and syncs the parent of
// each it made: a directory is a name in its parent, and until the parent
// is synced a crash may take the new directory with everything written in
// it since, synced or not.
func mkdirDurable(fsys vfs.FS, dir string) error {
	var made []string
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if _, err := fsys.List(p); !errors.Is(err, fs.ErrNotExist) {
			break // there, or MkdirAll will say what is wrong with it
		}
		made = append(made, p)
		if filepath.Dir(p) == p {
			break
		}
	}
	if err := fsys.MkdirAll(dir); err != nil {
		return err
	}
	for _, p := range made {
		if err := fsys.SyncDir(filepath.Dir(p)); err != nil {
			return err
		}
	}
	return nil
}

// recover loads the manifest, replays WALs, and starts a fresh WAL. Read
// only, it stops before the first write: the WALs' contents stay in the
// active memtable.
func (d *DB) recover() error {
	entries, err := vfs.ReadDir(d.fs, d.dir)
	if err != nil {
		return fmt.Errorf("monban: %w", err)
	}
	if err := checkMetaNames(d.fs, d.dir, entries); err != nil {
		return err
	}
	vs, err := manifest.Recover(d.fs, d.dir)
	switch {
	case err == nil && d.opts.ErrorIfExists:
		vs.Close()
		return fmt.Errorf("monban: %s already holds a DB (Options.ErrorIfExists): %w", d.dir, fs.ErrExist)
	case errors.Is(err, fs.ErrNotExist) && d.opts.ErrorIfNotExists:
		return fmt.Errorf("monban: %s holds no DB (Options.ErrorIfNotExists): %w", d.dir, err)
	case errors.Is(err, fs.ErrNotExist) && !d.opts.ReadOnly:
		vs, err = manifest.Create(d.fs, d.dir)
	}
	if err != nil {
		return fmt.Errorf("monban: %w", err)
	}
	d.vs = vs
	if n := vs.RecoveredDroppedBytes(); n > 0 {
		d.opts.Logger.Info("monban: dropped a torn tail from the manifest", "bytes", n)
	}
	if d.opts.BlockCacheSize > 0 {
		d.cache = cache.New(d.opts.BlockCacheSize)
	}
	d.metaBudget = sstable.NewMetaBudget(d.opts.PinnedMetaLimit, d.inLastLevel)
	d.tables = sstable.NewTableCache(d.fs, d.dir, d.opts.MaxOpenFiles,
		sstable.ReaderOptions{Cache: d.cache, IgnoreFilter: d.opts.IgnoreFilters, MetaBudget: d.metaBudget})

	var names []string // the files: a directory under a DB file's name is not the DB's
	var logs, obsoleteLogs []uint64
	for _, e := range entries {
		kind, num, ok := manifest.ParseFilename(e.Name)
		if ok {
			vs.Reserve(num) // a directory's too: no new file can take its name
		}
		if e.Dir {
			continue
		}
		names = append(names, e.Name)
		switch {
		case !ok:
		case kind == manifest.KindLog && num >= vs.LogNum():
			logs = append(logs, num)
		case kind == manifest.KindLog:
			// Flushed before the crash, deleted not yet.
			obsoleteLogs = append(obsoleteLogs, num)
		}
	}
	slices.Sort(logs)
	later, err := d.checkLiveFiles(names)
	if err != nil {
		return err
	}
	if err := d.checkLogOwners(append(slices.Clone(logs), obsoleteLogs...)); err != nil {
		return err
	}

	seq := vs.LastSeq()
	current := vs.Current()
	d.installReadState(memtable.NewLevel(d.newMemtable(0)), current) // the first: no old state
	edit := &manifest.VersionEdit{}
	// The id first: the tables the replay writes carry it (db.id), and
	// the edit that places them records it.
	d.dbID = vs.DBID()
	if d.dbID == 0 { // a new DB, or one written before DB ids
		d.dbID = newID()
		edit.DBID = d.dbID
	}
	// The tables replayed are this Open's own output, named by no
	// manifest: a refused Open removes them, leaving the directory as it
	// was.
	refuse := func(err error) error {
		for _, nf := range edit.Added {
			d.removeFile(manifest.KindTable, nf.Meta.FileNum)
		}
		return err
	}
	replays := make([]walReplay, len(logs))
	for i, num := range logs {
		if replays[i], err = d.replayWAL(num, edit); err != nil {
			return refuse(err)
		}
		seq = max(seq, replays[i].last)
	}
	// The successors first: where a WAL is missing, they name it.
	if err := checkWALSuccessors(logs, replays); err != nil {
		return refuse(err)
	}
	if err := checkWALSeqs(logs, replays); err != nil {
		return refuse(err)
	}
	if err := checkWALEnds(logs, replays); err != nil {
		return refuse(err)
	}
	strays, err := d.checkStrayTables(names, vs.LastSeq(), replays)
	if err != nil {
		return refuse(err)
	}
	d.mu.lastSeq = seq
	d.visibleSeq.Store(uint64(seq))
	d.syncedSeq.Store(uint64(seq)) // replayed WALs were flushed to synced tables
	if d.opts.ReadOnly {
		d.startTreeFilter()
		d.loadInBackground(later)
		return nil
	}

	// The new WAL is replayed after every WAL that holds records. Only
	// those carry the numbers past them: another file, a stray at the top
	// of the range say, takes its own number only (Reserve).
	for i, n := range logs {
		if replays[i].records {
			vs.MarkFileNumUsed(n)
		}
	}
	num := vs.NextFileNum()
	f, err := d.createWAL(num, 0)
	if err != nil {
		return err
	}
	w, err := d.newWALWriter(f, num)
	if err != nil {
		return err
	}
	d.mu.wal, d.mu.walNum = w, num
	d.mu.logNums[d.rs.Load().mem.Active()] = num
	vs.SetLastSeq(seq)
	edit.LogNum = num
	if err := vs.LogAndApply(edit); err != nil {
		// Not refuse: a failed write or sync may yet have made the edit
		// durable, and then the replayed tables and the new WAL are live.
		// If it did not, the next Open finds them strays.
		return fmt.Errorf("monban: %w", err)
	}
	d.installReadState(d.rs.Load().mem, vs.Current()).unref()
	d.loadTables(edit.Added)
	// Recovery is clean and durable: what it replaced is provably obsolete,
	// and so is every WAL below the log number that is this DB's.
	for _, n := range logs {
		d.removeFile(manifest.KindLog, n)
	}
	for _, n := range obsoleteLogs {
		if d.ownLog(n) {
			d.removeFile(manifest.KindLog, n)
		}
	}
	d.removeStrays(names, strays)
	// A crashed Repair's staging, which only a Repair removed before; one
	// holding anything else is left where it is.
	if staged, err := stagedNames(d.fs, d.dir); err == nil {
		if err := removeStaged(d.fs, d.dir, staged); err != nil {
			d.opts.Logger.Warn("monban: removing a crashed Repair's staging", "dir", repairStaging, "err", err)
		}
	}
	d.estimateRangeDels()
	d.startTreeFilter()
	d.loadInBackground(later)
	d.mu.Lock()
	d.maybeScheduleCompaction()
	d.mu.Unlock()
	return nil
}

// checkMetaNames refuses a directory where CURRENT or CURRENT.tmp should
// be: no DB's, it stops the DB from reading the one or writing the other.
// So does a CURRENT.tmp whose bytes no rollover wrote: the next rollover
// would write over it, and Open would delete it as a crash's leftover.
// Repair moves either aside.
func checkMetaNames(fsys vfs.FS, dir string, entries []vfs.Entry) error {
	for _, e := range entries {
		kind, _, ok := manifest.ParseFilename(e.Name)
		switch {
		case !ok || kind != manifest.KindCurrent && kind != manifest.KindCurrentTemp:
		case e.Dir:
			return fmt.Errorf("monban: %s is a directory, where the DB keeps a file of that name: %w", e.Name, ErrCorruption)
		case kind == manifest.KindCurrentTemp:
			own, err := manifest.CurrentTempIsOwn(fsys, filepath.Join(dir, e.Name))
			if errors.Is(err, fs.ErrNotExist) { // listed, yet not there: a link to nowhere
				return fmt.Errorf("monban: %s is listed but cannot be opened (a dangling link?): %v: %w", e.Name, err, ErrCorruption)
			}
			if err != nil {
				return fmt.Errorf("monban: reading %s: %w", e.Name, err)
			}
			if !own {
				return fmt.Errorf("monban: %s holds what no manifest rollover writes (another program's file?), where the DB stages CURRENT: %w", e.Name, ErrCorruption)
			}
		}
	}
	return nil
}

// walReplay is what replayWAL found in a WAL.
type walReplay struct {
	first   base.SeqNum // the lowest sequence number replayed, 0 for none
	last    base.SeqNum // the highest sequence number replayed
	records bool        // it held at least one record
	sealed  bool        // a rotation or Close sealed it (wal.Reader.Sealed)
	next    uint64      // the WAL that took over, its successor record's; 0 for none
	ended   bool        // it ends at its last record (wal.Reader.EndsCleanly)
	legacy  bool        // it holds a legacy log's records, which no SEAL ends
}

// checkWALEnds checks how the WALs replayed so far end, given logs, all
// of them in order. A rotation creates the next WAL, then seals the old
// one (syncing it) before the next takes a commit, so a WAL may end
// unsealed, even torn, only if every WAL after it holds nothing and is
// unsealed: it is the newest that took a commit, and those after it were
// made by a rotation, or an Open, that a crash stopped before it sealed
// one or committed to the other. Any other lost its end: cut, emptied or
// zeroed, at a record boundary or not, its synced records are gone. A
// legacy log (written before seals), which no rotation sealed, need only
// end at its last record.
func checkWALEnds(logs []uint64, replays []walReplay) error {
	idle := true // every WAL after i holds nothing and is unsealed
	for i := len(replays) - 1; i >= 0; i-- {
		r := replays[i]
		if !idle && !r.sealed && !(r.legacy && r.ended) {
			return fmt.Errorf("monban: %s ends without its seal (cut, emptied or zeroed) but a newer WAL took commits: %w",
				manifest.MakeFilename(manifest.KindLog, logs[i]), ErrCorruption)
		}
		idle = idle && !r.records && !r.sealed
	}
	return nil
}

// checkWALSuccessors refuses a WAL whose successor record names a WAL that
// is missing, logs (all the live WALs present) in order: a rotation
// creates the next WAL, durably, before it writes the record, and a live
// WAL's successor is live too, so it was deleted, and its commits with it.
func checkWALSuccessors(logs []uint64, replays []walReplay) error {
	for i, r := range replays {
		if r.next != 0 && !slices.Contains(logs, r.next) {
			return fmt.Errorf("monban: %s names %s as the WAL that took over from it, which is missing: its commits are gone; Repair keeps those before it: %w",
				manifest.MakeFilename(manifest.KindLog, logs[i]), manifest.MakeFilename(manifest.KindLog, r.next), ErrCorruption)
		}
	}
	return nil
}

// syncReplayed makes durable the WAL f (name) a recovery is about to
// replay, before it writes a table of its records: after a process crash
// they may be in the page cache alone, and a table made of them, synced
// before the edit that names it, would survive a power cut that took them
// away, holding sequence numbers no WAL then accounts for, which the next
// Open takes for lost edits (checkStrayTables). A rotation seals a WAL
// before its memtable is flushed for the same reason.
func syncReplayed(f vfs.File, name string) error {
	if err := f.Sync(); err != nil {
		return fmt.Errorf("monban: syncing %s before replaying it: %w", name, err)
	}
	return nil
}

// checkWALSeqs refuses WALs whose sequence numbers do not run on from
// one to the next, logs in order. Commits are numbered in the order they
// reach the WALs, one after another: only a commit the WAL failed to take
// spends numbers it holds no record of, and then none follows it (the
// error stops writes, and the next Open retires the WAL before any
// commit). So a WAL that goes back was copied in from elsewhere (another
// DB's, an older copy of this one's), and replaying both would make one
// DB of two histories; one that skips ahead follows a WAL that is gone,
// deleted outright, and replaying it would keep later commits without
// that WAL's.
func checkWALSeqs(logs []uint64, replays []walReplay) error {
	var last base.SeqNum
	var lastLog uint64
	for i, r := range replays {
		if !r.records {
			continue
		}
		name := manifest.MakeFilename(manifest.KindLog, logs[i])
		switch {
		case r.first <= last:
			return fmt.Errorf("monban: %s begins at sequence number %d, which %s, before it, reached (%d): one of them was copied in: %w",
				name, r.first, manifest.MakeFilename(manifest.KindLog, lastLog), last, ErrCorruption)
		case last != 0 && r.first > last+1:
			return fmt.Errorf("monban: %s begins at sequence number %d, and %s, before it, ends at %d: the WAL that held the commits between is gone; Repair keeps those before it: %w",
				name, r.first, manifest.MakeFilename(manifest.KindLog, lastLog), last, ErrCorruption)
		}
		last, lastLog = r.last, logs[i]
	}
	return nil
}

// replayWAL applies the batches of one WAL to memtables, writing each
// memtable that fills — and the last one — to L0 and adding it to edit.
func (d *DB) replayWAL(num uint64, edit *manifest.VersionEdit) (walReplay, error) {
	var out walReplay
	name := manifest.MakeFilename(manifest.KindLog, num)
	f, err := openListed(d.fs, d.path(manifest.KindLog, num))
	if err != nil {
		return out, fmt.Errorf("monban: %w", err)
	}
	defer f.Close()
	if !d.opts.ReadOnly {
		if err := syncReplayed(f, name); err != nil {
			return out, err
		}
	}
	rd := wal.NewRecyclableReader(f, name, num)
	var mem *memtable.Memtable
	if d.opts.ReadOnly {
		mem = d.rs.Load().mem.Active() // it grows past MemtableSize: nothing may flush
	} else {
		// Each replayed memtable is this function's alone: its arena goes
		// back when it has been written, not when the collector finds it.
		mem = d.newMemtable(0)
		defer func() { mem.Unref() }()
	}
	flush := func() error {
		if mem.Empty() || d.opts.ReadOnly {
			return nil
		}
		// No tombstone elision here: the tables replayed so far are not in
		// a version yet, so no filter could vouch for them.
		v := d.vs.Current()
		bits := d.filterBitsPerKey(v, 0, uint64(mem.Len()), nil)
		v.Unref()
		meta, _, err := d.writeTable(mem, nil, nil, bits)
		if err != nil {
			return fmt.Errorf("monban: replaying %s: %w", name, err)
		}
		if meta != nil {
			edit.Added = append(edit.Added, manifest.NewFile{Level: 0, Meta: meta})
		}
		mem.Unref()
		mem = d.newMemtable(0)
		return nil
	}
	identified := false
	for first := true; ; first = false {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return out, fmt.Errorf("monban: replaying %s: %w", name, err)
		}
		if err := checkWALIdentity(name, rec, first, d.vs.DBID()); err != nil {
			return out, err
		}
		if _, ok := walIdentity(rec); ok {
			identified = true
			continue
		}
		if out.next != 0 {
			return out, fmt.Errorf("monban: %s at offset %d: a record after the one naming the WAL that took over: %w", name, rd.Offset(), ErrCorruption)
		}
		if next, ok := walSuccessor(rec); ok {
			out.next = next
			continue
		}
		if seq, count, _ := batchHeader(rec); count > 0 && seq <= out.last {
			return out, fmt.Errorf("monban: %s at offset %d: a batch at sequence number %d after one up to %d: %w",
				name, rd.Offset(), seq, out.last, ErrCorruption)
		}
		out.records = true
		_, err = decodeBatch(rec, func(e batchEntry) error {
			if out.first == 0 || e.Seq < out.first {
				out.first = e.Seq
			}
			out.last = max(out.last, e.Seq)
			err := d.apply(mem, e)
			if errors.Is(err, memtable.ErrInvalidEntry) {
				err = fmt.Errorf("%w: %w", err, ErrCorruption) // the WAL's, not the memtable's
			}
			return err
		})
		if err != nil {
			return out, fmt.Errorf("monban: replaying %s at offset %d: %w", name, rd.Offset(), err)
		}
		if mem.ApproximateSize() >= d.opts.MemtableSize {
			if err := flush(); err != nil {
				return out, err
			}
		}
	}
	if n := rd.DroppedBytes(); n > 0 {
		d.opts.Logger.Info("monban: dropped a torn tail from the WAL", "file", name, "bytes", n)
	}
	if !identified && !out.records && d.vs.DBID() != 0 {
		if err := checkUnidentifiedWAL(f, name, num, d.vs.DBID()); err != nil {
			return out, err
		}
	}
	out.sealed, out.ended, out.legacy = rd.Sealed(), rd.EndsCleanly(), out.records && rd.Legacy()
	return out, flush()
}

// checkLogOwners refuses log files that hold each other's records, as
// two swapped files do: read under its own number, each would read as
// empty (another log's bytes in a reused file are a torn tail), and the
// one below the log number would be deleted unread, though it holds the
// live log's records. Repair reads each as the log it holds.
func (d *DB) checkLogOwners(nums []uint64) error {
	for _, n := range nums {
		m, err := d.logIn(n, nums)
		if err != nil {
			return err
		}
		if m != n {
			return fmt.Errorf("monban: %s holds the records of log %s, whose file is present too: the two were swapped or copied: %w",
				manifest.MakeFilename(manifest.KindLog, n), manifest.MakeFilename(manifest.KindLog, m), ErrCorruption)
		}
	}
	return nil
}

// logIn returns the log whose records log file n holds: n, or another of
// present, the numbers whose files are present, if its first fragment
// verifies as that log's. A file may begin with another log's fragment
// legitimately only where that log's file is gone: reuse renames the
// file, and a log's number is never given again once the log may have
// left a fragment on disk (only the number of a file Open found holding
// no record, and deleted, may be: Reserve). So another present number
// means that two files were swapped, or one copied over another.
func (d *DB) logIn(n uint64, present []uint64) (uint64, error) {
	name := manifest.MakeFilename(manifest.KindLog, n)
	f, err := openListed(d.fs, d.path(manifest.KindLog, n))
	if err != nil {
		return 0, fmt.Errorf("monban: %w", err)
	}
	defer f.Close()
	// n first: a file that begins as its own log is its own.
	m, ok, err := wal.FirstFragmentOf(f, append([]uint64{n}, present...))
	if err != nil {
		return 0, fmt.Errorf("monban: reading %s: %w", name, err)
	}
	if !ok {
		return n, nil
	}
	return m, nil
}

// checkLiveFiles checks the manifest against the directory before anything
// is replayed or written: the WAL its log number names was created before
// the edit that recorded it and is deleted only after a later edit moves
// the log number on, so a missing one means the manifest lost durable
// edits (the flushed data they recorded would be gone); and every table
// it names must be there and be the table it names (checkTables). It
// returns the tables to load once Open is done.
func (d *DB) checkLiveFiles(names []string) ([]manifest.NewFile, error) {
	present := make(map[string]bool, len(names))
	for _, n := range names {
		present[n] = true
	}
	manifestName := manifest.MakeFilename(manifest.KindManifest, d.vs.ManifestFileNum())
	if ln := d.vs.LogNum(); ln != 0 && !present[manifest.MakeFilename(manifest.KindLog, ln)] {
		return nil, fmt.Errorf("monban: %s names WAL %s as live, which is missing: the manifest lost edits: %w",
			manifestName, manifest.MakeFilename(manifest.KindLog, ln), ErrCorruption)
	}
	v := d.vs.Current()
	defer v.Unref()
	for level, files := range v.Levels {
		for _, f := range files {
			if name := manifest.MakeFilename(manifest.KindTable, f.FileNum); !present[name] {
				return nil, fmt.Errorf("monban: table %s of L%d, named by %s, is missing: %w", name, level, manifestName, ErrCorruption)
			}
		}
	}
	return d.checkTables(v)
}

// checkStrayTables refuses a directory holding a table no live version
// names (a stray) with an entry that neither the manifest nor the WALs
// replayed account for, and returns the strays whose entries they all
// account for: provably obsolete, Open deletes them. A stray is a whole
// table (tableWriter writes under a temporary name) that a flush or
// compaction wrote before a crash cut it off from its edit, or an input a
// compaction's edit left for the deleter: a compaction's entries come from
// live tables, whose sequence numbers are at most the manifest's last,
// and a flush's from a memtable whose WAL is replayed. An entry numbered
// between the manifest's last sequence number and the first the WALs hold
// is in no other file: the manifest lost the edit that placed the table
// (a manifest cut after its first record parses whole), and deleting the
// table would lose acknowledged writes. A file under a table's name that
// does not read as a table is no output of this DB's (one cut short has a
// temporary name), nor is a table another DB's id marks (its db.id
// property: tableStanding, which counts a former id's tables this DB's up
// to the entries the two share), which no lost edit of this manifest can
// explain either; nor can one be told this DB's that carries an id where
// the manifest gives none. Each is left where it is, since nothing proves it
// obsolete. One the disk fails to read stops Open.
func (d *DB) checkStrayTables(names []string, manifestSeq base.SeqNum, replays []walReplay) (obsolete []uint64, err error) {
	walFirst := base.SeqNum(0) // 0: no WAL holds a record
	for _, r := range replays {
		if r.first != 0 && (walFirst == 0 || r.first < walFirst) {
			walFirst = r.first
		}
	}
	live, dbID, formers := d.vs.LiveFiles(), d.vs.DBID(), d.vs.FormerDBIDs()
	for _, name := range names {
		kind, num, ok := manifest.ParseFilename(name)
		if !ok || kind != manifest.KindTable || live[num] {
			continue
		}
		t, err := d.readTableFile(num, true)
		if errors.Is(err, ErrCorruption) { // junk, or a link to nowhere
			d.opts.Logger.Warn("monban: leaving a file no manifest names, which does not read as a table", "file", name, "err", err)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("monban: reading stray table %s: %w", name, err)
		}
		props := t.Properties()
		whose := tableStanding(props.DBID, props.LargestSeq, dbID, formers)
		if whose == another {
			t.Close()
			d.opts.Logger.Warn("monban: leaving a table no manifest names, which another DB wrote", "file", name, "db", fmt.Sprintf("%016x", props.DBID))
			continue
		}
		seq, found, err := unaccountedSeq(t, manifestSeq, walFirst)
		t.Close()
		switch {
		case err != nil:
			return nil, fmt.Errorf("monban: reading stray table %s, which no version of %s names: %w",
				name, manifest.MakeFilename(manifest.KindManifest, d.vs.ManifestFileNum()), err)
		case found:
			return nil, fmt.Errorf("monban: table %s is in no version of %s, yet holds sequence number %d, which neither it (up to %d) nor the WALs account for: the manifest lost edits: %w",
				name, manifest.MakeFilename(manifest.KindManifest, d.vs.ManifestFileNum()), seq, manifestSeq, ErrCorruption)
		case whose == unknown:
			// The manifest gives no id (it lost the edit that gave it, or
			// predates ids): whose the table is cannot be told.
			continue
		}
		obsolete = append(obsolete, num)
	}
	return obsolete, nil
}

// unaccountedSeq returns a sequence number of stray table t that neither
// the manifest (up to manifestSeq) nor the WALs (from walFirst on; 0 if
// they hold no record) account for, if it holds one. A stray with one is
// no crashed flush's or compaction's output: the manifest lost the edit
// that placed it.
func unaccountedSeq(t *sstable.Reader, manifestSeq, walFirst base.SeqNum) (base.SeqNum, bool, error) {
	if p := t.Properties(); p.LargestSeq <= manifestSeq || walFirst != 0 && p.SmallestSeq >= walFirst {
		return 0, false, nil
	}
	it := t.NewIter(nil, nil)
	for ok := it.First(); ok; ok = it.Next() {
		if s := it.Key().Seq(); s > manifestSeq && (walFirst == 0 || s < walFirst) {
			return s, true, it.Close()
		}
	}
	return 0, false, it.Close()
}

// openListed opens a file of the DB's directory. fs.ErrNotExist for a
// file the directory lists, or that the manifest names, is not "no DB
// here", which fs.ErrNotExist means to Open's callers: the name is a link
// to nowhere, or the file went since. It is reported as corruption naming
// the file, without the fs.ErrNotExist identity.
func openListed(fsys vfs.FS, path string) (vfs.File, error) {
	f, err := fsys.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s cannot be opened (a link to nowhere, or removed?): %v: %w", filepath.Base(path), err, ErrCorruption)
	}
	return f, err
}

// standing is whose a table no manifest names is, by its db.id property.
type standing uint8

const (
	ours    standing = iota // this DB's: its id, a former id it shares the table's entries with, or none (written before ids)
	another                 // another DB's: no lost edit of this DB's can explain it
	unknown                 // an id, where the DB has none to compare it with
)

// tableStanding says whose a table is whose db.id property is tableDB and
// whose largest sequence number is largest, for the DB of id dbID and
// former ids formers. A former id vouches for a table only up to the
// sequence number the two DBs share: past it, each numbered its own
// writes, and a table holding a later entry is the other DB's.
func tableStanding(tableDB uint64, largest base.SeqNum, dbID uint64, formers []manifest.FormerDBID) standing {
	switch {
	case tableDB == 0 || tableDB == dbID:
		return ours
	case dbID == 0:
		return unknown
	}
	for _, f := range formers {
		if f.ID == tableDB && largest <= f.Shared {
			return ours
		}
	}
	return another
}

// readTableFile opens table num outside the table cache, for a reader
// that reads it through once (Repair, the stray check), without its
// filters when skipFilters.
func (d *DB) readTableFile(num uint64, skipFilters bool) (*sstable.Reader, error) {
	f, err := openListed(d.fs, d.path(manifest.KindTable, num))
	if err != nil {
		return nil, err
	}
	return sstable.Open(f, sstable.ReaderOptions{FileNum: num, Name: manifest.MakeFilename(manifest.KindTable, num), SkipFilters: skipFilters})
}

// removeStrays deletes the stray tables checkStrayTables proved
// obsolete, and every table a flush or compaction was writing when it was
// cut short (named manifest.KindTableTemp: renamed, it would be whole).
func (d *DB) removeStrays(names []string, tables []uint64) {
	for _, num := range tables {
		if d.removeFile(manifest.KindTable, num) {
			d.opts.EventListener.TableDeleted(TableFileInfo{FileNum: num, Level: -1})
		}
	}
	for _, name := range names {
		if kind, num, ok := manifest.ParseFilename(name); ok && kind == manifest.KindTableTemp {
			d.removeFile(kind, num)
		}
	}
}

// Close waits for background work to stop, seals and closes the WAL, and
// releases the directory. The seal (docs/format.md, "Recyclable logs and
// the seal") ends the log where its records end: a WAL written over a
// recycled file still holds the older log's bytes past them, which a
// reader could not otherwise tell from a record a crash tore. Unflushed memtables are not lost: their WAL is
// replayed by the next Open. Operations after Close return ErrClosed.
func (d *DB) Close() error {
	d.mu.Lock()
	if d.closed.Swap(true) {
		d.mu.Unlock()
		return ErrClosed
	}
	d.mu.writeCond.Broadcast()
	d.mu.flushCond.Broadcast()
	for len(d.mu.writers) > 0 {
		d.mu.writeCond.Wait()
	}
	// Flushes and compactions, background or called by Flush, Compact and
	// CompactRange, see closed and stop at their next step; none may touch
	// the directory once the lock is released.
	for d.mu.flushing || len(d.mu.compactions) > 0 || d.mu.manualCompaction {
		d.mu.flushCond.Wait()
	}
	d.mu.Unlock()
	d.bg.Wait()
	var errs []error
	if d.mu.wal != nil {
		errs = append(errs, d.mu.wal.Seal()) // closeResources closes it
	}
	for _, num := range d.mu.recycledWALs {
		d.removeFile(manifest.KindLog, num) // obsolete, kept only to be reused
	}
	d.mu.recycledWALs = nil
	// The deleter's last pass, in closeResources, may fail too.
	err := d.closeResources()
	return errors.Join(append(errs, d.mu.bgErr, err)...)
}

// closeResources releases what Open acquired, in reverse order.
func (d *DB) closeResources() error {
	var errs []error
	if d.mu.wal != nil { // an Open that failed after creating it, too
		errs = append(errs, d.mu.wal.Close())
	}
	d.deleteNow(true)
	if d.tree != nil {
		d.tree.close() // before the tables its builds read
	}
	d.filesMu.Lock()
	d.filesReleased = true
	d.filesMu.Unlock()
	rs := d.rs.Swap(nil)
	if rs != nil {
		// The memtables still in the level hold the DB's own reference
		// too (newMemtable's caller's, which a flush drops once it has
		// taken one): dropped here, an arena goes when the last reader
		// lets go, not when the collector finds the memtable.
		rs.eachMemtable((*memtable.Memtable).Unref)
		rs.unref()
	}
	if d.tables != nil {
		errs = append(errs, d.tables.Close())
	}
	d.metaBudget.Close()
	d.cache.Close()
	if d.vs != nil {
		errs = append(errs, d.vs.Close())
	}
	if d.lock != nil {
		errs = append(errs, d.lock.Close())
	}
	return errors.Join(errs...)
}
