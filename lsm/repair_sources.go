package lsm

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/memtable"
	"github.com/monbandb/monban/sstable"
	"github.com/monbandb/monban/vfs"
	"github.com/monbandb/monban/wal"
)

// Steps 1–3 of Repair: which manifest to trust, and what becomes of each
// table and WAL.

// trustedManifest is what a manifest Repair trusts says is live.
type trustedManifest struct {
	name    string
	live    map[uint64]bool // table file numbers of the current version
	ids     map[uint64]bool // and their table ids
	logNum  uint64          // WALs below it are flushed
	lastSeq base.SeqNum
	dbID    uint64 // the identity its DB's WALs begin with, 0 for none
	// formerDBIDs are the other ids its DB's tables may carry (a
	// checkpoint's source's).
	formerDBIDs []manifest.FormerDBID
	// logGone: the WAL logNum names is missing, deleted rather than
	// retired by edits the manifest lost (agrees): its commits are gone.
	logGone bool
}

// trustManifest returns the manifest CURRENT names or, failing that, the
// newest other one, that replays whole and agrees with the directory;
// nil if none does. Why each other one was not trusted goes to the report
// (setAsideMeta).
func (r *repairer) trustManifest() (*trustedManifest, error) {
	r.manifestErrs = map[string]error{}
	if !r.dirs[manifest.MakeFilename(manifest.KindCurrent, 0)] { // a directory names nothing
		vs, err := manifest.Recover(r.d.fs, r.d.dir)
		if err := diskError(err); err != nil {
			return nil, err
		}
		if err == nil {
			if t, err := r.agrees(vs); t != nil || err != nil {
				return t, err
			}
		}
	}
	for i := len(r.manifests) - 1; i >= 0; i-- {
		name := r.manifests[i]
		if _, tried := r.manifestErrs[name]; tried {
			continue
		}
		vs, err := manifest.RecoverManifest(r.d.fs, r.d.dir, name)
		if err := diskError(err); err != nil {
			return nil, err
		}
		if err != nil {
			r.manifestErrs[name] = err
			continue
		}
		if t, err := r.agrees(vs); t != nil || err != nil {
			return t, err
		}
	}
	return nil, nil
}

