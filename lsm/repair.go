package lsm

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/memtable"
	"github.com/monbandb/monban/sstable"
	"github.com/monbandb/monban/vfs"
)

// lostDir holds what Repair set aside: never read again, never deleted,
// for a human to inspect.
const lostDir = "lost"

// repairStaging is where Repair builds its manifest. manifest.Create needs a
// directory without CURRENT, and building beside the old CURRENT means a
// crash before the commit leaves the directory as it was.
const repairStaging = "REPAIR.tmp"

// RepairOptions are what Repair takes beyond the DB's Options.
type RepairOptions struct {
	// Force repairs a directory in which no file is in monban's format
	// (another program's DB, say), which Repair otherwise refuses with
	// ErrNotDB. Its files with monban's names go to lost/ (but empty WALs,
	// which hold no bytes to keep and replay to nothing), the others stay
	// where they are, and the DB made there is empty. A directory without
	// a single file of monban's names is refused even so.
	Force bool
}

// Repair is RepairWith with the default RepairOptions.
func Repair(dir string, opts *Options) (*RepairReport, error) {
	return RepairWith(dir, opts, RepairOptions{})
}

// RepairWith rebuilds the DB in dir from the files it finds there, for a
// directory Open refuses: CURRENT missing, the manifest corrupt, a table or
// WAL damaged. It takes the directory lock (ErrLocked while a DB has it
// open). What it cannot vouch for it sets aside in dir/lost/ and never
// deletes; the report lists every file and what became of it (Fate).
//
//  0. A directory in which no table, WAL or manifest is in monban's
//     format — checked by magic number, record checksum or format record,
//     not by name — is refused with ErrNotDB, and left as it was (LOCK
//     included), unless ropts.Force.
//  1. The manifest: the one CURRENT names or, failing that, the newest
//     that reads, if it replays whole and agrees with the directory (the
//     WAL its log number names and every table it names are there, and
//     no table it does not name holds a sequence number that neither it
//     nor the WALs account for, as Open's stray check asks): a manifest
//     that lost edits would miss them. A table it names that is
//     there but damaged (truncated, say) does not make it lie about what
//     is live; step 2 sets that table aside. That
//     manifest is trusted to say what is live: a table no live version
//     names and a WAL below its log number are obsolete — a compaction's
//     inputs a crash left behind, a WAL already flushed — and are set
//     aside unread, so they cannot bring back what newer data deleted. A
//     file in the place of a live table that holds another table (an
//     older incarnation's) is set aside too, and a table of
//     an obsolete name that holds a live table (its table id is one the
//     manifest names: the two files swapped) is merged. With no manifest trusted,
//     every table is of unknown standing and merged (the report counts
//     them).
//  2. Every other table is read through to the end, which checks the
//     checksum of every block its records are read from: the data,
//     index and range-deletion blocks. A data block that fails is
//     stepped over: the table's other blocks are merged, and the table
//     is copied into lost/ (FatePartlyMerged, the blocks lost in Err).
//     A table whose index, range deletions or properties fail, or none
//     of whose data blocks verifies, is set aside whole. The filters and
//     the key hashes are only what the new tables write afresh: a table
//     damaged in its filter or range-filter block alone is read again
//     without them, merged and removed, the damage in its report entry's
//     Err; its key-hash block is not read.
//  3. The WALs are replayed in number order, a batch at a time, each
//     file as the log whose records it holds: two swapped files are read
//     each under the other's number (a file whose first record verifies
//     as another present log's), and of two holding one log's records,
//     the one not named for it is a copy, set aside. The first
//     that cannot be replayed to its end (damaged mid-file, or without
//     its seal while a newer WAL holds commits) keeps its batches before the
//     damage, is set aside, and every WAL after it is set aside unread (an
//     empty one, which holds nothing, is removed), as is every WAL after
//     one deleted outright (the log number's WAL missing while no table
//     the manifest does not name could hold its records, or, with a
//     trusted manifest, sequence numbers skipped between two WALs:
//     without one, obsolete WALs kept for reuse are replayed too, and
//     the numbers between them and the live ones are in the tables):
//     the repaired DB holds a prefix of the commits. The newest WAL's torn
//     tail is dropped, and the WAL set aside too.
//  4. Everything that survived is merged into new tables of the last
//     level, keeping only the newest version of each key (no snapshot
//     survives a repair) and no tombstone (nothing lies below them).
//     The new files are numbered above every number a manifest it read
//     gave (one it names may be missing, and must not come back under
//     its name) and every WAL file holding records, and take no number a
//     file in the directory or in lost/ has.
//  5. A new manifest naming only those tables, with the highest sequence
//     number seen and a DB id, which the new tables carry too: the
//     trusted manifest's; without one, the id every table and WAL merged
//     carries, if one and the same; a new one otherwise. It is
//     made durable and CURRENT switched to it: the commit point. Files
//     set aside before it are moved into lost/, or copied where the old
//     state still needs them until then (CURRENT, the manifests, a WAL
//     at or above the trusted manifest's log number, a table it names),
//     so a crash before the commit leaves the old CURRENT in force with
//     everything it names, and the next Repair trusts the same manifest.
//  6. Only then are removed the tables and WALs every record of which is
//     in the new tables or older than a version there of its key (step
//     4), and the originals of what was copied into lost/; the directory
//     is synced after.
//
// Files with names monban never writes are left where they are, and so
// are directories under the names of tables, WALs and manifests; one at
// CURRENT or CURRENT.tmp, where the commit writes, is moved into lost/.
//
// Why merge rather than keep the tables where they are: without a manifest
// a table's level is unknown, and the levels are what made overlapping
// sequence ranges safe. A table that was in L6 with k@100 and LargestSeq
// 1000 and one from L5 with k@800 cannot both go to L0 in LargestSeq order
// (a read would stop at k@100), and no placement that reads one table
// before another is right for every such pair. The merge compares
// sequence numbers entry by entry, so it is right for any set of tables;
// it costs a rewrite of the whole DB, which a repair can afford.
//
// Caveat: what a damaged block or file held is gone, tombstones too: a key
// deleted by a tombstone in a block or table set aside can come back with
// an older value
// from a table that survived; and with no manifest trusted, so can a key
// whose tombstone a compaction had dropped when a crash left that
// compaction's inputs behind. Every table found is open at once for the
// merge (MaxOpenFiles does not apply), and the WALs' contents are held in
// memtables until the merge is done.
func RepairWith(dir string, opts *Options, ropts RepairOptions) (*RepairReport, error) {
	o := opts.withDefaults()
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	before, err := o.FS.List(dir)
	if err != nil {
		return nil, fmt.Errorf("monban: repairing %s: %w", dir, err)
	}
	lock, err := lockDir(o.FS, dir)
	if err != nil {
		return nil, err
	}
	// Listed again under the lock: a DB that let go of the directory
	// meanwhile may have written and removed files since. A LOCK that was
	// not there before is this Repair's own, not something it found.
	lockName := manifest.MakeFilename(manifest.KindLock, 0)
	madeLock := !slices.Contains(before, lockName)
	entries, err := vfs.ReadDir(o.FS, dir)
	if err != nil {
		lock.Close()
		return nil, fmt.Errorf("monban: repairing %s: %w", dir, err)
	}
	r := &repairer{d: &DB{dir: dir, opts: o, fs: o.FS}, report: &RepairReport{Dir: dir}, force: ropts.Force, dirs: map[string]bool{}, unopened: map[string]error{}}
	var names []string
	for _, e := range entries {
		if e.Name != lockName || !madeLock {
			names = append(names, e.Name)
		}
		r.dirs[e.Name] = e.Dir
	}
	defer r.closeSources()
	err = r.run(names)
	if errors.Is(err, ErrNotDB) && madeLock {
		// Refused: the directory is left as it was, so without the lock
		// this Repair created. Removed while held, no other taker can
		// have it meanwhile.
		_ = o.FS.Remove(filepath.Join(dir, lockName))
	}
	lock.Close()
	if errors.Is(err, ErrNotDB) {
		return nil, fmt.Errorf("monban: repairing %s: %w", dir, err) // nothing done: no report
	}
	if err != nil {
		return r.report, fmt.Errorf("monban: repairing %s: %w", dir, err)
	}
	return r.report, nil
}

