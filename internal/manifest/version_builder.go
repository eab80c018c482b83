package manifest

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/monbandb/monban/internal/base"
)

// builder applies a sequence of edits to a base Version and builds the
// result once, so that replaying a manifest of n edits over m tables costs
// O(n + m log m) rather than a Version per edit. Its errors carry no
// sentinel: Recover wraps them in ErrCorruption, LogAndApply in
// ErrInvalidEdit.
type builder struct {
	base *Version
	// present maps every table in the state built so far to its level.
	present map[uint64]int
	// deleted are tables of base removed; added are tables added since.
	deleted [NumLevels]map[uint64]bool
	added   [NumLevels]map[uint64]*FileMetadata
}

func newBuilder(base *Version) *builder {
	b := &builder{base: base, present: make(map[uint64]int)}
	for level, files := range base.Levels {
		for _, f := range files {
			b.present[f.FileNum] = level
		}
	}
	return b
}

// apply records e's deletions, then its additions (so a table can move
// between levels in one edit). Deleting a table that is not in the named
// level, or adding a number already present, is an error: either would
// mean the log and the tables on disk disagree.
func (b *builder) apply(e *VersionEdit) error {
	for _, d := range e.sortedDeleted() {
		level, ok := b.present[d.FileNum]
		if !ok || level != d.Level || d.Level < 0 || d.Level >= NumLevels {
			return fmt.Errorf("edit deletes table %06d from L%d, which does not hold it", d.FileNum, d.Level)
		}
		delete(b.present, d.FileNum)
		if _, ok := b.added[level][d.FileNum]; ok {
			delete(b.added[level], d.FileNum)
			continue
		}
		if b.deleted[level] == nil {
			b.deleted[level] = make(map[uint64]bool)
		}
		b.deleted[level][d.FileNum] = true
	}
	for _, nf := range e.Added {
		if nf.Level < 0 || nf.Level >= NumLevels || nf.Meta == nil {
			return fmt.Errorf("edit adds a table to level %d (metadata %v)", nf.Level, nf.Meta)
		}
		if err := nf.Meta.validate(); err != nil {
			return err
		}
		if level, ok := b.present[nf.Meta.FileNum]; ok {
			return fmt.Errorf("edit adds table %06d to L%d, but L%d already holds it", nf.Meta.FileNum, nf.Level, level)
		}
		b.present[nf.Meta.FileNum] = nf.Level
		if b.added[nf.Level] == nil {
			b.added[nf.Level] = make(map[uint64]*FileMetadata)
		}
		b.added[nf.Level][nf.Meta.FileNum] = nf.Meta
	}
	return nil
}

// build returns the new Version, checking the level invariants of every
// level that changed. Unchanged levels share the base's slices.
func (b *builder) build() (*Version, error) {
	v := &Version{}
	for level := range v.Levels {
		old := b.base.Levels[level]
		if len(b.deleted[level]) == 0 && len(b.added[level]) == 0 {
			v.Levels[level] = old
			continue
		}
		files := make([]*FileMetadata, 0, len(old)-len(b.deleted[level])+len(b.added[level]))
		for _, f := range old {
			if !b.deleted[level][f.FileNum] {
				files = append(files, f)
			}
		}
		for _, f := range b.added[level] {
			files = append(files, f)
		}
		if level == 0 {
			slices.SortFunc(files, func(x, y *FileMetadata) int {
				return cmp.Or(cmp.Compare(y.LargestSeq, x.LargestSeq), cmp.Compare(y.FileNum, x.FileNum))
			})
		} else {
			slices.SortFunc(files, func(x, y *FileMetadata) int {
				return cmp.Or(base.Compare(x.Smallest, y.Smallest), cmp.Compare(x.FileNum, y.FileNum))
			})
		}
		if err := checkLevel(level, files); err != nil {
			return nil, err
		}
		v.Levels[level] = files
	}
	return v, nil
}

// maxFileNum returns the largest table number in the state built so far.
func (b *builder) maxFileNum() uint64 {
	var n uint64
	for num := range b.present {
		n = max(n, num)
	}
	return n
}
