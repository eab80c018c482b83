package lsm

import (
	"sync/atomic"

	"github.com/monbandb/monban/compaction"
	"github.com/monbandb/monban/filter"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/sstable"
)

// Absent-key proofs: how the filters prove that no version of a key
// exists, so that a tombstone for it would hide nothing and need not be
// written (Delete) or kept (flushes and compactions).
//
// Why a "no" from every filter on the key's path is a proof:
//
//  1. A version of a key lives in exactly one source: the active memtable,
//     an immutable memtable, or a table. A table holds only keys inside
//     its key range (FileMetadata), so the only tables that can hold the
//     key are those whose range covers it: any number in L0, whose tables
//     overlap, and at most one per deeper level (Version.FindFile).
//  2. A filter has false positives but no false negatives: every point key
//     a table holds went into its Bloom filter when it was written, and
//     every key written to a memtable leaves a fingerprint in the mutable
//     level's quotient filters that no delete takes away (package doc,
//     invariant 3).
//  3. So if every filter of every source in 1 says "no", no source holds a
//     version of the key, at any sequence number: every read, snapshots
//     included, answers ErrNotFound with or without a tombstone.
//     Whatever cannot answer from memory counts as "maybe" and ends the
//     proof: a table not opened since Open, a paged table whose filter
//     page is not in the block cache, a table without a filter, and every
//     filter under Options.IgnoreFilters. The proof never reads disk.
//
// Range tombstones change nothing: a point tombstone hides only point
// versions, and the proof shows there are none (package doc, "Absent-key
// proofs").
//
// In this file, top to bottom (Delete asks the gate, at the bottom, first):
//
//   - provablyAbsent: Delete's proof, over the current read state's tables
//     and then its memtables (Stats.DeletesElided);
//   - tablesMayContain, tableMayContain, knownFilter: the table half, shared
//     with the merges; recordFilter and loadTables put the filters where
//     the proofs find them, without the table cache;
//   - tombstoneElider: the merges' proof (compaction.Iter, invariant 2),
//     over the tables below a flush's or compaction's output only, since
//     only those are older than the tombstone;
//   - proofGate: whether Delete asks at all. A proof that fails (the key
//     exists) costs a filter probe, often a cache miss, and saves nothing;
//     the gate stops asking while proofs keep failing. It guards the
//     delete path's CPU, never an answer: a delete it does not let ask
//     writes its tombstone, which is always correct.
//
// Every proof holds a reference on the version whose filters it probes
// (the read state's for Delete, the merge's own for the elider): table
// filters live outside the heap and are freed when the last version
// naming their table goes (internal/offheap, invariant 1).

// provablyAbsent reports whether no filter on key's read path admits it,
// which proves that no version of key exists anywhere: a delete of it is a
// no-op. Only in-memory filters are consulted; no disk is read.
//
// It holds a reference on the read state while it probes: the tables'
// filters live outside the heap, and the reference a table's metadata
// holds on its filter is dropped as soon as no live version names the
// table (internal/offheap, invariant 1: whoever reads the memory holds a
// reference). Without one, a compaction installing a new version between
// the proof's load of a filter and its probe could free the filter under
// it. The state is the current one, so every write acknowledged before
// Delete was called is in it (a memtable filter, or a table whose filter
// is known or counts as maybe).
func (d *DB) provablyAbsent(key []byte) bool {
	rs := d.loadReadState()
	if rs == nil {
		return false // closed: the write that follows reports it
	}
	defer rs.unref()
	if d.opts.IgnoreFilters {
		return false
	}
	// The tables before the memtables, though a read asks them after: the
	// answer does not depend on the order, and a key worth deleting is
	// usually old, found by the deepest level's filter, so the proof of
	// such a key ends without the active memtable's lock.
	h := filter.Hash(key)
	if may, _ := d.tablesMayContain(rs.version, 0, key, h, &d.stats.deleteProofProbes); may {
		return false
	}
	return !rs.mem.MayContainHash(h)
}

// tablesMayContain reports whether a table of v at level from or deeper
// may hold key: its key range covers key and its in-memory Bloom filter
// admits it. covered reports whether any table's range covered key at all.
// It never reads disk: it probes the filter each table's metadata holds
// (FileMetadata.Filter, set when a reader of the table opened, and kept
// when the table cache closes it), and a table never opened since Open
// counts as "maybe".
//
// The answer does not depend on the order of the probes, so it asks the
// deepest level first: with dynamic level targets the last level holds
// most of the keys (half or more, docs/compaction.md), and a key that
// exists is usually found there in one probe instead of one per level
// above it (BenchmarkDelete: 0.87 probes per delete of a present key).
func (d *DB) tablesMayContain(v *manifest.Version, from int, key []byte, h uint64, probes *atomic.Uint64) (may, covered bool) {
	// The probes are counted once per call, not once per probe: an atomic
	// add is a fifth of a proof's cost (BenchmarkDeleteProof).
	n := uint64(0)
	defer func() { probes.Add(n) }()
	// The tree-wide filter, when it answers, rules out whole levels in one
	// probe (tree_filter.go: it holds every key of each table of v, which
	// the caller keeps live).
	ta := d.treeLookup(h)
	ruledOut := false
	admits := func(f *manifest.FileMetadata) bool {
		covered = true
		if ruledOut {
			return false
		}
		may, probed := d.tableMayContain(f, h)
		if probed {
			n++
		}
		return may
	}
	for level := NumLevels - 1; level >= from; level-- {
		ruledOut = ta.rulesOut(level)
		if level == 0 {
			for _, f := range v.Levels[0] {
				if f.ContainsUserKey(key) && admits(f) {
					return true, true
				}
			}
			continue
		}
		if f := v.FindFile(level, key); f != nil && admits(f) {
			return true, true
		}
	}
	return false, covered
}

