package memtable

import (
	"bytes"

	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/base"
)

// Get returns the newest version of key whose sequence number is at most
// seq. It is GetHash with filter.Hash(key).
func (m *Memtable) Get(key []byte, seq SeqNum) ([]byte, Result) {
	return m.GetHash(key, filter.Hash(key), seq)
}

// GetHash is Get for a caller that has already computed filter.Hash(key).
// The returned value (Found only) aliases the memtable: its bytes never
// change, and stay valid as long as the caller holds them; a caller that
// hands them to a user copies them first.
//
// Read path:
//  1. filter: no → FilteredOut, the tree is not touched;
//  2. tree: the first entry at or after SeekKey(key, seq) is the newest
//     visible version if it has the same user key (invariant 3 of
//     internal/base); its kind decides Found or Deleted;
//  3. otherwise Absent (a filter false positive, or only versions newer
//     than seq).
//
// Get does not allocate.
func (m *Memtable) GetHash(key []byte, hash uint64, seq SeqNum) ([]byte, Result) {
	v, res, _ := m.GetVersion(key, hash, seq)
	return v, res
}

// GetVersion is GetHash that also returns the sequence number of the
// version found (Found or Deleted), which a reader compares with the range
// tombstones over key (lsm/get.go). It ignores the memtable's own range
// tombstones, as GetHash does.
func (m *Memtable) GetVersion(key []byte, hash uint64, seq SeqNum) ([]byte, Result, SeqNum) {
	defer m.runlock(m.rlock())
	// 1. Filter.
	if !m.noFilter && !m.filter.MayContainHash(hash) {
		return nil, FilteredOut, 0
	}
	// 2. Tree. The closure does not escape (AscendGreaterOrEqual only
	// calls it), so it lives on the stack.
	var first entry
	var ok bool
	m.tree.AscendGreaterOrEqual(pivot(base.SeekKey(key, seq)), func(e entry) bool {
		first, ok = e, true
		return false
	})
	if !ok || !bytes.Equal(first.key(), key) {
		// 3. No visible version.
		return nil, Absent, 0
	}
	found := SeqNum(first.trailer >> 8)
	if Kind(first.trailer) == KindDelete {
		return nil, Deleted, found
	}
	return first.value(), Found, found
}

// MayContainHash reports whether the memtable's filter admits a user key
// with this filter.Hash. false is certain: no version of the key is here.
func (m *Memtable) MayContainHash(h uint64) bool {
	defer m.runlock(m.rlock())
	return m.filter.MayContainHash(h)
}

// MayContainPrefix reports whether the memtable may hold a user key k
// whose prefix under split is p (k[:split.Len(k)] = p); prefixHash is
// filter.PrefixHash(p). false is certain. A memtable made without a Split
// of split's Name (Options.Split) answers true.
func (m *Memtable) MayContainPrefix(split *filter.Split, prefixHash uint64) bool {
	if !m.holdsPrefixes(split) {
		return true
	}
	defer m.runlock(m.rlock())
	return m.filter.MayContainHash(prefixHash)
}

// holdsPrefixes reports whether m's filter holds split's prefixes.
func (m *Memtable) holdsPrefixes(split *filter.Split) bool {
	return m.split != nil && split.HasName(m.split.Name)
}

// MayContainHashes is MayContainHash for a batch of hashes: maybe[i]
// reports whether the filter admits hashes[i]. It takes the read lock once
// for the batch, not once per hash, and holds it for all the probes
// (writers wait that long). maybe must be as long as hashes.
func (m *Memtable) MayContainHashes(hashes []uint64, maybe []bool) {
	defer m.runlock(m.rlock())
	for i, h := range hashes {
		maybe[i] = m.filter.MayContainHash(h)
	}
}
