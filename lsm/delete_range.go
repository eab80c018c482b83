package lsm

import (
	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/memtable"
)

// DeleteRange deletes every key k with start <= k < end, atomically, at
// one sequence number: one WAL record, and one range tombstone in the
// memtable, however many keys the range holds. A read at a later sequence
// number finds none of them; a later Put of a key in the range is newer
// and is found. start >= end is ErrInvalidRange; a bound longer than
// MaxKeySize, ErrInvalidKey. opts are as for Put.
//
// The tombstone hides the versions below it on every read path (get.go,
// iter.go, rangedel_read.go); flushes and compactions carry it down the
// tree (rangedel_write.go).
func (d *DB) DeleteRange(start, end []byte, opts ...*WriteOptions) error {
	b := batchPool.Get().(*Batch)
	b.Reset()
	b.DeleteRange(start, end)
	err := d.Write(b, opts...)
	batchPool.Put(b)
	return err
}

// applyEntry applies one committed batch entry to mem: a range deletion
// to its range tombstones, a point write to its tree and filter.
func applyEntry(mem *memtable.Memtable, e batchEntry) error {
	if e.Kind == base.KindRangeDelete {
		return mem.AddRangeDelete(e.Seq, e.Key, e.Value)
	}
	return mem.AddHash(e.Seq, e.Kind, e.Key, e.Value, filter.Hash(e.Key))
}

// apply is applyEntry for the DB's own memtables: a range deletion first
// marks the DB as one that may hold range tombstones (rangeDelsPossible),
// before any reader can see it in the memtable.
func (d *DB) apply(mem *memtable.Memtable, e batchEntry) error {
	if e.Kind == base.KindRangeDelete {
		d.rangeDelsPossible.Store(true)
	}
	return applyEntry(mem, e)
}
