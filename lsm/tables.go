package lsm

import (
	"slices"

	"github.com/monbandb/monban/internal/manifest"
)

// TableInfo describes one SSTable of the tree, for tools that show its
// shape (kvbench tree).
type TableInfo struct {
	Level    int
	FileNum  uint64
	Size     uint64
	Smallest []byte // user keys, inclusive
	Largest  []byte
	// Entries counts the table's entries, Tombstones those that are
	// deletions.
	Entries, Tombstones uint64
	// FilterBitsPerKey is the Bloom filter density the table was written
	// with (0: no filter), a fraction under FilterSizingPerLevel;
	// FilterBytes the filter block's size. Both are -1 when the table could
	// not be opened to read them.
	FilterBitsPerKey float64
	FilterBytes      int64
}

// Tables lists the tables of the current version, level by level (L0
// newest first, deeper levels in key order).
func (d *DB) Tables() ([]TableInfo, error) {
	if d.closed.Load() {
		return nil, ErrClosed
	}
	rs := d.loadReadState()
	if rs == nil {
		return nil, ErrClosed
	}
	defer rs.unref()
	var out []TableInfo
	for level, files := range rs.version.Levels {
		for _, f := range files {
			t := TableInfo{
				Level: level, FileNum: f.FileNum, Size: f.Size,
				Smallest: append([]byte(nil), f.Smallest.UserKey...),
				Largest:  append([]byte(nil), f.Largest.UserKey...),
				Entries:  f.NumEntries, Tombstones: f.NumDeletions,
				FilterBitsPerKey: -1, FilterBytes: -1,
			}
			if r, release, err := d.table(f); err == nil {
				p := r.Properties()
				t.FilterBitsPerKey, t.FilterBytes = p.FilterBitsPerKey, int64(p.FilterBytes)
				release()
			}
			out = append(out, t)
		}
	}
	return out, nil
}

// inLastLevel reports whether table fileNum is in the last level of the
// current version, and how many tables that level holds: the tables
// Options.PinnedMetaLimit pins last (sstable.MetaBudget). It is asked when
// a table opens, not per read, so a scan of the level's files is cheap
// enough. A table loadTables is opening takes the level loadTables was
// given: a flush's is not in the version yet, and one of Open's
// background load gets the level Open saw, as when Open loaded it. Before
// the first read state is installed (Open loading the tables that hold
// range tombstones), it asks the version set; after Close, when neither
// has a version, no table is low.
func (d *DB) inLastLevel(fileNum uint64) (low bool, tables int) {
	d.loadingMu.Lock()
	level, loading := d.loading[fileNum]
	d.loadingMu.Unlock()
	var v *manifest.Version
	if rs := d.rs.Load(); rs != nil {
		v = rs.version
	} else if v = d.vs.Current(); v == nil {
		return false, 0
	} else {
		defer v.Unref()
	}
	last := v.Levels[NumLevels-1]
	if loading {
		return level == NumLevels-1, len(last)
	}
	return slices.ContainsFunc(last, func(f *manifest.FileMetadata) bool { return f.FileNum == fileNum }), len(last)
}
