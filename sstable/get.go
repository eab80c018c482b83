package sstable

import (
	"bytes"
	"fmt"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
)

// Get looks up the newest version of ukey with a sequence number <= seq.
// hash must be filter.Hash(ukey), computed once by the caller for all
// tables. found reports that such a version exists; kind says whether it is
// a value or a tombstone. The value is a fresh copy, the caller's to keep
// (nil for a tombstone); nothing else is allocated on a block-cache hit.
// Get fills l (not nil) with what it did, and counts it in the Reader's
// ReadStats.
//
// The sub-steps, lettered as in docs/read-path.md: they are what steps 3
// (an L0 table) and 4 (a deeper level's table) of lsm/get.go do in each
// table, so 3b is an L0 table's filter and 4d a deeper table's data block.
//
//	a. key range: outside [Smallest, Largest] the table cannot hold ukey.
//	b. filter: "no" is certain; the read ends without touching the disk.
//	c. index: binary search for the first block whose index key (its last
//	   key, or a separator above it and below the next block) is >= the
//	   seek key (ukey, seq).
//	d. data block: from the block cache, else the file; seek in it.
func (r *Reader) Get(ukey []byte, hash uint64, seq SeqNum, l *Lookup) (value []byte, kind Kind, found bool, err error) {
	if r.closed.Load() {
		*l = Lookup{}
		return nil, 0, false, ErrClosed
	}
	// a. Key range.
	p := &r.props
	if p.NumEntries == 0 || bytes.Compare(ukey, p.Smallest.UserKey) < 0 || bytes.Compare(ukey, p.Largest.UserKey) > 0 {
		*l = Lookup{} // nothing consulted, nothing to count
		return nil, 0, false, nil
	}
	// b. Filter. A Lookup that Probe ends holds no block to count.
	if may, err := r.Probe(hash, l); err != nil || !may {
		r.stats.countFilter(l)
		return nil, 0, false, err
	}
	value, kind, found, err = r.Find(ukey, seq, l)
	r.stats.count(l)
	return value, kind, found, err
}

// Probe is sub-step b of Get, for a caller that found the key in the
// table's key range itself and counts from its Lookups (lsm): the filter's
// answer for hash, reading a paged table's filter page through the block
// cache if need be; true for a table without a filter, or with filters
// ignored. false is certain. It records the probe in l, as a lookup the
// filter ended when it says false, and counts nothing.
//
// Probe stays within the Go inliner's budget, so that Get's filter step
// costs no call beyond the filter's own: its body is one call and the
// record, no more (go build -gcflags=-m=2 ./sstable prints its cost;
// BenchmarkGet/absent/filter-no measures the step).
func (r *Reader) Probe(hash uint64, l *Lookup) (may bool, err error) {
	may, err = r.mayContain(hash)
	*l = Lookup{FilterAsked: r.useFilter}
	if !may {
		l.Outcome = OutcomeFilteredOut
	}
	return
}

// MayContainHashes is sub-step b for a batch of keys a caller has already
// found in the table's key range: maybe[i] reports whether the filter
// admits hashes[i] (true for every key of a table without a filter, or
// with filters ignored). It probes the keys' cache lines together
// (filter.CacheLine.MayContainHashes) and counts nothing, as Probe. A
// paged table probes one key at a time, and a filter page it fails to
// read answers "maybe", leaving the error to the data-block read that
// follows. maybe must be as long as hashes.
func (r *Reader) MayContainHashes(hashes []uint64, maybe []bool) {
	switch {
	case !r.useFilter:
		for i := range hashes {
			maybe[i] = true
		}
	case r.filterPaged:
		for i, h := range hashes {
			maybe[i], _ = r.pagedMayContain(h, false)
		}
	default:
		r.filter.MayContainHashes(hashes, maybe)
	}
}

// Find is sub-steps c and d of Get, for a key in the table's range that
// its filter admitted (Probe, MayContainHashes, or the caller's copy of
// the filter): the same results, and l records the key as in range and
// admitted by the filter the table has. It counts nothing: the caller
// counts from l.
func (r *Reader) Find(ukey []byte, seq SeqNum, l *Lookup) (value []byte, kind Kind, found bool, err error) {
	var cur BlockCursor
	defer cur.Release()
	return r.FindNext(ukey, seq, l, &cur)
}

// BlockCursor holds the data block a lookup of FindNext read, pinned, for
// the next, and the index partition that located it. The zero value holds
// none.
type BlockCursor struct {
	block cache.Handle
	index int // the block's index in its table, meaningful while held
	held  bool
	ic    indexCursor
}

