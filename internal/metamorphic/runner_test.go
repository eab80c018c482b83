package metamorphic

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/lsm"
	"github.com/monbandb/monban/vfs"
)

// runner applies operations to one DB on its own in-memory file system.
type runner struct {
	opts lsm.Options
	db   *lsm.DB
	// dir is the DB's directory: "/db", then the checkpoint each Reopen
	// via a checkpoint moved it to; checkpoints counts the checkpoints
	// taken, which name their directories.
	dir         string
	checkpoints int
	iters       map[int]cursor
	snaps       map[int]*lsm.Snapshot
	// splits and opens: the DB's Split at each Open is
	// splits[opens%len(splits)], if splits is not empty.
	splits []*filter.Split
	opens  int
}

func newRunner(cfg config) (*runner, error) {
	opts := cfg.opts
	opts.FS = vfs.NewMem()
	if cfg.wrapFS != nil {
		opts.FS = cfg.wrapFS(opts.FS)
	}
	r := &runner{opts: opts, dir: "/db", iters: map[int]cursor{}, snaps: map[int]*lsm.Snapshot{}, splits: cfg.splits}
	r.nextSplit()
	var err error
	r.db, err = lsm.Open(r.dir, &r.opts)
	return r, err
}

// errNoDB is the outcome of every operation after a failed reopen.
var errNoDB = errors.New("no DB: reopen failed")

// writeOptions are a write op's: lsm.Sync if it says so, else the DB's
// default (nil).
func writeOptions(o op) *lsm.WriteOptions {
	if o.sync {
		return lsm.Sync
	}
	return nil
}

// apply runs o and returns its outcome in the model's format.
func (r *runner) apply(o op) string {
	if r.db == nil {
		return errOutcome(errNoDB)
	}
	switch o.kind {
	case opPut:
		return result(r.db.Put(o.key, o.value, writeOptions(o)))
	case opDelete:
		return result(r.db.Delete(o.key, writeOptions(o)))
	case opDeleteRange:
		return result(r.db.DeleteRange(o.lo, o.hi, writeOptions(o)))
	case opBatch:
		var b lsm.Batch
		for _, w := range o.batch {
			switch {
			case w.end != nil:
				b.DeleteRange(w.key, w.end)
			case w.del:
				b.Delete(w.key)
			default:
				b.Put(w.key, w.value)
			}
		}
		return result(r.db.Write(&b, writeOptions(o)))
	case opGet:
		var v []byte
		var err error
		if o.snap >= 0 {
			v, err = r.snaps[o.snap].Get(o.key)
		} else {
			v, err = r.db.Get(o.key)
		}
		return getOutcome(v, err)
	case opMultiGet:
		var values [][]byte
		var errs []error
		if o.snap >= 0 {
			values, errs = r.snaps[o.snap].MultiGet(o.keys)
		} else {
			values, errs = r.db.MultiGet(o.keys)
		}
		outcomes := make([]string, len(o.keys))
		for i := range o.keys {
			outcomes[i] = getOutcome(values[i], errs[i])
		}
		return multiOutcome(outcomes)
	case opNewIter:
		it, err := r.newIter(o)
		r.iters[o.id] = it
		return result(err)
	case opIterFirst, opIterLast, opIterSeekGE, opIterSeekLT, opIterNext, opIterPrev:
		return moveOutcome(r.iters[o.id], o)
	case opIterClose:
		it := r.iters[o.id]
		delete(r.iters, o.id)
		return result(it.Close())
	case opScan:
		it, err := r.newIter(o)
		if err != nil {
			it.Close()
			return errOutcome(err)
		}
		return scanOutcome(it, o.reverse)
	case opNewSnapshot:
		r.snaps[o.id] = r.db.NewSnapshot()
	case opCloseSnapshot:
		s := r.snaps[o.id]
		delete(r.snaps, o.id)
		return result(s.Close())
	case opFlush:
		return result(r.db.Flush())
	case opCompact:
		return result(r.db.Compact())
	case opCompactRange:
		return result(r.db.CompactRange(o.lo, o.hi))
	case opReopen:
		return result(r.reopen(o.via))
	case opCheckpoint:
		return r.checkpointScan()
	}
	return outcomeOK
}