// lockDir takes the directory lock Open and Repair hold.
func lockDir(fsys vfs.FS, dir string) (io.Closer, error) {
	lock, err := fsys.Lock(filepath.Join(dir, manifest.MakeFilename(manifest.KindLock, 0)))
	if errors.Is(err, vfs.ErrLocked) {
		return nil, fmt.Errorf("%w: %s: %w", ErrLocked, dir, err)
	}
	if errors.Is(err, fs.ErrNotExist) {
		// The directory is there (its listing came first): LOCK is a
		// link to nowhere. Not "no DB here", which fs.ErrNotExist says.
		return nil, fmt.Errorf("monban: locking %s: LOCK is listed but cannot be created or opened (a dangling link?): %v: %w", dir, err, ErrCorruption)
	}
	if err != nil {
		return nil, fmt.Errorf("monban: locking %s: %w", dir, err)
	}
	return lock, nil
}

// repairer holds one Repair's state. d is a DB with only what writing
// tables needs (dir, opts, fs and, from the rebuild, vs), so the rebuild
// writes through the same writeTables as a compaction.
type repairer struct {
	d      *DB
	report *RepairReport
	force  bool

	dirs         map[string]bool  // the entries of dir that are directories
	unopened     map[string]error // tables, WALs and manifests listed that do not open: links to nowhere
	tables, logs []uint64         // found in dir, ascending
	wals         []logFile        // logs' files, with the logs they hold (logFiles)
	manifests    []string         // MANIFEST-*, ascending
	// The rebuild's numbers: above after (every number a manifest read
	// gave, every WAL file that holds records, which Open must not replay
	// after the new WAL), and none of taken (the files in dir and lost/).
	after     uint64
	taken     []uint64
	lostNames map[string]bool

	trusted      *trustedManifest // nil: no manifest vouches for what is live
	manifestErrs map[string]error // why each manifest tried was not trusted

	readers  []*sstable.Reader    // verified tables, open for the merge
	mems     []*memtable.Memtable // one per replayed WAL
	obsolete []string             // removed after the commit
	lastSeq  base.SeqNum
}