// Release lets the held block and partition go; the cursor then holds
// none.
func (c *BlockCursor) Release() {
	c.ic.release()
	if c.held {
		c.block.Release()
		*c = BlockCursor{}
	}
}

// FindNext is Find for one of a run of keys looked up in this table in
// ascending order (a MultiGet's): cur keeps the data block the last of
// them read, and a key that lies in the same block reads it again neither
// from the file nor from the block cache (BlockFromCursor). The caller
// releases cur once the run is done.
func (r *Reader) FindNext(ukey []byte, seq SeqNum, l *Lookup, cur *BlockCursor) (value []byte, kind Kind, found bool, err error) {
	*l = Lookup{FilterAsked: r.useFilter}
	if r.closed.Load() {
		return nil, 0, false, ErrClosed
	}
	// c. Index. The seek trailer sorts before every version <= seq. A key
	// above the last one looked up lies in its block or a later one.
	trailer := base.SeekKey(nil, seq).Trailer
	from := 0
	if cur.held {
		from = cur.index
	}
	i, err := r.seekIndex(&cur.ic, from, ukey, trailer)
	if err != nil {
		return nil, 0, false, err
	}
	// Whether the table holds a newer version of ukey just before the seek
	// position. When that position starts block i, the previous entry is
	// block i-1's last key: its index key when that is whole, and of a
	// smaller user key when it is a bare separator (invariant 4): no
	// extra read.
	prevIsUkey := func() bool { return i > 0 && r.endsWithVersionOf(&cur.ic, i-1, ukey) }
	if i == r.ix.numBlocks() {
		l.notFound(prevIsUkey())
		return nil, 0, false, nil
	}
	// d. Data block, read in place under the cursor's handle: the value is
	// copied out before the cursor lets the buffer go.
	h := r.blockHandle(&cur.ic, i)
	l.Block, l.Offset, l.Length, l.From = i, h.offset, h.length, BlockFromCursor
	if !cur.held || cur.index != i {
		if cur.held {
			cur.block.Release()
		}
		block, from, err := r.dataBlock(i, h, nil)
		l.From = from
		if err != nil {
			cur.held = false
			return nil, 0, false, err
		}
		cur.block, cur.index, cur.held = block, i, true
	}
	it, _ := r.scratch.Get().(*blockIter)
	if it == nil {
		it = new(blockIter)
	}
	defer func() {
		it.reset() // drop the view of the block before its buffer goes
		r.scratch.Put(it)
	}()
	if err := it.init(cur.block.Block()); err != nil {
		return nil, 0, false, r.blockErr(i, h, err)
	}
	ok := it.seekGE(ukey, trailer)
	if it.err != nil {
		return nil, 0, false, r.blockErr(i, h, it.err)
	}
	if !ok || !bytes.Equal(userKey(it.key), ukey) {
		newer := it.prevSameUser
		if !it.prevSeen {
			newer = prevIsUkey()
		}
		l.notFound(newer)
		return nil, 0, false, nil
	}
	ik, _ := base.DecodeInternalKey(it.key) // length checked by seekGE
	if !ik.Kind().Valid() {
		return nil, 0, false, r.blockErr(i, h, errBlock)
	}
	l.Outcome, l.Seq = OutcomeTombstone, ik.Seq()
	if ik.Kind() == KindSet {
		l.Outcome = OutcomeFound
		value = make([]byte, len(it.val))
		copy(value, it.val)
	}
	return value, ik.Kind(), true, nil
}

// endsWithVersionOf reports whether block b's last key has user key ukey,
// from b's index key. REQUIRES: as blockKey.
func (r *Reader) endsWithVersionOf(c *indexCursor, b int, ukey []byte) bool {
	var room [64]byte // where a compact partition rebuilds the key: no allocation for short keys
	buf := room[:0]
	return r.blockKey(c, b, &buf).isVersionOf(ukey)
}

// notFound ends a lookup that passed the filter and found no visible
// version: a false positive of the filter, if one was asked, unless newer
// versions of the key exist.
func (l *Lookup) notFound(newerExists bool) {
	l.Outcome = OutcomeNoVersion
	if newerExists {
		l.Outcome = OutcomeNotVisible
	}
}

func (r *Reader) blockErr(i int, h handle, err error) error {
	return fmt.Errorf("sstable %s: data block %d at %d: %w", r.name, i, h.offset, err)
}

// userKey strips the trailer of an encoded internal key (len >= TrailerLen).
func userKey(enc []byte) []byte { return enc[:len(enc)-base.TrailerLen] }
