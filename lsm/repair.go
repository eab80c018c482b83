package lsm

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/monbandb/monban/compaction"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/internal/merge"
	"github.com/monbandb/monban/internal/vfs"
	"github.com/monbandb/monban/memtable"
	"github.com/monbandb/monban/sstable"
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
// open) and never reads CURRENT or a manifest.
//
//  1. Every table is opened and read through to the end, which checks
//     every block's checksum. One that fails is moved into dir/lost/.
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
// had dropped when a crash left that compaction's inputs behind.
func Repair(dir string, opts *Options) (*RepairReport, error) {
	o := opts.withDefaults()
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
	manifests    []string
	maxNum       uint64 // highest file number in dir and lost/

	readers  []*sstable.Reader    // verified tables, open for the merge
	mems     []*memtable.Memtable // one per replayed WAL
	obsolete []string             // merged inputs: removed after the commit
	lastSeq  base.SeqNum
}

func (r *repairer) run() error {
	if err := r.scan(); err != nil {
		return err
	}
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
			r.manifests = append(r.manifests, name)
		}
	}
	slices.Sort(r.tables)
	slices.Sort(r.logs)
	return nil
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
			err = applyBatch(mem, batch)
		}
		if err != nil {
			return r.setAside(name, fmt.Errorf("after %d batches: %w", n, err))
		}
		for _, e := range batch {
			r.lastSeq = max(r.lastSeq, e.Seq)
		}
		r.report.WALBatches++
	}
	r.report.WALTornBytes += rd.DroppedBytes()
	r.obsolete = append(r.obsolete, name)
	return nil
}