// diskError returns err if it is the file system's failure rather than
// an answer about a manifest: not damage (ErrCorruption) and not "no
// DB" (fs.ErrNotExist). A manifest the disk failed to read is not
// distrusted: Repair stops instead, since a manifest it goes without
// cannot set aside the tables its compactions made obsolete.
func diskError(err error) error {
	if err == nil || errors.Is(err, ErrCorruption) || errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// agrees closes vs and returns what it says is live if the directory holds
// the WAL its log number names and every table it names. A manifest that
// lost edits fails one of them (a later edit moved the log number on and
// its WAL was deleted, or dropped tables that were deleted since), and
// trusting it would set aside as obsolete the tables those edits added.
// A missing WAL is not lost edits, though, where every table present is
// one the manifest names: an edit that moved the log number past the WAL
// flushed its records to a table, which it does not name (a flush that
// wrote no table held nothing to lose). Then the WAL was deleted, and the
// manifest is trusted with its log gone (logGone).
func (r *repairer) agrees(vs *manifest.VersionSet) (*trustedManifest, error) {
	defer vs.Close()
	// Repair's own files are numbered above every number this manifest
	// gave, not only above the files present: one it names that is gone
	// would otherwise come back under its name, and, should Repair crash
	// before its commit, make this manifest agree with the directory.
	r.after = max(r.after, vs.NextFileNum()-1)
	name := manifest.MakeFilename(manifest.KindManifest, vs.ManifestFileNum())
	t := &trustedManifest{name: name, live: map[uint64]bool{}, ids: map[uint64]bool{}, logNum: vs.LogNum(), lastSeq: vs.LastSeq(), dbID: vs.DBID(), formerDBIDs: vs.FormerDBIDs()}
	var missing error
	logGone := t.logNum != 0 && !slices.Contains(r.logs, t.logNum)
	v := vs.Current()
	defer v.Unref()
	for _, files := range v.Levels {
		for _, f := range files {
			t.live[f.FileNum] = true
			if f.TableID != 0 {
				t.ids[f.TableID] = true
			}
			if _, present := slices.BinarySearch(r.tables, f.FileNum); !present && missing == nil {
				missing = fmt.Errorf("table %s it names is missing", manifest.MakeFilename(manifest.KindTable, f.FileNum))
			}
		}
	}
	if missing == nil {
		var err error
		if missing, err = r.anotherDBsTables(v); err != nil {
			return nil, err
		}
	}
	if missing == nil {
		var err error
		if missing, err = r.lostEdits(t); err != nil {
			return nil, err
		}
	}
	if missing == nil && logGone {
		if stray := slices.IndexFunc(r.tables, func(num uint64) bool { return !t.live[num] }); stray >= 0 {
			missing = fmt.Errorf("the WAL its log number names, %s, is missing, and table %s, which it does not name, may hold its records: it lost edits",
				manifest.MakeFilename(manifest.KindLog, t.logNum), manifest.MakeFilename(manifest.KindTable, r.tables[stray]))
		} else {
			t.logGone = true
		}
	}
	if missing != nil {
		r.manifestErrs[name] = fmt.Errorf("not trusted: %w", missing)
		return nil, nil
	}
	r.manifestErrs[name] = nil
	r.report.TrustedManifest = name
	return t, nil
}

// anotherDBsTables says why version v is another DB's, if it is: it names
// tables (by id), and of those whose files read, none is the table it
// names. A DB made alike names its files alike, so its manifest, copied in
// with its CURRENT, finds every name it expects; trusted, it would set
// every table of this DB aside as one whose id it names for no table. A
// table that does not read says nothing (damage, judged in step 2); one
// table replaced, the others intact, leaves the manifest trusted, and the
// replacement set aside. The error is the file system's.
func (r *repairer) anotherDBsTables(v *manifest.Version) (why, err error) {
	read := 0
	for _, files := range v.Levels {
		for _, f := range files {
			if f.TableID == 0 {
				return nil, nil // written before table ids: nothing to compare
			}
			t, err := r.d.readTableFile(f.FileNum, true)
			if errors.Is(err, ErrCorruption) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("reading table %s: %w", manifest.MakeFilename(manifest.KindTable, f.FileNum), err)
			}
			id := t.Properties().TableID
			t.Close()
			if id == f.TableID {
				return nil, nil
			}
			read++
		}
	}
	if read == 0 {
		return nil, nil
	}
	return fmt.Errorf("none of the %d tables it names that read is the table it names (their ids differ): another DB's manifest", read), nil
}

// lostEdits says why manifest t lost edits, if a table it does not name
// shows it did, as Open's stray check finds (unaccountedSeq): it holds a
// sequence number above t's last and below the first of the WALs at or
// above t's log number. The error is the file system's.
func (r *repairer) lostEdits(t *trustedManifest) (why, err error) {
	walFirst := base.SeqNum(0)
	for _, w := range r.wals {
		if w.log < t.logNum {
			continue
		}
		if w.first != 0 && (walFirst == 0 || w.first < walFirst) {
			walFirst = w.first
		}
	}
	for _, num := range r.tables {
		if t.live[num] {
			continue
		}
		name := manifest.MakeFilename(manifest.KindTable, num)
		tr, err := r.d.readTableFile(num, true)
		if errors.Is(err, ErrCorruption) {
			continue // not a table: step 2 judges it
		}
		if err != nil {
			return nil, fmt.Errorf("reading table %s: %w", name, err)
		}
		if p := tr.Properties(); tableStanding(p.DBID, p.LargestSeq, t.dbID, t.formerDBIDs) == another {
			tr.Close()
			continue // another DB's: no edit of t's was lost for it (step 1 sets it aside)
		}
		seq, found, err := unaccountedSeq(tr, t.lastSeq, walFirst)
		tr.Close()
		if errors.Is(err, ErrCorruption) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading table %s: %w", name, err)
		}
		if found {
			return fmt.Errorf("table %s, which it does not name, holds sequence number %d, which neither it (up to %d) nor the WALs account for: it lost edits",
				name, seq, t.lastSeq), nil
		}
	}
	return nil, nil
}