// reopen closes the DB, its iterators and snapshots, and opens it again
// the way via says.
func (r *runner) reopen(via reopenVia) error {
	var checkpoint string
	if via == viaCheckpoint {
		checkpoint = r.newCheckpointDir()
		if err := r.db.Checkpoint(checkpoint); err != nil {
			return fmt.Errorf("Checkpoint: %w", err)
		}
	}
	if err := r.close(); err != nil {
		return err
	}
	switch via {
	case viaRepair:
		if err := r.repair(); err != nil {
			return err
		}
	case viaCheckpoint:
		if err := removeDir(r.opts.FS, r.dir); err != nil {
			return err
		}
		r.dir = checkpoint
	}
	r.nextSplit()
	var err error
	r.db, err = lsm.Open(r.dir, &r.opts)
	return err
}

// checkpointScan writes a checkpoint of the DB, opens it read-only
// beside the DB and returns a full scan of it, then removes it.
func (r *runner) checkpointScan() string {
	checkpoint := r.newCheckpointDir()
	if err := r.db.Checkpoint(checkpoint); err != nil {
		return errOutcome(fmt.Errorf("Checkpoint: %w", err))
	}
	opts := r.opts
	opts.ReadOnly = true
	c, err := lsm.Open(checkpoint, &opts)
	if err != nil {
		return errOutcome(fmt.Errorf("Open of the checkpoint: %w", err))
	}
	out := scanOutcome(c.NewIter(nil), false)
	if err := errors.Join(c.Close(), removeDir(r.opts.FS, checkpoint)); err != nil {
		out += errOutcome(err)
	}
	return out
}

func (r *runner) newCheckpointDir() string {
	r.checkpoints++
	return fmt.Sprintf("/checkpoint%d", r.checkpoints)
}

// removeDir removes dir and everything in it (Repair's lost/ is a
// directory: one Remove fails on it, and its contents go first).
func removeDir(fsys vfs.FS, dir string) error {
	names, err := fsys.List(dir)
	if err != nil {
		return err
	}
	for _, name := range names {
		path := filepath.Join(dir, name)
		if err := fsys.Remove(path); err != nil {
			if errSub := removeDir(fsys, path); errSub != nil {
				return errors.Join(err, errSub)
			}
		}
	}
	return fsys.Remove(dir)
}

// nextSplit sets the Split of the next Open.
func (r *runner) nextSplit() {
	if len(r.splits) > 0 {
		r.opts.Split = r.splits[r.opens%len(r.splits)]
	}
	r.opens++
}

// newIter opens o's iterator. A DB whose Split cuts keys as firstByte
// does answers o.prefix itself. Any other cannot, so its outcomes come
// from the keys of o's bounds, kept by firstByte's prefix; and one with
// no Split must refuse the prefix, else newIter returns the error that
// says otherwise (the iterator is still usable).
func (r *runner) newIter(o op) (cursor, error) {
	io := &lsm.IterOptions{LowerBound: o.lo, UpperBound: o.hi}
	if o.prefix == nil || cutsAsFirstByte(r.opts.Split) {
		io.Prefix = o.prefix
		return r.iterOn(o.snap, io), nil
	}
	var err error
	if r.opts.Split == nil {
		refused := r.iterOn(o.snap, &lsm.IterOptions{Prefix: o.prefix})
		if got := refused.Close(); !errors.Is(got, lsm.ErrInvalidOptions) {
			err = fmt.Errorf("IterOptions.Prefix without a Split: Close = %v, want ErrInvalidOptions", got)
		}
	}
	it := r.iterOn(o.snap, io)
	kept := &sliceIter{pos: -1}
	// Monotone Split (filter.Split, contract 2): once a key's prefix
	// passes o.prefix, every later key's does too.
	for ok := it.SeekGE(o.prefix); ok && bytes.Compare(firstByte.Prefix(it.Key()), o.prefix) <= 0; ok = it.Next() {
		if o.within(it.Key()) {
			kept.keys = append(kept.keys, string(it.Key()))
			kept.vals = append(kept.vals, string(it.Value()))
		}
	}
	return kept, errors.Join(err, it.Close())
}

