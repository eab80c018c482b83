package lsm

import (
	"bytes"
	"sort"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/sstable"
)

// levelIter concatenates the tables of one level L1+ (sorted, not
// overlapping) into one base.InternalIterator, opening each table only
// when the iteration reaches it and closing it when the iteration leaves,
// so a level holds one table's buffers however many tables it spans. It
// reuses one sstable.Iter for all of them, and is itself reused from Iter
// to Iter (iterParts), so crossing into a table allocates nothing.
type levelIter struct {
	tables       tableOpener
	files        []*manifest.FileMetadata
	lower, upper []byte
	// probe, when not nil, is asked about each table before it is read
	// (iter_prefix.go, iter_range.go); a table it rules out is read as
	// empty.
	probe *tableProbe

	idx     int           // index in files of the open table; -1 none
	iter    *sstable.Iter // &table while a table is open, else nil
	table   sstable.Iter
	release func()
	err     error
}

var _ base.InternalIterator = (*levelIter)(nil)

// tableOpener opens a table for a levelIter, with a function that lets it
// go: the DB's table cache for reads (DB.table), private readers for a
// compaction (compactionTables).
type tableOpener interface {
	table(f *manifest.FileMetadata) (*sstable.Reader, func(), error)
}

// init makes l an unpositioned iterator over files, keeping its table
// iterator's buffers. REQUIRES: l is new or closed.
func (l *levelIter) init(tables tableOpener, files []*manifest.FileMetadata, lower, upper []byte, probe *tableProbe) {
	*l = levelIter{tables: tables, files: files, lower: lower, upper: upper, probe: probe, idx: -1, table: l.table}
}

// open makes files[i] the current table or, if the probe rules it out,
// the first table from i on in direction dir (+1 or -1) that the probe
// does not: a table ruled out is read as empty, its index and data
// untouched. false if no table is left within the bounds or a table
// cannot be opened (err is set then).
func (l *levelIter) open(i, dir int) bool {
	if i == l.idx && l.iter != nil {
		return true
	}
	l.closeTable()
	for ; i >= 0 && i < len(l.files); i += dir {
		f := l.files[i]
		if l.upper != nil && bytes.Compare(f.Smallest.UserKey, l.upper) >= 0 ||
			l.lower != nil && bytes.Compare(f.Largest.UserKey, l.lower) < 0 {
			return false
		}
		r, release, err := l.tables.table(f)
		if err != nil {
			l.err = err
			return false
		}
		if l.probe != nil && !l.probe.admits(r) {
			release()
			continue
		}
		l.table.Init(r, l.lower, l.upper)
		l.idx, l.iter, l.release = i, &l.table, release
		return true
	}
	return false
}

// olderUntil returns how far the level may be sought past entries older
// than seq, up to end: end if every table from the open one up to end
// holds only older entries (by its LargestSeq), else the first key of the
// first that may not, or nil if that is the open table.
func (l *levelIter) olderUntil(seq base.SeqNum, end []byte) []byte {
	if l.iter == nil {
		return nil
	}
	for j := l.idx; j < len(l.files); j++ {
		f := l.files[j]
		if bytes.Compare(f.Smallest.UserKey, end) >= 0 {
			break
		}
		if f.LargestSeq >= seq {
			if j == l.idx {
				return nil
			}
			return f.Smallest.UserKey
		}
	}
	return end
}

// olderFrom reports whether every table from the open one back to start
// holds only entries older than seq (by its LargestSeq): the backward
// mirror of olderUntil, which skips all of the stretch or none of it.
func (l *levelIter) olderFrom(seq base.SeqNum, start []byte) bool {
	if l.iter == nil {
		return false
	}
	for j := l.idx; j >= 0 && bytes.Compare(l.files[j].Largest.UserKey, start) >= 0; j-- {
		if l.files[j].LargestSeq >= seq {
			return false
		}
	}
	return true
}

func (l *levelIter) closeTable() {
	if l.iter != nil {
		if err := l.iter.Close(); err != nil && l.err == nil {
			l.err = err
		}
		l.release()
		l.iter, l.release = nil, nil
	}
	l.idx = -1
}

// settle moves across table boundaries until the current table has an
// entry or the level is exhausted, in direction dir (+1 or -1).
func (l *levelIter) settle(ok bool, dir int) bool {
	for !ok {
		if l.iter != nil {
			if err := l.iter.Error(); err != nil {
				l.err = err
				return false
			}
		}
		next := l.idx + dir
		if l.idx < 0 || !l.open(next, dir) {
			l.closeTable()
			return false
		}
		if dir > 0 {
			ok = l.iter.First()
		} else {
			ok = l.iter.Last()
		}
	}
	return true
}

// SeekGE opens the first table whose largest key is >= key (or the lower
// bound, if that is greater).
func (l *levelIter) SeekGE(key base.InternalKey) bool {
	if l.lower != nil && bytes.Compare(key.UserKey, l.lower) < 0 {
		key = base.SeekKey(l.lower, base.MaxSeqNum)
	}
	i := sort.Search(len(l.files), func(i int) bool { return base.Compare(l.files[i].Largest, key) >= 0 })
	if !l.open(i, +1) {
		return false
	}
	return l.settle(l.iter.SeekGE(key), +1)
}

// SeekLT opens the last table whose smallest key is < key (or the upper
// bound, if that is smaller).
func (l *levelIter) SeekLT(key base.InternalKey) bool {
	if l.upper != nil && bytes.Compare(key.UserKey, l.upper) >= 0 {
		key = base.SeekKey(l.upper, base.MaxSeqNum)
	}
	i := sort.Search(len(l.files), func(i int) bool { return base.Compare(l.files[i].Smallest, key) >= 0 }) - 1
	if !l.open(i, -1) {
		return false
	}
	return l.settle(l.iter.SeekLT(key), -1)
}

func (l *levelIter) First() bool {
	if l.lower != nil {
		return l.SeekGE(base.SeekKey(l.lower, base.MaxSeqNum))
	}
	if !l.open(0, +1) {
		return false
	}
	return l.settle(l.iter.First(), +1)
}

func (l *levelIter) Last() bool {
	if l.upper != nil {
		return l.SeekLT(base.SeekKey(l.upper, base.MaxSeqNum))
	}
	if !l.open(len(l.files)-1, -1) {
		return false
	}
	return l.settle(l.iter.Last(), -1)
}

func (l *levelIter) Next() bool {
	if l.iter == nil {
		return false
	}
	return l.settle(l.iter.Next(), +1)
}

func (l *levelIter) Prev() bool {
	if l.iter == nil {
		return false
	}
	return l.settle(l.iter.Prev(), -1)
}

func (l *levelIter) Valid() bool           { return l.iter != nil && l.iter.Valid() }
func (l *levelIter) Key() base.InternalKey { return l.iter.Key() }
func (l *levelIter) Value() []byte         { return l.iter.Value() }
func (l *levelIter) Error() error          { return l.err }

func (l *levelIter) Close() error {
	l.closeTable()
	return l.err
}