// readLogFile reads the head of WAL file num as log's: whether a record
// verifies in it and the sequence number its first batch begins with.
func (r *repairer) readLogFile(num, log uint64) (logFile, error) {
	w := logFile{name: manifest.MakeFilename(manifest.KindLog, num), num: num, log: log}
	f, err := openListed(r.d.fs, r.path(w.name))
	if err != nil {
		return w, fmt.Errorf("opening %s: %w", w.name, err)
	}
	defer f.Close()
	if w.holds, err = walHoldsRecord(f, w.name, log); err != nil {
		return w, fmt.Errorf("reading %s: %w", w.name, err)
	}
	rd := wal.NewRecyclableReader(fromStart(f), w.name, log)
	for first := true; ; first = false {
		rec, err := rd.Next()
		switch {
		case err == io.EOF || errors.Is(err, ErrCorruption):
			return w, nil
		case err != nil:
			return w, fmt.Errorf("reading %s: %w", w.name, err)
		}
		if first {
			w.headRead = true
			w.id, _ = walIdentity(rec)
		}
		if seq, count, ok := batchHeader(rec); ok && count > 0 {
			w.first = seq
			return w, nil
		}
	}
}

// table decides the fate of table num (steps 1 and 2).
func (r *repairer) table(num uint64) error {
	name := manifest.MakeFilename(manifest.KindTable, num)
	own, err := ownFile(r.d.fs, r.d.dir, name)
	switch {
	case err != nil:
		return fmt.Errorf("reading table %s: %w", name, err)
	case !own && r.trusted != nil && r.trusted.live[num]:
		// The manifest vouches that monban wrote a table here: one without
		// its footer was cut short, or overwritten.
		return r.setAside(name, FateDamaged, fmt.Errorf("no monban table footer (cut short?): %w", ErrCorruption), copyAside)
	case !own:
		return r.setAside(name, FateNotMonban, fmt.Errorf("no monban table footer: %w", ErrCorruption), moveAside)
	case r.trusted != nil && !r.trusted.live[num]:
		live, err := r.holdsLiveTable(num)
		if err != nil {
			return fmt.Errorf("reading table %s: %w", name, err)
		}
		if !live {
			return r.setAside(name, FateObsolete, nil, moveAside)
		}
		// A live table's file under an obsolete table's name (the two
		// swapped): merged like the live table it is.
	}
	tr, err := r.readTable(num, name)
	if err != nil && !errors.Is(err, ErrCorruption) {
		return fmt.Errorf("reading table %s: %w", name, err)
	}
	if err != nil {
		return r.setAside(name, FateDamaged, err, r.tableAside(num))
	}
	r.readers = append(r.readers, tr.t)
	if tr.partly {
		if err := r.setAside(name, FatePartlyMerged, tr.damage, copyAside); err != nil {
			return err
		}
	} else {
		r.merged(name, tr.damage)
	}
	r.lastSeq = max(r.lastSeq, tr.t.Properties().LargestSeq)
	r.report.TablesKept++
	r.report.TableEntries += tr.entries
	if r.trusted == nil {
		r.report.UnknownStanding++
	}
	return nil
}

// tableAside is how a table that cannot be merged goes into lost/: copied,
// the original removed after the commit, if the trusted manifest names it,
// else moved. A crash before the commit must leave that manifest agreeing
// with the directory (step 1): were one of its tables gone, the next
// Repair would distrust it and merge the WALs and tables it proves
// obsolete, bringing back what they deleted.
func (r *repairer) tableAside(num uint64) asideHow {
	if r.trusted != nil && r.trusted.live[num] {
		return copyAside
	}
	return moveAside
}

