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
	"github.com/monbandb/monban/wal"
)

// lostDir holds what Repair could not read: set aside, never deleted, for
// a human to inspect.
const lostDir = "lost"

// repairStaging is where Repair builds its manifest. manifest.Create needs a
// directory without CURRENT, and building beside the old CURRENT means a
// crash before the commit leaves the directory as it was.
const repairStaging = "REPAIR.tmp"

// Repair rebuilds the DB in dir from the tables and WALs it finds there,
// for a directory Open refuses: CURRENT missing, the manifest corrupt, a
// table damaged. It takes the directory lock (ErrLocked while a DB has it
// open) and needs no valid CURRENT or manifest.
//
//  1. Every table is opened and read through to the end, which checks
//     every block's checksum. One that fails is moved into dir/lost/. If
//     the manifest CURRENT names still reads, a file in the place of a
//     table it names must hold one of the tables it names (two swapped
//     files are both kept: a merge does not care about names); one that
//     holds another table — restored from an older incarnation of the DB,
//     say — is set aside rather than merged, where its old values could
//     win.
//  2. Every WAL is replayed in number order, a batch at a time. A torn
//     tail is dropped; a WAL damaged mid-file keeps its batches before the
//     damage and is moved into lost/.
//  3. Everything that survived is merged into new tables of the last
//     level, keeping only the newest version of each key (no snapshot
//     survives a repair) and no tombstone (nothing lies below them).
//  4. A new manifest naming only those tables, with the highest sequence
//     number seen and a next file number above every file present, is
//     made durable and CURRENT switched to it: the commit point.
//  5. Only then are the merged tables and WALs, old manifests and
//     CURRENT.tmp removed.
//
// Why merge rather than keep the tables where they are: without the
// manifest a table's level is unknown, and the levels are what made
// overlapping sequence ranges safe. A table that was in L6 with k@100 and
// LargestSeq 1000 and one from L5 with k@800 cannot both go to L0 in
// LargestSeq order (a read would stop at k@100), and no placement that
// reads one table before another is right for every such pair. The merge
// compares sequence numbers entry by entry, so it is right for any set of
// tables; it costs a rewrite of the whole DB, which a repair can afford.
//
// Files are set aside before the commit because after it they would be
// strays, which Open deletes. A crash before the commit leaves the old
// CURRENT (if any) in force, and the new tables strays; rerunning Repair
// is always safe, as duplicated entries merge into one.
//
// Caveat: what the lost files held is gone, including tombstones: a key
// deleted by a tombstone in a lost table can reappear with an older value
// from a table that survived. So can a key whose tombstone a compaction
// had dropped when a crash left that compaction's inputs behind. Every
// table found is open at once for the merge (MaxOpenFiles does not apply),
// and the WALs' contents are held in memtables until the merge is done.
func Repair(dir string, opts *Options) (*RepairReport, error) {
	o := opts.withDefaults()
	if err := checkDir(dir); err != nil {
		return nil, err
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	lock, err := lockDir(o.FS, dir)
	if err != nil {
		return nil, err
	}
	defer lock.Close()
	r := &repairer{d: &DB{dir: dir, opts: o, fs: o.FS}, report: &RepairReport{Dir: dir}}
	defer r.closeSources()
	if err := r.run(); err != nil {
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
	if err != nil {
		return nil, fmt.Errorf("monban: locking %s: %w", dir, err)
	}
	return lock, nil
}

// repairer holds one Repair's state. d is a DB with only what writing
// tables needs (dir, opts, fs and, from step 3, vs), so the rebuild writes
// through the same writeTables as a compaction.
type repairer struct {
	d      *DB
	report *RepairReport

	tables, logs []uint64 // found in dir, ascending
	oldMeta      []string // old manifests and CURRENT.tmp
	maxNum       uint64   // highest file number in dir and lost/

	liveIDs  map[uint64]bool      // table ids a readable manifest names, by file number too
	liveNums map[uint64]bool      // file numbers it names
	readers  []*sstable.Reader    // verified tables, open for the merge
	mems     []*memtable.Memtable // one per replayed WAL
	obsolete []string             // merged inputs: removed after the commit
	lastSeq  base.SeqNum
}

func (r *repairer) run() error {
	if err := r.scan(); err != nil {
		return err
	}
	r.liveNums, r.liveIDs = r.manifestTables()
	for _, num := range r.tables {
		if err := r.verifyTable(num); err != nil {
			return err
		}
	}
	for _, num := range r.logs {
		if err := r.replayWAL(num); err != nil {
			return err
		}
	}
	if err := r.rebuild(); err != nil {
		return err
	}
	r.removeObsolete()
	return nil
}

// scan lists the files of dir, and notes the numbers in lost/ so that no
// new file takes a name already set aside.
func (r *repairer) scan() error {
	names, err := r.d.fs.List(r.d.dir)
	if err != nil {
		return err
	}
	lost, err := r.d.fs.List(r.path(lostDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, name := range lost {
		if _, num, ok := manifest.ParseFilename(name); ok {
			r.maxNum = max(r.maxNum, num)
		}
	}
	for _, name := range names {
		kind, num, ok := manifest.ParseFilename(name)
		if !ok {
			continue
		}
		r.maxNum = max(r.maxNum, num)
		switch kind {
		case manifest.KindTable:
			r.tables = append(r.tables, num)
		case manifest.KindLog:
			r.logs = append(r.logs, num)
		case manifest.KindManifest, manifest.KindCurrentTemp:
			r.oldMeta = append(r.oldMeta, name)
		}
	}
	slices.Sort(r.tables)
	slices.Sort(r.logs)
	return nil
}

// manifestTables returns the file numbers and the table ids of the live
// tables of the manifest CURRENT names, or nils if it does not read: what a
// damaged DB's manifest can still vouch for is which tables belong.
func (r *repairer) manifestTables() (nums, ids map[uint64]bool) {
	vs, err := manifest.Recover(r.d.fs, r.d.dir) // writes nothing
	if err != nil {
		return nil, nil
	}
	defer vs.Close()
	v := vs.Current()
	defer v.Unref()
	nums, ids = map[uint64]bool{}, map[uint64]bool{}
	for _, files := range v.Levels {
		for _, f := range files {
			nums[f.FileNum] = true
			if f.TableID != 0 {
				ids[f.TableID] = true
			}
		}
	}
	return nums, ids
}

// verifyTable reads table num from first entry to last; a table that
// fails is set aside, one that passes stays open for the merge.
func (r *repairer) verifyTable(num uint64) error {
	name := manifest.MakeFilename(manifest.KindTable, num)
	t, err := r.readTable(num, name)
	if err != nil {
		return r.setAside(name, err)
	}
	r.readers = append(r.readers, t)
	r.obsolete = append(r.obsolete, name)
	r.lastSeq = max(r.lastSeq, t.Properties().LargestSeq)
	r.report.TablesKept++
	r.report.TableEntries += t.Properties().NumEntries
	return nil
}

// readTable opens a table and iterates it whole. Open checks the footer,
// index, filter and properties blocks, the iteration every data block;
// the entry count must then match the properties.
func (r *repairer) readTable(num uint64, name string) (*sstable.Reader, error) {
	f, err := r.d.fs.Open(r.path(name))
	if err != nil {
		return nil, err
	}
	t, err := sstable.Open(f, sstable.ReaderOptions{FileNum: num, Name: name})
	if err != nil {
		return nil, err
	}
	if id := t.Properties().TableID; r.liveNums[num] && len(r.liveIDs) > 0 && !r.liveIDs[id] {
		t.Close()
		return nil, fmt.Errorf("sstable %s holds table id %#x, which the manifest names for no table: a file from elsewhere: %w",
			name, id, ErrCorruption)
	}
	it := t.NewIter(nil, nil)
	var n uint64
	for ok := it.First(); ok; ok = it.Next() {
		n++
	}
	err = it.Close()
	if want := t.Properties().NumEntries; err == nil && n != want {
		err = fmt.Errorf("sstable %s: %d entries, properties say %d: %w", name, n, want, ErrCorruption)
	}
	if err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// replayWAL applies WAL num's batches to a memtable of its own. Unlike
// Open, a torn tail is accepted in any WAL, not only the newest: a repair
// keeps whatever is readable. A batch is applied whole or not at all, as
// it was committed.
func (r *repairer) replayWAL(num uint64) error {
	name := manifest.MakeFilename(manifest.KindLog, num)
	f, err := r.d.fs.Open(r.path(name))
	if err != nil {
		return r.setAside(name, err)
	}
	defer f.Close()
	rd := wal.NewReader(f, name)
	mem := memtable.New(memtable.Options{})
	r.mems = append(r.mems, mem)
	r.report.WALsReplayed++
	var batch []batchEntry
	var walLast base.SeqNum
	for n := 0; ; n++ {
		rec, err := rd.Next()
		if err == io.EOF {
			break
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
		if err != nil {
			return r.setAside(name, fmt.Errorf("after %d batches: %w", n, err))
		}
		for _, e := range batch {
			if err := mem.Add(e.Seq, e.Kind, e.Key, e.Value); err != nil {
				return fmt.Errorf("monban: repair: replaying %s: %w", name, err)
			}
		}
		if len(batch) > 0 {
			walLast = batch[len(batch)-1].Seq
			r.lastSeq = max(r.lastSeq, walLast)
		}
		r.report.WALBatches++
	}
	r.report.WALTornBytes += rd.DroppedBytes()
	r.obsolete = append(r.obsolete, name)
	return nil
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

// setAside moves a file Repair cannot use into lost/ and reports why. The
// move is made durable at once: after the commit the file would be a
// stray that Open deletes.
func (r *repairer) setAside(name string, why error) error {
	if err := r.d.fs.MkdirAll(r.path(lostDir)); err != nil {
		return err
	}
	if err := r.d.fs.Rename(r.path(name), r.path(lostDir, name)); err != nil {
		return err
	}
	if err := r.d.fs.SyncDir(r.path(lostDir)); err != nil {
		return err
	}
	if err := r.d.fs.SyncDir(r.d.dir); err != nil {
		return err
	}
	r.report.SetAside = append(r.report.SetAside, SetAsideFile{Name: name, Err: why})
	return nil
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
