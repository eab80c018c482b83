package memtable

import (
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/keyspan"
)

// The engine's key types, under names that code outside this module can
// use: memtable's signatures are written in them, and their defining
// packages are internal. They are aliases, so a memtable.SeqNum is the
// engine's own and converts to nothing.
type (
	// SeqNum orders the versions of a key: the sequence number of the
	// write that made one.
	SeqNum = base.SeqNum
	// Kind is what an entry does to its key: KindSet or KindDelete.
	Kind = base.Kind
	// InternalKey is a user key with its version's sequence number and
	// kind, as Iter.Key returns it and SeekGE and SeekLT take it.
	InternalKey = base.InternalKey
	// Tombstone is one range deletion as AddRangeDelete recorded it.
	Tombstone = keyspan.Tombstone
	// Spans are range tombstones cut into non-overlapping fragments, as
	// RangeDels returns them.
	Spans = keyspan.Spans
)

// The kinds Add takes, and the sequence number that sees every version.
const (
	KindSet    = base.KindSet
	KindDelete = base.KindDelete
	MaxSeqNum  = base.MaxSeqNum
)

// MakeInternalKey tags userKey with a version: the key SeekGE and SeekLT
// take.
func MakeInternalKey(userKey []byte, seq SeqNum, kind Kind) InternalKey {
	return base.MakeInternalKey(userKey, seq, kind)
}