// walAside is how WAL file num goes into lost/ when it cannot be merged
// whole: copied, the original removed after the commit, while a trusted
// manifest's log number is at or below num, since a crash before the
// commit leaves that manifest in force, and Open needs the WAL its log
// number names and replays every WAL after it. Moved otherwise.
func (r *repairer) walAside(num uint64) asideHow {
	if r.trusted != nil && num >= r.trusted.logNum {
		return copyAside
	}
	return moveAside
}

// holdsLiveTable reports whether table file num, which the trusted
// manifest does not name, holds a table the manifest names for another
// number: its table id is a live table's. A file that does not open as
// a table holds none. The error is the file system's.
func (r *repairer) holdsLiveTable(num uint64) (bool, error) {
	t, err := r.d.readTableFile(num, true)
	if errors.Is(err, ErrCorruption) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer t.Close()
	id := t.Properties().TableID
	return id != 0 && r.trusted.ids[id], nil
}

// readTable opens a table and iterates it whole. Open checks the footer,
// index, filter and properties blocks, the iteration every data block;
// the entry count must then match the properties. A table in the place of
// a live one must hold one of the live tables (two swapped files are both
// kept: a merge does not care about names).
//
// What only damages a part of the table keeps the rest: a table damaged
// in its filters alone, which the merge does not read and the new tables
// write afresh, is read without them; data blocks that fail their checks
// are stepped over (sstable.Reader.NewSalvageIter, as rebuild reads the
// table too), and the table is partly merged. damage says what was
// stepped over. A table none of whose data blocks verifies is damaged
// whole.
func (r *repairer) readTable(num uint64, name string) (tableRead, error) {
	var tr tableRead
	t, err := r.d.readTableFile(num, false)
	if errors.Is(err, ErrCorruption) {
		unfiltered, err2 := r.d.readTableFile(num, true)
		switch {
		case err2 == nil:
			t, tr.damage, err = unfiltered, err, nil
		case !errors.Is(err2, ErrCorruption):
			err = err2 // the disk's: no answer on whether the damage is in the filters alone
		}
	}
	if err != nil {
		return tableRead{}, err
	}
	if id := t.Properties().TableID; r.trusted != nil && len(r.trusted.ids) > 0 && !r.trusted.ids[id] {
		t.Close()
		return tableRead{}, fmt.Errorf("sstable %s holds table id %#x, which %s names for no table: a file from elsewhere: %w",
			name, id, r.trusted.name, ErrCorruption)
	}
	it := t.NewSalvageIter()
	var n uint64
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	lost := it.Lost()
	err = it.Close()
	p := t.Properties()
	switch {
	case err != nil:
	case len(lost) > 0 && n == 0:
		err = fmt.Errorf("sstable %s: none of its %d data blocks verifies: %w", name, p.NumDataBlocks, errors.Join(lost...))
	case len(lost) > 0:
		tr.partly = true
		tr.damage = errors.Join(tr.damage, fmt.Errorf("sstable %s: %d of its %d data blocks damaged, their entries lost (%d of %d kept): %w",
			name, len(lost), p.NumDataBlocks, n, p.NumEntries, errors.Join(lost...)))
	case n != p.NumEntries:
		err = fmt.Errorf("sstable %s: %d entries, properties say %d: %w", name, n, p.NumEntries, ErrCorruption)
	}
	if err != nil {
		t.Close()
		return tableRead{}, err
	}
	tr.t, tr.entries = t, n
	return tr, nil
}

// tableRead is a table Repair read through: entries, the entries it
// yielded; damage, what was wrong in parts it could do without; partly,
// whether entries were lost with them.
type tableRead struct {
	t       *sstable.Reader
	entries uint64
	damage  error
	partly  bool
}

// logFile is a WAL file of dir and the log whose records it holds: its
// own number's, or another present file's where the two were swapped or
// one copied over the other (DB.logIn); read as that log, whether a
// record verifies in it (walHoldsRecord), and the sequence number its
// first batch begins with (0: none reads).
type logFile struct {
	name     string
	num, log uint64
	holds    bool
	first    base.SeqNum
	id       uint64 // the DB id its identity record holds, 0 for none
	headRead bool   // its first record verified: id is what it begins with
}