// tableMayContain reports whether f's filter admits h, and whether it
// was asked: a table never opened since Open, or any table when filters
// are ignored, is a "maybe" without a probe.
func (d *DB) tableMayContain(f *manifest.FileMetadata, h uint64) (may, probed bool) {
	if d.opts.IgnoreFilters {
		return true, false
	}
	if fl := d.knownFilter(f); fl != nil {
		return fl.MayContainHash(h), true
	}
	// Not opened since Open, or paged: only an open reader can vouch for
	// it, a paged one from the filter pages in the block cache.
	r, release, ok := d.tables.Peek(f.FileNum)
	if !ok {
		return true, false
	}
	defer release()
	d.recordFilter(f, r)
	return r.MayContainHash(h), true
}

// knownFilter is the filter f's metadata holds (FileMetadata.Filter), for
// a probe without the table cache; nil when none is recorded yet (or the
// table is paged), or when filters are ignored.
func (d *DB) knownFilter(f *manifest.FileMetadata) *filter.CacheLine {
	if d.opts.IgnoreFilters {
		return nil
	}
	return f.Filter()
}

// recordFilter keeps r's filter in f's metadata if r pins it, so the
// proofs ask it without the table cache, even once the cache has closed
// the table; its memory counts against Options.PinnedMetaLimit until the
// metadata lets go. A paged table's filter is asked through its reader.
func (d *DB) recordFilter(f *manifest.FileMetadata, r *sstable.Reader) {
	if fl, pinned := r.Filter(); pinned {
		f.SetFilter(fl)
	}
}

// loadTables opens tables in the table cache, so their filters are in
// memory for the reads that follow and the absent-key proofs (which never
// open a table) can count on them: before their edit for a flush and a
// WAL replayed by Open, after it for a compaction (reloadTables), and in
// the background after Open for the tables already there
// (loadInBackground). Until the version holds them, inLastLevel learns
// their level from d.loading; so does a table of Open's background load,
// whose level is then the one Open saw, as when Open loaded it. A failed
// open is left to the read that next needs the table to report.
func (d *DB) loadTables(metas []manifest.NewFile) {
	d.loadingMu.Lock()
	if d.loading == nil {
		d.loading = make(map[uint64]int)
	}
	for _, nf := range metas {
		d.loading[nf.Meta.FileNum] = nf.Level
	}
	d.loadingMu.Unlock()
	for _, nf := range metas {
		if _, release, err := d.table(nf.Meta); err == nil {
			release()
		}
	}
	d.loadingMu.Lock()
	for _, nf := range metas {
		delete(d.loading, nf.Meta.FileNum)
	}
	d.loadingMu.Unlock()
}

// tombstoneElider is the absent-key proof of flushes and compactions: a
// tombstone hides nothing when no table of v at level from or deeper
// covers its key (the bottom of the tree, for that key), or none of the
// filters of those that do admits it.
func (d *DB) tombstoneElider(v *manifest.Version, from int) compaction.Elider {
	return func(ukey []byte) (bool, compaction.DropReason) {
		may, covered := d.tablesMayContain(v, from, ukey, filter.Hash(ukey), &d.stats.mergeProofProbes)
		if !covered {
			return true, compaction.DropBottom
		}
		return !may, compaction.DropFilterProof
	}
}

// proofGate decides whether a Delete asks the filters to prove its key
// absent (provablyAbsent). The proof pays off only when it succeeds: a
// delete of a key that exists asks one table filter or more in vain, and
// in a DB whose filters outgrow the CPU caches that probe is a cache miss,
// a fifth of such a delete's CPU (kvbench deleterandom against
// -keep_absent_deletes). RocksDB removed its filter_deletes for that cost.
// So the gate keeps a credit: a proof that succeeds adds proofWinCredit
// (up to proofMaxCredit), one that fails takes one away, and while no
// credit is left only every proofSampleEvery-th delete asks, to notice
// when deletes of absent keys come back. The proof stays on as long as
// about one in proofWinCredit+1 succeeds.
//
// The credit is kept as a debt, so that the zero gate, a new DB's, proves
// every delete until proofs fail.
//
// Skipping a proof only writes a tombstone, which is always correct: the
// gate trades elisions for speed, never answers. It is a heuristic shared
// by concurrent deletes, and its updates may race; a lost update moves the
// credit by one.
type proofGate struct {
	debt    atomic.Int64  // proofMaxCredit minus the credit
	skipped atomic.Uint64 // deletes that did not ask; every proofSampleEvery-th is sampled
}

const (
	proofWinCredit   = 16
	proofMaxCredit   = 1024
	proofSampleEvery = 16
)

// skippedProofs is how many deletes did not ask: every one that found the
// gate closed, less the one in proofSampleEvery of them that asked.
func (g *proofGate) skippedProofs() uint64 {
	n := g.skipped.Load()
	return n - n/proofSampleEvery
}

// ask reports whether this delete should try the proof.
func (g *proofGate) ask() bool {
	if g.debt.Load() < proofMaxCredit {
		return true
	}
	return g.skipped.Add(1)%proofSampleEvery == 0
}

// record counts the outcome of a proof that was tried.
func (g *proofGate) record(proved bool) {
	switch d := g.debt.Load(); {
	case proved && d > 0:
		g.debt.Add(-min(d, proofWinCredit))
	case !proved && d < proofMaxCredit:
		g.debt.Add(1)
	}
}