func (r *repairer) run(names []string) error {
	if err := r.scan(names); err != nil {
		return err
	}
	wals, err := r.logFiles()
	if err != nil {
		return err
	}
	r.wals = wals
	for _, w := range wals {
		if w.holds {
			r.after = max(r.after, w.num)
		}
	}
	trusted, err := r.trustManifest()
	if err != nil {
		return err
	}
	r.trusted = trusted
	for _, num := range r.tables {
		if err := r.table(num); err != nil {
			return err
		}
	}
	if err := r.replayWALs(); err != nil {
		return err
	}
	if err := r.setAsideMeta(names); err != nil {
		return err
	}
	if err := r.rebuild(); err != nil {
		return err
	}
	r.removeObsolete()
	return nil
}

// scan sorts the files of dir by kind, refuses a directory that holds no
// DB (step 0), and notes the names and numbers in lost/ so that nothing
// set aside or created now takes one of them.
func (r *repairer) scan(names []string) error {
	if isDir, ok := r.dirs[lostDir]; ok && !isDir {
		return fmt.Errorf("%s is a file, in the place of the directory where Repair keeps what it sets aside (%s/): it is not monban's, move it away: %w",
			r.path(lostDir), lostDir, fs.ErrExist)
	}
	lost, err := r.d.fs.List(r.path(lostDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	r.lostNames = map[string]bool{}
	for _, name := range lost {
		r.lostNames[name] = true
		if _, num, ok := manifest.ParseFilename(name); ok {
			r.taken = append(r.taken, num)
		}
	}
	var files []string
	for _, name := range names {
		kind, num, ok := manifest.ParseFilename(name)
		if ok {
			r.taken = append(r.taken, num) // a directory's too: no new file can take its name
		}
		if !ok || r.dirs[name] && kind != manifest.KindCurrent && kind != manifest.KindCurrentTemp {
			// A directory under a DB file's name is not the DB's; but one
			// where CURRENT or CURRENT.tmp goes is set aside (setAsideMeta).
			if name != lostDir && name != repairStaging {
				r.report.Files = append(r.report.Files, RepairedFile{Name: name, Fate: FateLeft})
			}
			continue
		}
		files = append(files, name)
		if kind == manifest.KindTable || kind == manifest.KindLog || kind == manifest.KindManifest {
			f, err := openListed(r.d.fs, r.path(name))
			if errors.Is(err, ErrCorruption) {
				r.unopened[name] = err // set aside with the meta files, once the directory is known a DB
				continue
			}
			if err != nil {
				return fmt.Errorf("reading %s: %w", name, err)
			}
			f.Close()
		}
		switch kind {
		case manifest.KindTable:
			r.tables = append(r.tables, num)
		case manifest.KindLog:
			r.logs = append(r.logs, num)
		case manifest.KindManifest:
			r.manifests = append(r.manifests, name)
		}
	}
	slices.Sort(r.tables)
	slices.Sort(r.logs)
	own, named, err := ownsDir(r.d.fs, r.d.dir, files)
	switch {
	case err != nil:
		return err
	case own:
		return nil
	case len(names) == 0:
		return fmt.Errorf("%w: %s is empty: nothing to repair", ErrNotDB, r.d.dir)
	case !named:
		return fmt.Errorf("%w: %s holds no file of a DB (%s)", ErrNotDB, r.d.dir, listNames(names))
	case !r.force:
		return fmt.Errorf("%w: no file of %s is in monban's format (%s): another program's? RepairOptions.Force (kvbench repair -force) rebuilds it all the same, setting those files aside",
			ErrNotDB, r.d.dir, listNames(names))
	}
	return nil
}

// ownsDir reports whether a table, WAL or manifest of dir is in monban's
// format (ownFile), and whether any file has one of monban's names (LOCK
// aside: other engines take one too). The error is the file system's,
// when a file could not be read to tell.
func ownsDir(fsys vfs.FS, dir string, names []string) (own, named bool, err error) {
	for _, name := range names {
		if kind, _, ok := manifest.ParseFilename(name); ok && kind != manifest.KindLock {
			own, err := ownFile(fsys, dir, name)
			if own || err != nil {
				return own, true, err
			}
			named = true
		}
	}
	return false, named, nil
}

// ownFile reports whether a table, WAL or manifest of dir is in monban's
// format, by its content, not its name (a link to nowhere is not): a
// table ends in the footer magic, a WAL holds a record that verifies (its
// checksum is seeded with the record's offset, so another program's log
// never does), a manifest opens with the format record. The error is the
// file system's, when it could not be read to tell: a disk that fails to
// answer says nothing of whose the file is.
func ownFile(fsys vfs.FS, dir, name string) (bool, error) {
	kind, num, _ := manifest.ParseFilename(name)
	path := filepath.Join(dir, name)
	switch kind {
	case manifest.KindManifest:
		own, err := manifest.HasFormat(fsys, path)
		if errors.Is(err, fs.ErrNotExist) { // listed: a link to nowhere
			return false, nil
		}
		return own, err
	case manifest.KindTable, manifest.KindLog:
		f, err := openListed(fsys, path)
		if errors.Is(err, ErrCorruption) { // a link to nowhere holds nothing of monban's
			return false, nil
		}
		if err != nil {
			return false, err
		}
		defer f.Close()
		if kind == manifest.KindTable {
			return sstable.HasMagic(f)
		}
		return walHoldsRecord(f, name, num)
	}
	return false, nil
}

// listNames lists names for an error message: a few, then how many more.
func listNames(names []string) string {
	const shown = 6
	if len(names) == 0 {
		return "nothing"
	}
	s := fmt.Sprint(names[:min(len(names), shown)])
	if len(names) > shown {
		s += fmt.Sprintf(" and %d more", len(names)-shown)
	}
	return s
}

// closeSources closes the verified tables; the merge closed only its
// iterators.
func (r *repairer) closeSources() {
	for _, t := range r.readers {
		t.Close()
	}
}

func (r *repairer) path(elem ...string) string {
	return filepath.Join(append([]string{r.d.dir}, elem...)...)
}