// logFiles pairs each WAL file with the log it holds, in the order of
// those logs, a file named for its log before a copy of it.
func (r *repairer) logFiles() ([]logFile, error) {
	wals := make([]logFile, len(r.logs))
	for i, num := range r.logs {
		log, err := r.d.logIn(num, r.logs)
		if err != nil {
			return nil, err
		}
		if wals[i], err = r.readLogFile(num, log); err != nil {
			return nil, err
		}
	}
	slices.SortFunc(wals, func(a, b logFile) int {
		switch {
		case a.log != b.log:
			return cmp.Compare(a.log, b.log)
		case a.num == a.log:
			return -1
		case b.num == b.log:
			return 1
		}
		return cmp.Compare(a.num, b.num)
	})
	return wals, nil
}

// replayWALs replays the WALs in the order of the logs they hold (step
// 3). Below a trusted manifest's log number they are obsolete; after the
// first that does not replay to its end, they are set aside unread, so
// that what the rebuilt DB holds is a prefix of the commits. A second
// file holding a log's records is a copy, its own records gone.
func (r *repairer) replayWALs() error {
	dbID := r.trustedDBID()
	var live, gone []logFile
	for _, w := range r.wals {
		switch {
		case r.trusted != nil && w.log < r.trusted.logNum:
			if err := r.setAside(w.name, FateObsolete, nil, r.walAside(w.num)); err != nil {
				return err
			}
		case dbID != 0 && w.headRead && w.id != dbID:
			why := fmt.Errorf("begins with DB id %016x, not %s's %016x: another DB's WAL: %w", w.id, r.trusted.name, dbID, ErrCorruption)
			if err := r.setAside(w.name, FateNotMonban, why, r.walAside(w.num)); err != nil {
				return err
			}
			gone = append(gone, w)
		case len(live) > 0 && live[len(live)-1].log == w.log:
			why := fmt.Errorf("holds the records of log %s, as %s does: copied over, its own records are gone: %w",
				manifest.MakeFilename(manifest.KindLog, w.log), live[len(live)-1].name, ErrCorruption)
			if err := r.setAside(w.name, FateDamaged, why, r.walAside(w.num)); err != nil {
				return err
			}
			gone = append(gone, w)
		default:
			live = append(live, w)
			if w.log > w.num {
				// A newer log's records than its name's: no reuse does
				// that (a reused file holds an older log's), so it was
				// copied or swapped, and its own log may be gone.
				gone = append(gone, w)
			}
		}
	}
	var obsolete uint64 // logs below it are in the tables: none is lost
	if r.trusted != nil {
		obsolete = r.trusted.logNum
	}
	lost := lostLog(live, gone, obsolete)
	if r.trusted != nil && r.trusted.logGone && (lost == 0 || r.trusted.logNum < lost) {
		lost = r.trusted.logNum
	}
	// A rotation seals a WAL before the next one takes a commit: one that
	// a WAL holding records follows must end at its seal (checkWALEnds).
	idleAfter := make([]bool, len(live)) // no later WAL holds a record
	for i, idle := len(live)-1, true; i >= 0; i-- {
		idleAfter[i] = idle
		idle = idle && !live[i].holds
	}
	var after error      // why the WALs from here on are set aside unread: a prefix of the commits
	var last base.SeqNum // the last sequence number replayed from a WAL
	for i, w := range live {
		if lost != 0 && w.log >= lost && after == nil {
			after = fmt.Errorf("after log %s, whose records are gone", manifest.MakeFilename(manifest.KindLog, lost))
		}
		if after == nil && r.trusted != nil && last != 0 && w.first > last+1 {
			// Commits are numbered in the order they reach the WALs, one
			// after another across rotations: those between went into a
			// WAL that is gone. Only among the live WALs a trusted
			// manifest vouches for: without one, obsolete WALs kept for
			// reuse are replayed too, and what lies between them and the
			// live ones is in the tables.
			after = fmt.Errorf("after sequence number %d: %d to %d are in no WAL, the one that held them is gone", last, last+1, w.first-1)
		}
		if after != nil {
			empty, err := r.walEmpty(w)
			if err != nil {
				return err
			}
			if empty { // nothing to keep, or to replay out of order
				r.merged(w.name, nil)
				continue
			}
			if err := r.setAside(w.name, FateAfterDamage, after, r.walAside(w.num)); err != nil {
				return err
			}
			continue
		}
		whole, walLast, err := r.replayWAL(w, idleAfter[i])
		if err != nil {
			return err
		}
		last = max(last, walLast)
		if !whole {
			after = fmt.Errorf("after %s, which does not replay to its end", w.name)
		}
	}
	return nil
}

