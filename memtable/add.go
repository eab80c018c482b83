package memtable

import (
	"fmt"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
)

// Add inserts the entry (key, seq, kind) with its value; key and value are
// copied. It is AddHash with filter.Hash(key).
func (m *Memtable) Add(seq SeqNum, kind Kind, key, value []byte) error {
	return m.AddHash(seq, kind, key, value, filter.Hash(key))
}

// AddHash is Add for a caller that has already hashed key with
// filter.Hash (the write path hashes each key once for every filter).
//
// Write path:
//  1. validate the entry;
//  2. grow the filter if one more fingerprint would pass maxLoad;
//  3. insert the fingerprint (one per entry: invariant 2), and with a
//     Split the prefix's unless the last Add inserted it (steps 2 and 3
//     again);
//  4. copy key and value into the arena and insert the entry in the tree.
//
// All under the write lock, so a reader never sees a fingerprint without
// its entry being findable, nor a half-shifted filter.
func (m *Memtable) AddHash(seq SeqNum, kind Kind, key, value []byte, hash uint64) error {
	if !kind.Valid() {
		return fmt.Errorf("%w: kind %v", ErrInvalidEntry, kind)
	}
	if seq > MaxSeqNum {
		return fmt.Errorf("%w: sequence number %d above %d", ErrInvalidEntry, seq, MaxSeqNum)
	}
	if uint64(len(key)) > 1<<32-1 {
		return fmt.Errorf("%w: key of %d bytes", ErrInvalidEntry, len(key))
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.frozen.Load() {
		return ErrFrozen
	}
	if err := m.insertFingerprint(hash); err != nil {
		return err
	}
	prefixAdded, err := m.insertPrefix(key)
	if err != nil {
		m.filter.DeleteHash(hash)
		return err
	}
	e := m.arena.newEntry(key, value, base.MakeTrailer(seq, kind))
	if old, dup := m.tree.ReplaceOrInsert(e); dup {
		// Put the original back: a duplicate is a caller bug, and the
		// entry readers may already have seen must not change. The arena
		// bytes of the rejected copy are lost until the memtable goes.
		m.tree.ReplaceOrInsert(old)
		m.filter.DeleteHash(hash)
		if prefixAdded {
			m.filter.DeleteHash(m.lastPrefix)
			m.hasLastPrefix = false
		}
		return fmt.Errorf("%w: duplicate of %v", ErrInvalidEntry, e.internalKey())
	}
	m.entries++
	m.snap = nil
	return nil
}

// insertFingerprint adds hash to the filter, growing it first when needed.
// Growth doubles the slots, so its linear cost is amortised to O(1) per
// insert. Called with mu held for writing.
func (m *Memtable) insertFingerprint(hash uint64) error {
	if !fits(m.filter, 1) {
		if err := m.filter.Grow(); err != nil {
			return fmt.Errorf("memtable: growing filter at %d entries: %w", m.filter.Len(), err)
		}
	}
	if err := m.filter.InsertHash(hash); err != nil {
		return fmt.Errorf("memtable: filter insert at %d entries: %w", m.filter.Len(), err)
	}
	return nil
}

// insertPrefix inserts the PrefixHash of key's prefix under the
// memtable's Split, unless there is none or the last Add's prefix had the
// same hash: then its fingerprint is in the filter already (a filter holds
// hashes, so a hash is all it needs to be equal), which spares one
// fingerprint per entry when keys of one prefix arrive together. It
// reports whether it inserted. Called with mu held for writing.
func (m *Memtable) insertPrefix(key []byte) (bool, error) {
	if m.split == nil {
		return false, nil
	}
	h := filter.PrefixHash(m.split.Prefix(key))
	if m.hasLastPrefix && h == m.lastPrefix {
		return false, nil
	}
	if err := m.insertFingerprint(h); err != nil {
		return false, err
	}
	m.lastPrefix, m.hasLastPrefix = h, true
	return true, nil
}