func (r *runner) iterOn(snap int, io *lsm.IterOptions) *lsm.Iter {
	if snap >= 0 {
		return r.snaps[snap].NewIter(io)
	}
	return r.db.NewIter(io)
}

// cursor is what the operations move: an lsm.Iter, or a sliceIter.
type cursor interface {
	First() bool
	Last() bool
	SeekGE(key []byte) bool
	SeekLT(key []byte) bool
	Next() bool
	Prev() bool
	Valid() bool
	Key() []byte
	Value() []byte
	Err() error
	Close() error
}

var _ cursor = (*lsm.Iter)(nil)

// moveOutcome moves it as iterator move o says and returns the outcome.
func moveOutcome(it cursor, o op) string {
	var moved bool
	switch o.kind {
	case opIterFirst:
		moved = it.First()
	case opIterLast:
		moved = it.Last()
	case opIterSeekGE:
		moved = it.SeekGE(o.key)
	case opIterSeekLT:
		moved = it.SeekLT(o.key)
	case opIterNext:
		moved = it.Next()
	case opIterPrev:
		moved = it.Prev()
	}
	return iterOutcome(it, moved)
}

// scanOutcome reads it from end to end, forward or in reverse, closes it,
// and returns its entries and its error.
func scanOutcome(it cursor, reverse bool) string {
	var b strings.Builder
	move, step := it.First, it.Next
	if reverse {
		move, step = it.Last, it.Prev
	}
	for moved := move(); moved; moved = step() {
		b.WriteString(entryOutcome(it.Key(), it.Value()))
		b.WriteByte(' ')
	}
	if err := it.Close(); err != nil {
		b.WriteString(errOutcome(err))
	}
	return b.String()
}

// iterOutcome is the entry the iterator is on, "invalid", or its error.
// The move's result must agree with Valid.
func iterOutcome(it cursor, moved bool) string {
	switch {
	case moved != it.Valid():
		return fmt.Sprintf("move returned %v, Valid %v", moved, it.Valid())
	case it.Err() != nil:
		return errOutcome(it.Err())
	case !moved:
		return "invalid"
	}
	return entryOutcome(it.Key(), it.Value())
}

// getOutcome is the outcome of a read of one key that returned v, err.
func getOutcome(v []byte, err error) string {
	switch {
	case errors.Is(err, lsm.ErrNotFound):
		return outcomeNotFound
	case err != nil:
		return errOutcome(err)
	}
	return valueOutcome(v)
}

func result(err error) string {
	if err != nil {
		return errOutcome(err)
	}
	return outcomeOK
}

// close closes every iterator and snapshot, then the DB.
// repair runs Repair on the closed DB and fails if its report calls any
// file other than merged, obsolete or a superseded manifest: the DB was
// closed cleanly, so nothing in it is damaged or another program's.
func (r *runner) repair() error {
	opts := r.opts
	rep, err := lsm.Repair(r.dir, &opts)
	if err != nil {
		return fmt.Errorf("Repair: %w", err)
	}
	for _, f := range rep.Files {
		switch f.Fate {
		case lsm.FateMerged, lsm.FateObsolete, lsm.FateSuperseded:
			if f.Err == nil {
				continue
			}
		}
		return fmt.Errorf("Repair of a cleanly closed DB: %s: %v (%v)", f.Name, f.Fate, f.Err)
	}
	return nil
}

func (r *runner) close() error {
	var errs []error
	for id, it := range r.iters {
		errs = append(errs, it.Close())
		delete(r.iters, id)
	}
	for id, s := range r.snaps {
		errs = append(errs, s.Close())
		delete(r.snaps, id)
	}
	if r.db != nil {
		errs = append(errs, r.db.Close())
		r.db = nil
	}
	return errors.Join(errs...)
}