// trustedDBID is the trusted manifest's DB id, whose DB wrote the WALs at
// or above its log number; 0 without one, or for a manifest without one.
func (r *repairer) trustedDBID() uint64 {
	if r.trusted == nil {
		return 0
	}
	return r.trusted.dbID
}

// lostLog returns the first log whose records are gone, 0 for none: the
// log a file of gone (set aside, or holding a newer log's records) was
// named for, at or above obsolete (the trusted manifest's log number,
// below which logs are in the tables), which no file of live holds. The
// DB then holds a prefix of the commits only if no WAL of that log or a
// later one is replayed. (A reused file holding an older log's records,
// its own log's gone, is no loss: a crash stopped that log before its
// first record.)
func lostLog(live, gone []logFile, obsolete uint64) uint64 {
	var lost uint64
	for _, g := range gone {
		held := slices.ContainsFunc(live, func(w logFile) bool { return w.log == g.num })
		if !held && g.num >= obsolete && (lost == 0 || g.num < lost) {
			lost = g.num
		}
	}
	return lost
}

// walEmpty reports whether w's file holds no byte.
func (r *repairer) walEmpty(w logFile) (bool, error) {
	f, err := openListed(r.d.fs, r.path(w.name))
	if err != nil {
		return false, err
	}
	defer f.Close()
	size, err := f.Size()
	return size == 0, err
}

