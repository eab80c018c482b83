package sstable

import (
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
	"github.com/monbandb/monban/internal/keyspan"
)

// The engine's types that sstable's signatures are written in, under
// names that code outside this module can use: their defining packages
// are internal. They are aliases, so a sstable.SeqNum is the engine's own
// and converts to nothing.
type (
	// SeqNum orders the versions of a key: the sequence number of the
	// write that made one.
	SeqNum = base.SeqNum
	// Kind is what an entry does to its key: KindSet or KindDelete.
	Kind = base.Kind
	// InternalKey is a user key with its version's sequence number and
	// kind, as Writer.Add takes it and Iter.Key returns it.
	InternalKey = base.InternalKey
	// Spans are range tombstones cut into non-overlapping fragments, as
	// Writer.SetRangeDels takes them and Reader.RangeDels returns them.
	Spans = keyspan.Spans
	// Cache is a block cache, which ReaderOptions.Cache takes: readers of
	// many tables may share one.
	Cache = cache.Cache
)

// The kinds Writer.Add takes, and the sequence number that sees every
// version.
const (
	KindSet    = base.KindSet
	KindDelete = base.KindDelete
	MaxSeqNum  = base.MaxSeqNum
)

// MakeInternalKey tags userKey with a version: the key Writer.Add, SeekGE
// and SeekLT take.
func MakeInternalKey(userKey []byte, seq SeqNum, kind Kind) InternalKey {
	return base.MakeInternalKey(userKey, seq, kind)
}

// NewCache returns a block cache of capacity bytes (none when capacity <=
// 0).
func NewCache(capacity int64) *Cache { return cache.New(capacity) }
