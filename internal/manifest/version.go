package manifest

import (
	"bytes"
	"fmt"
	"strings"
	"sync/atomic"
)

// Version is one immutable state of the tree: which tables are in which
// level. A Version is never modified after it is built; a change makes a new
// Version (VersionSet.LogAndApply) that shares the unchanged levels' slices.
//
// Invariants (checked when a Version is built from edits):
//
//  1. L0 is ordered by LargestSeq descending, ties by FileNum descending,
//     so reads visit the newest table first. That order is only right if
//     L0 tables whose key ranges overlap also have disjoint sequence
//     ranges; flushes guarantee it, and a compaction writing into L0 must
//     keep it. It is not checked here.
//  2. Every level L1..L6 is ordered by Smallest, and its tables' user-key
//     ranges do not overlap: each table's Largest user key is below the
//     next table's Smallest user key. A user key therefore lives in at most
//     one table per level, and compaction must not split one user key's
//     versions across two output tables of a level.
//  3. A file number appears at most once in a Version.
//
// Readers hold a reference (Ref/Unref) for as long as they use the tables
// of a Version; see VersionSet for what an Unref to zero does.
type Version struct {
	Levels [NumLevels][]*FileMetadata

	refs atomic.Int32
	// vs is the set that installed the Version, told when the last
	// reference goes; nil for a Version built outside a set (tests).
	vs *VersionSet
}

// Ref takes a reference. The caller must already hold one (or be the
// VersionSet), since a Version whose count reached zero is dead.
func (v *Version) Ref() { v.refs.Add(1) }

// Unref drops a reference. The last Unref releases the Version's tables:
// those no other live Version holds become obsolete (VersionSet.Obsolete).
// Unref of a Version with no references is a reference-counting bug in the
// caller and panics, as it would otherwise free tables still in use.
func (v *Version) Unref() {
	switch n := v.refs.Add(-1); {
	case n == 0:
		if v.vs != nil {
			v.vs.release(v)
		}
	case n < 0:
		panic(fmt.Sprintf("manifest: Version.Unref with %d references", n+1))
	}
}

// Refs returns the current reference count, for tests and debugging.
func (v *Version) Refs() int32 { return v.refs.Load() }

func compareUser(a, b []byte) int { return bytes.Compare(a, b) }

// Overlaps returns the tables of level whose user-key range intersects
// [lo, hi] (both inclusive; lo <= hi). For L1+ the result is a subslice of
// v.Levels[level] and allocates nothing: callers must not modify it. For L0
// it is a new slice in L0 order. It does not widen the range to tables that
// overlap the ones found: an L0 compaction that must take every
// transitively overlapping table does that itself.
func (v *Version) Overlaps(level int, lo, hi []byte) []*FileMetadata {
	files := v.Levels[level]
	if level == 0 {
		var out []*FileMetadata
		for _, f := range files {
			if compareUser(f.Largest.UserKey, lo) >= 0 && compareUser(f.Smallest.UserKey, hi) <= 0 {
				out = append(out, f)
			}
		}
		return out
	}
	// Invariant 2: both Smallest and Largest increase along the level, so
	// the overlapping tables are one contiguous run.
	start := SearchLargest(files, lo)
	end := start
	for end < len(files) && compareUser(files[end].Smallest.UserKey, hi) <= 0 {
		end++
	}
	return files[start:end:end]
}

// FindFile returns the table of level that may hold ukey, or nil. For L1+
// it is a binary search over the sorted, disjoint ranges (invariant 2);
// for L0 it returns the newest table whose range contains ukey — a read
// must still visit the older L0 tables when that one lacks the key.
func (v *Version) FindFile(level int, ukey []byte) *FileMetadata {
	files := v.Levels[level]
	if level == 0 {
		for _, f := range files {
			if f.ContainsUserKey(ukey) {
				return f
			}
		}
		return nil
	}
	if i := v.FindFileIndex(level, ukey); i >= 0 {
		return files[i]
	}
	return nil
}

// FindFileIndex is FindFile for L1+, as the table's index in
// v.Levels[level]: -1 when no table's range contains ukey.
func (v *Version) FindFileIndex(level int, ukey []byte) int {
	files := v.Levels[level]
	i := SearchLargest(files, ukey)
	if i < len(files) && compareUser(files[i].Smallest.UserKey, ukey) <= 0 {
		return i
	}
	return -1
}

// searchLargest returns the index of the first table whose Largest user key
// is >= ukey (len(files) if none). Hand-written rather than sort.Search so
// that the read path makes no closure allocation.
func SearchLargest(files []*FileMetadata, ukey []byte) int {
	lo, hi := 0, len(files)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if compareUser(files[mid].Largest.UserKey, ukey) < 0 {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// NumFiles returns the number of tables in level.
func (v *Version) NumFiles(level int) int { return len(v.Levels[level]) }

// LevelSize returns the total size in bytes of level's tables.
func (v *Version) LevelSize(level int) uint64 {
	var n uint64
	for _, f := range v.Levels[level] {
		n += f.Size
	}
	return n
}

// String lists the tables level by level, for tests and debugging.
func (v *Version) String() string {
	var sb strings.Builder
	for level, files := range v.Levels {
		if len(files) == 0 {
			continue
		}
		fmt.Fprintf(&sb, "L%d:\n", level)
		for _, f := range files {
			fmt.Fprintf(&sb, "  %v\n", f)
		}
	}
	return sb.String()
}

// checkLevel verifies invariants 1 and 2 for one level.
func checkLevel(level int, files []*FileMetadata) error {
	for i := 1; i < len(files); i++ {
		prev, f := files[i-1], files[i]
		if level == 0 {
			if prev.LargestSeq < f.LargestSeq || prev.LargestSeq == f.LargestSeq && prev.FileNum < f.FileNum {
				return fmt.Errorf("L0 tables %06d and %06d out of newest-first order", prev.FileNum, f.FileNum)
			}
			continue
		}
		if compareUser(prev.Largest.UserKey, f.Smallest.UserKey) >= 0 {
			return fmt.Errorf("L%d tables %06d %q..%q and %06d %q..%q overlap",
				level, prev.FileNum, prev.Smallest.UserKey, prev.Largest.UserKey,
				f.FileNum, f.Smallest.UserKey, f.Largest.UserKey)
		}
	}
	return nil
}