// replayWAL applies WAL name's batches to a memtable of its own, each
// whole or not at all, as it was committed, and reports whether it read
// to its end (no damage, and a tail that could only be a crash's) and the
// last sequence number it replayed. Only
// the last WAL that took commits (last) may end torn; one before it was
// sealed before the next took a commit (a legacy log, written before
// seals, synced: it ends at its last record). One that did not read to
// its end is set aside: moved, if none of it was merged, copied
// otherwise, so that a crash before the commit leaves it for the next
// Repair.
func (r *repairer) replayWAL(w logFile, last bool) (whole bool, walLast base.SeqNum, err error) {
	name, num := w.name, w.log
	f, err := openListed(r.d.fs, r.path(name))
	if err != nil {
		return false, 0, fmt.Errorf("opening %s: %w", name, err)
	}
	defer f.Close()
	if err := syncReplayed(f, name); err != nil {
		return false, 0, err
	}
	rd := wal.NewRecyclableReader(f, name, num)
	mem := memtable.New(memtable.Options{})
	r.mems = append(r.mems, mem)
	r.report.WALsReplayed++
	var batch []batchEntry
	batches := 0
	var damage error
	identified := false // its identity record verified: monban wrote it
	succeeded := false  // its successor record verified: a newer WAL took over
	for first := true; ; first = false {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err == nil {
			// replayWALs set aside a WAL that begins with another DB's
			// identity: what is left is one past the first record, damage.
			err = checkWALIdentity(name, rec, first, r.trustedDBID())
		}
		if _, ok := walIdentity(rec); ok && err == nil {
			identified = true
			continue
		}
		if err == nil && succeeded {
			err = fmt.Errorf("a record after the one naming the WAL that took over: %w", ErrCorruption)
		}
		if _, ok := walSuccessor(rec); ok && err == nil {
			succeeded = true // its successor is the next log: replayWALs stops at a missing one
			continue
		}
		batch = batch[:0]
		if err == nil {
			_, err = decodeBatch(rec, func(e batchEntry) error {
				batch = append(batch, e)
				return nil
			})
		}
		if err == nil {
			err = checkBatchSeqs(batch, walLast)
		}
		if err != nil && !errors.Is(err, ErrCorruption) {
			return false, 0, fmt.Errorf("reading %s: %w", name, err) // the disk's, not damage
		}
		if err != nil {
			damage = fmt.Errorf("after %d batches: %w", batches, err)
			break
		}
		for _, e := range batch {
			if err := applyEntry(mem, e); err != nil {
				return false, 0, fmt.Errorf("replaying %s: %w", name, err)
			}
		}
		if len(batch) > 0 {
			walLast = batch[len(batch)-1].Seq
			r.lastSeq = max(r.lastSeq, walLast)
		}
		batches++
		r.report.WALBatches++
	}
	r.report.WALTornBytes += rd.DroppedBytes()
	switch {
	case damage != nil:
	case last && !rd.EndsCleanly() && rd.DroppedBytes() > 0:
		// A crash's tail, or, in a recycled file, the older log's bytes,
		// which a crash left unsealed after the last record (Open reads
		// them so too): they are, where the older log's fragment starts
		// where the records end (both logs began with an identity record,
		// and the crash came before the first commit), or starts the block
		// after them, or the file (no record of its own) (wal.OlderLogAt).
		// Else they are kept aside as damage.
		_, older, err := wal.OlderLogAt(f, rd.RecordsEnd(), num)
		if err == nil && !older {
			_, older, err = wal.OlderLogAt(f, wal.NextBlock(rd.RecordsEnd()), num)
		}
		if err != nil {
			return false, 0, fmt.Errorf("reading %s: %w", name, err)
		}
		if !older {
			damage = fmt.Errorf("%d bytes after its last record (%d batches) do not hold one: %w", rd.DroppedBytes(), batches, ErrCorruption)
		}
	case !last && !rd.Sealed() && !(rd.Legacy() && rd.EndsCleanly()):
		damage = fmt.Errorf("ends without its seal after %d batches (cut, emptied or zeroed), though a newer WAL took commits: %w", batches, ErrCorruption)
	}
	switch {
	case damage == nil:
		r.merged(name, nil)
		return true, walLast, nil
	case batches > 0:
		return false, walLast, r.setAside(name, FatePartlyMerged, damage, copyAside)
	case rd.DroppedBytes() > 0 && !identified && !w.holds:
		return false, walLast, r.setAside(name, FateNotMonban, fmt.Errorf("no record verifies: another program's log, or torn whole: %w", damage), r.walAside(w.num))
	}
	return false, walLast, r.setAside(name, FateDamaged, damage, r.walAside(w.num))
}

// walHoldsRecord reports whether a record of monban's framing verifies
// anywhere in the WAL f: the first one read, or an intact one after
// damage (which the reader reports as corruption rather than a torn tail).
func walHoldsRecord(f vfs.File, name string, num uint64) (bool, error) {
	_, err := wal.NewRecyclableReader(fromStart(f), name, num).Next()
	var corrupt *wal.CorruptionError
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, ErrCorruption) {
		return false, err // the disk's: no answer
	}
	return err == nil || errors.As(err, &corrupt), nil
}

// checkBatchSeqs rejects a batch the memtable would only take in part: a
// WAL's sequence numbers rise from record to record, so a batch at or below
// the last one seen, or past the largest sequence number, is damage — and
// checked before any entry is added, the batch applies whole or not at all.
func checkBatchSeqs(batch []batchEntry, walLast base.SeqNum) error {
	if len(batch) == 0 {
		return nil
	}
	if first, last := batch[0].Seq, batch[len(batch)-1].Seq; first <= walLast || last > base.MaxSeqNum {
		return fmt.Errorf("batch at sequence numbers %d..%d after %d: %w", first, last, walLast, ErrCorruption)
	}
	return nil
}

// merged records that every record of the table or WAL name is in the
// merge: it is removed after the commit. damage, if not nil, is what was
// wrong in a part of it the merge does not need (a table's filters).
func (r *repairer) merged(name string, damage error) {
	r.obsolete = append(r.obsolete, name)
	r.report.Files = append(r.report.Files, RepairedFile{Name: name, Fate: FateMerged, Err: damage})
}