// applyBatch adds a decoded batch to mem, or nothing of it: an entry the
// memtable rejects (a sequence number out of range or seen before) takes
// the batch's earlier entries back out.
func applyBatch(mem *memtable.Memtable, batch []batchEntry) error {
	for i, e := range batch {
		if err := mem.Add(e.Seq, e.Kind, e.Key, e.Value); err != nil {
			for _, p := range batch[:i] {
				mem.Remove(base.MakeInternalKey(p.Key, p.Seq, p.Kind))
			}
			return fmt.Errorf("batch entry %d: %w: %w", i, ErrCorruption, err)
		}
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

// rebuild merges the verified tables and the replayed WALs into new
// last-level tables (steps 3 and 4 of Repair) and commits them.
func (r *repairer) rebuild() error {
	if err := r.removeStaging(); err != nil {
		return err
	}
	vs, err := manifest.Create(r.d.fs, r.path(repairStaging))
	if err != nil {
		return err
	}
	defer vs.Close() // on failure; closing twice is harmless
	vs.MarkFileNumUsed(r.maxNum)
	r.d.vs = vs

	var inputs []base.InternalIterator
	for _, t := range r.readers {
		inputs = append(inputs, t.NewIter(nil, nil))
	}
	for _, m := range r.mems {
		inputs = append(inputs, m.NewIter())
	}
	// No snapshots: one version per key survives. Nothing lies below the
	// last level, so every tombstone left on top goes.
	bottom := func([]byte) (bool, compaction.DropReason) { return true, compaction.DropBottom }
	it := compaction.NewIter(merge.NewIter(inputs...), nil, bottom)
	outputs, err := r.d.writeTables(it, compaction.NewSplitter(r.d.opts.TargetFileSize, nil))
	if cerr := it.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	drops := it.Drops()
	r.report.Shadowed, r.report.TombstonesDropped = drops[compaction.DropShadowed], drops[compaction.DropBottom]

	// LogNum is a fresh number, above every WAL merged: should a crash
	// follow the commit, Open must not replay them a second time.
	edit := &manifest.VersionEdit{LogNum: vs.NextFileNum(), LastSeq: r.lastSeq}
	for _, meta := range outputs {
		edit.Added = append(edit.Added, manifest.NewFile{Level: NumLevels - 1, Meta: meta})
		r.report.Tables = append(r.report.Tables, meta.FileNum)
		r.report.KeysRecovered += meta.NumEntries
	}
	// A rollover writes the edit as the first record of a new manifest
	// numbered above every file, where the staging manifest (number 1)
	// could name the same number as an old one.
	vs.SetMaxManifestSize(0)
	if err := vs.LogAndApply(edit); err != nil {
		return err
	}
	if err := vs.Close(); err != nil {
		return err
	}
	r.report.LastSeq = vs.LastSeq()
	r.report.Manifest = manifest.MakeFilename(manifest.KindManifest, vs.ManifestFileNum())
	return r.commit(r.report.Manifest)
}

// commit moves the staged manifest into dir, then renames the staged
// CURRENT over dir's, the commit point. Both were synced by the manifest
// package; each rename is made durable before the next step.
func (r *repairer) commit(manifestName string) error {
	staging := r.path(repairStaging)
	current := manifest.MakeFilename(manifest.KindCurrent, 0)
	for _, name := range []string{manifestName, current} {
		if err := r.d.fs.Rename(filepath.Join(staging, name), r.path(name)); err != nil {
			return err
		}
		if err := r.d.fs.SyncDir(r.d.dir); err != nil {
			return err
		}
	}
	return nil
}

// removeStaging removes the staging directory and whatever a crashed
// Repair left in it.
func (r *repairer) removeStaging() error {
	staging := r.path(repairStaging)
	names, err := r.d.fs.List(staging)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	for _, name := range names {
		if err := r.d.fs.Remove(filepath.Join(staging, name)); err != nil {
			return err
		}
	}
	return r.d.fs.Remove(staging)
}

// removeObsolete removes, after the commit, the inputs the new tables hold
// and the old manifests (step 5 of Repair). A failure leaves a stray that
// Open removes, so it is logged, not returned.
func (r *repairer) removeObsolete() {
	for _, name := range append(r.obsolete, r.manifests...) {
		if err := r.d.fs.Remove(r.path(name)); err != nil {
			r.d.opts.Logger("monban: repair: removing %s: %v", name, err)
			continue
		}
		r.report.Removed = append(r.report.Removed, name)
	}
	if err := r.removeStaging(); err != nil {
		r.d.opts.Logger("monban: repair: removing %s: %v", repairStaging, err)
	}
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

// RepairReport says what Repair kept, set aside and rebuilt.
type RepairReport struct {
	Dir string
	// TablesKept counts the tables that verified and were merged,
	// TableEntries the entries they held.
	TablesKept   int
	TableEntries uint64
	// SetAside lists the tables and WALs moved into lost/, with why.
	SetAside []SetAsideFile
	// WALsReplayed counts the WALs read, a damaged one included (its
	// batches before the damage were kept); WALBatches the batches applied;
	// WALTornBytes the torn tails dropped.
	WALsReplayed int
	WALBatches   uint64
	WALTornBytes int64
	// Shadowed counts the versions dropped for a newer one of their key
	// (duplicates of one entry included), TombstonesDropped the tombstones
	// that had nothing left to hide.
	Shadowed, TombstonesDropped uint64
	// Tables are the numbers of the rebuilt tables, all in the last level;
	// KeysRecovered the keys they hold, one version each.
	Tables        []uint64
	KeysRecovered uint64
	// LastSeq is the highest sequence number seen; Manifest the new
	// manifest CURRENT names.
	LastSeq  base.SeqNum
	Manifest string
	// Removed are the files whose content the new tables hold, and the old
	// manifests, removed after the commit.
	Removed []string
}

// SetAsideFile is a file Repair moved into lost/ and the error that made
// it unusable.
type SetAsideFile struct {
	Name string
	Err  error
}

func (rep *RepairReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "repair of %s\n", rep.Dir)
	fmt.Fprintf(&b, "  tables kept:   %d (%d entries)\n", rep.TablesKept, rep.TableEntries)
	fmt.Fprintf(&b, "  WALs replayed: %d (%d batches, %d torn bytes dropped)\n", rep.WALsReplayed, rep.WALBatches, rep.WALTornBytes)
	fmt.Fprintf(&b, "  set aside in %s/: %d\n", lostDir, len(rep.SetAside))
	for _, f := range rep.SetAside {
		fmt.Fprintf(&b, "    %s: %v\n", f.Name, f.Err)
	}
	fmt.Fprintf(&b, "  rebuilt:       %d tables in L%d, %d keys (%d shadowed versions, %d tombstones dropped)\n",
		len(rep.Tables), NumLevels-1, rep.KeysRecovered, rep.Shadowed, rep.TombstonesDropped)
	fmt.Fprintf(&b, "  manifest:      %s, last sequence %d\n", rep.Manifest, rep.LastSeq)
	fmt.Fprintf(&b, "  removed:       %d files (%s)\n", len(rep.Removed), strings.Join(rep.Removed, " "))
	return b.String()
}