// asideHow is how setAside puts a file into lost/.
type asideHow uint8

const (
	moveAside asideHow = iota // moved at once: the old state cannot need it
	copyAside                 // copied, the original removed after the commit
	copyOnly                  // copied, the original replaced by the commit (CURRENT)
)

// setAside puts file name into lost/, under a name no file there has
// (name, or name.1, name.2, ...): moved, or copied (hard-linked where the
// file system can) where the old state needs the original until the
// commit. The move or copy is durable at once: after the commit the file
// would be a stray that Open deletes.
func (r *repairer) setAside(name string, fate Fate, why error, how asideHow) error {
	lost := name
	for i := 1; r.lostNames[lost]; i++ {
		lost = name + "." + strconv.Itoa(i)
	}
	if err := r.d.fs.MkdirAll(r.path(lostDir)); err != nil {
		return err
	}
	if err := r.d.fs.SyncDir(r.d.dir); err != nil {
		return err
	}
	src, dst := r.path(name), r.path(lostDir, lost)
	switch how {
	case moveAside:
		if err := r.d.fs.Rename(src, dst); err != nil {
			return err
		}
	case copyAside, copyOnly:
		if err := r.d.linkOrCopy(src, dst); err != nil {
			return err
		}
		if how == copyAside {
			r.obsolete = append(r.obsolete, name)
		}
	}
	if err := r.d.fs.SyncDir(r.path(lostDir)); err != nil {
		return err
	}
	if err := r.d.fs.SyncDir(r.d.dir); err != nil {
		return err
	}
	r.lostNames[lost] = true
	f := RepairedFile{Name: name, Fate: fate, Lost: lostDir + "/" + lost, Err: why}
	r.report.Files = append(r.report.Files, f)
	r.report.SetAside = append(r.report.SetAside, f)
	return nil
}

// setAsideMeta copies CURRENT and every manifest into lost/ (their
// originals removed after the commit, CURRENT replaced by it) and moves
// CURRENT.tmp there: the new manifest supersedes them, and none is
// deleted unseen — one may be the only record of a damaged DB's shape.
// It moves there too the tables a flush or compaction was writing when a
// crash cut it short (manifest.KindTableTemp), unread: no manifest named
// one, and what it holds is in the files it was being written from; and
// the tables, WALs and manifests listed that do not open (scan).
func (r *repairer) setAsideMeta(names []string) error {
	for _, name := range names {
		kind, _, ok := manifest.ParseFilename(name)
		switch {
		case !ok:
		case r.unopened[name] != nil:
			if err := r.setAside(name, FateNotMonban, r.unopened[name], moveAside); err != nil {
				return err
			}
		case r.dirs[name] && (kind == manifest.KindCurrent || kind == manifest.KindCurrentTemp):
			// Not the DB's, but in the way of the commit, which writes
			// these names.
			if err := r.setAside(name, FateNotMonban, errors.New("a directory"), moveAside); err != nil {
				return err
			}
		case r.dirs[name]:
		case kind == manifest.KindCurrent:
			if err := r.setAside(name, FateSuperseded, nil, copyOnly); err != nil {
				return err
			}
		case kind == manifest.KindCurrentTemp:
			if err := r.setAside(name, FateSuperseded, nil, moveAside); err != nil {
				return err
			}
		case kind == manifest.KindTableTemp:
			if err := r.setAside(name, FateObsolete, nil, moveAside); err != nil {
				return err
			}
		case kind == manifest.KindManifest:
			fate, why := FateSuperseded, r.manifestErrs[name]
			own, err := manifest.HasFormat(r.d.fs, r.path(name))
			switch {
			case err != nil:
				return fmt.Errorf("reading %s: %w", name, err)
			case !own:
				fate, why = FateNotMonban, fmt.Errorf("no monban format record: %w", ErrCorruption)
			case why != nil:
				fate = FateDamaged
			}
			if err := r.setAside(name, fate, why, copyAside); err != nil {
				return err
			}
		}
	}
	return nil
}
