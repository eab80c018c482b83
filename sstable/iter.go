package sstable

import (
	"bytes"
	"errors"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/cache"
)

// Iter walks a table's entries in internal-key order within the user-key
// bounds [lower, upper) (nil: unbounded). It is a two-level iterator: a
// position in the in-memory index, and a blockIter over the current data
// block, fetched through the block cache. It implements
// base.InternalIterator; it is not safe for concurrent use, and must not be
// used after its Reader is closed.
//
// Key and Value alias the current data block, which the iterator reads in
// place under its block-cache handle: it keeps the handle until it moves
// onto another block or closes, and a block's buffer is recycled only once
// every handle on it is released (internal/cache, invariant 5). That is
// why they are valid only until the next move: copy what you keep.
type Iter struct {
	r            *Reader
	lower, upper []byte
	idx          int          // current data block; meaningful while valid
	block        cache.Handle // of data block idx, which blk reads
	ic           indexCursor  // idx's index partition
	blk          blockIter
	keyBuf       []byte // where blockKey rebuilds a compact partition's keys
	ra           readahead
	valid        bool
	err          error
	closed       bool
	// salvage: First and Next step over a data block that fails its
	// checks, appending the error to lost, instead of stopping
	// (NewSalvageIter).
	salvage bool
	lost    []error
}

var _ base.InternalIterator = (*Iter)(nil)

// NewIter returns an unpositioned iterator. The bounds are not copied and
// must not change while it is in use.
func (r *Reader) NewIter(lower, upper []byte) *Iter {
	it := new(Iter)
	it.Init(r, lower, upper)
	return it
}

// NewSalvageIter returns an unbounded iterator whose First and Next step
// over a data block that fails its checks (damage: an error wrapping
// base.ErrCorruption) to the next one, where NewIter's would stop; Lost
// lists what it stepped over. Every entry it yields comes from a block
// that verified, in order. It is how Repair keeps the sound blocks of a
// damaged table rather than none. Any other error (the disk's) stops it
// as it stops any Iter; so does damage met moving backwards or seeking.
func (r *Reader) NewSalvageIter() *Iter {
	it := r.NewIter(nil, nil)
	it.salvage = true
	return it
}

// Lost returns the errors of the data blocks a salvage iterator stepped
// over, in table order.
func (it *Iter) Lost() []error { return it.lost }

// stepOver takes the iterator's error as damage stepped over, if it
// salvages and the error is damage, and reports whether it did.
func (it *Iter) stepOver() bool {
	if !it.salvage || !errors.Is(it.err, base.ErrCorruption) {
		return false
	}
	it.lost = append(it.lost, it.err)
	it.err = nil
	return true
}

// Init makes it the iterator NewIter(lower, upper) would return, reusing
// its key buffer: a caller that keeps its iterators (lsm pools them) opens
// one without allocating. REQUIRES: it is new or closed.
func (it *Iter) Init(r *Reader, lower, upper []byte) {
	it.blk.reset()
	it.ic.release()
	*it = Iter{r: r, lower: lower, upper: upper, blk: it.blk, keyBuf: it.keyBuf}
}

// maxTrailer sorts before every real trailer of a user key: (k, maxTrailer)
// is the smallest internal key with user key k.
var maxTrailer = base.SeekKey(nil, MaxSeqNum).Trailer

// loadBlock positions blk on data block i (unpositioned), releasing the
// block it was on.
func (it *Iter) loadBlock(i int) bool {
	it.idx = i // also on failure: the block its error is about
	it.blk.reset()
	it.block.Release()
	it.block = cache.Handle{}
	if err := it.r.holdPart(&it.ic, it.r.ix.partOf(i)); err != nil {
		return it.fail(err)
	}
	h := it.r.blockHandle(&it.ic, i)
	it.ra.loaded(i)
	b, from, err := it.r.dataBlock(i, h, &it.ra)
	it.r.stats.block(from, h.length)
	it.block = b
	if err == nil {
		err = it.blk.init(b.Block())
	}
	if err != nil {
		return it.fail(err)
	}
	return true
}

// blockKey is block b's index key. REQUIRES: as Reader.blockKey.
func (it *Iter) blockKey(b int) indexKey { return it.r.blockKey(&it.ic, b, &it.keyBuf) }

// blockErr wraps a fault of the current block.
func (it *Iter) blockErr(err error) error {
	return it.r.blockErr(it.idx, it.r.blockHandle(&it.ic, it.idx), err)
}

func (it *Iter) fail(err error) bool {
	if it.err == nil {
		it.err = err
	}
	it.valid = false
	return false
}

// settle finishes a move: checks the block iterator for errors and the
// entry against the bounds (dir > 0: upper, dir < 0: lower).
func (it *Iter) settle(ok bool, dir int) bool {
	if it.blk.err != nil {
		return it.fail(it.blockErr(it.blk.err))
	}
	if !ok {
		it.valid = false
		return false
	}
	if len(it.blk.key) < base.TrailerLen {
		return it.fail(it.blockErr(errBlock))
	}
	uk := userKey(it.blk.key)
	if dir > 0 && it.upper != nil && bytes.Compare(uk, it.upper) >= 0 ||
		dir < 0 && it.lower != nil && bytes.Compare(uk, it.lower) < 0 {
		it.valid = false
		return false
	}
	it.valid = true
	return true
}

// SeekGE moves to the first entry >= key (and >= lower).
func (it *Iter) SeekGE(key InternalKey) bool {
	if it.err != nil || it.closed {
		return false
	}
	ukey, trailer := key.UserKey, key.Trailer
	if it.lower != nil && bytes.Compare(ukey, it.lower) < 0 {
		ukey, trailer = it.lower, maxTrailer
	}
	if it.upper != nil && bytes.Compare(ukey, it.upper) >= 0 {
		it.valid = false // nothing in bounds: no read
		return false
	}
	i, err := it.r.seekIndex(&it.ic, 0, ukey, trailer)
	if err != nil {
		return it.fail(err)
	}
	if i == it.r.ix.numBlocks() {
		it.valid = false
		return false
	}
	if !it.loadBlock(i) {
		return false
	}
	ok := it.blk.seekGE(ukey, trailer)
	if !ok && it.blk.err == nil {
		// The key lies between the block's last key and its separator.
		return it.nextBlock()
	}
	return it.settle(ok, +1)
}

// SeekLT moves to the last entry < key (and < upper).
func (it *Iter) SeekLT(key InternalKey) bool {
	if it.err != nil || it.closed {
		return false
	}
	ukey, trailer := key.UserKey, key.Trailer
	if it.upper != nil && bytes.Compare(ukey, it.upper) >= 0 {
		ukey, trailer = it.upper, maxTrailer
	}
	if it.lower != nil && bytes.Compare(ukey, it.lower) < 0 {
		it.valid = false // nothing in bounds: no read
		return false
	}
	i, err := it.r.seekIndex(&it.ic, 0, ukey, trailer)
	if err != nil {
		return it.fail(err)
	}
	if i == it.r.ix.numBlocks() {
		return it.lastOf(i - 1)
	}
	if !it.loadBlock(i) {
		return false
	}
	ok := it.blk.seekLT(ukey, trailer)
	if !ok && it.blk.err == nil {
		return it.prevBlock()
	}
	return it.settle(ok, -1)
}

// First moves to the first entry >= lower.
func (it *Iter) First() bool {
	if it.lower != nil {
		return it.SeekGE(InternalKey{UserKey: it.lower, Trailer: maxTrailer})
	}
	if it.err != nil || it.closed || it.r.ix.numBlocks() == 0 {
		it.valid = false
		return false
	}
	if !it.loadBlock(0) {
		return it.stepOver() && it.nextBlock()
	}
	ok := it.blk.first()
	if !ok && it.blk.err == nil || !it.settle(ok, +1) && it.stepOver() {
		return it.nextBlock()
	}
	return it.valid
}

// Last moves to the last entry < upper.
func (it *Iter) Last() bool {
	if it.upper != nil {
		return it.SeekLT(InternalKey{UserKey: it.upper, Trailer: maxTrailer})
	}
	if it.err != nil || it.closed {
		return false
	}
	return it.lastOf(it.r.ix.numBlocks() - 1)
}

func (it *Iter) lastOf(i int) bool {
	if i < 0 {
		it.valid = false
		return false
	}
	if !it.loadBlock(i) {
		return false
	}
	ok := it.blk.last()
	if !ok && it.blk.err == nil {
		return it.prevBlock()
	}
	return it.settle(ok, -1)
}

// Next moves to the next entry. REQUIRES: Valid().
func (it *Iter) Next() bool {
	if !it.valid {
		return false
	}
	if ok := it.blk.next(); ok || it.blk.err != nil {
		if it.settle(ok, +1) || !it.stepOver() {
			return it.valid
		}
	}
	return it.nextBlock()
}

// nextBlock moves to the first entry of the following blocks, skipping empty
// ones; it stops without reading when the current block's index key
// reaches upper: that key is below the next block's first.
func (it *Iter) nextBlock() bool {
	for {
		if it.upper != nil && bytes.Compare(it.blockKey(it.idx).ukey, it.upper) >= 0 ||
			it.idx+1 >= it.r.ix.numBlocks() {
			it.valid = false
			return false
		}
		if !it.loadBlock(it.idx + 1) {
			if it.stepOver() {
				continue
			}
			return false
		}
		if ok := it.blk.first(); ok || it.blk.err != nil {
			if it.settle(ok, +1) || !it.stepOver() {
				return it.valid
			}
		}
	}
}

// Prev moves to the previous entry. REQUIRES: Valid().
func (it *Iter) Prev() bool {
	if !it.valid {
		return false
	}
	if ok := it.blk.prev(); ok || it.blk.err != nil {
		return it.settle(ok, -1)
	}
	return it.prevBlock()
}

// prevBlock moves to the last entry of the preceding blocks; it stops
// without reading when the previous block's index key, at or above its
// last key, is below lower.
func (it *Iter) prevBlock() bool {
	for {
		if it.idx == 0 || it.lower != nil && bytes.Compare(it.blockKey(it.idx-1).ukey, it.lower) < 0 {
			it.valid = false
			return false
		}
		if !it.loadBlock(it.idx - 1) {
			return false
		}
		if ok := it.blk.last(); ok || it.blk.err != nil {
			return it.settle(ok, -1)
		}
	}
}

// Valid reports whether the iterator is on an entry.
func (it *Iter) Valid() bool { return it.valid }

// Key returns the current entry's key; valid until the iterator moves.
// REQUIRES: Valid().
func (it *Iter) Key() InternalKey {
	k, _ := base.DecodeInternalKey(it.blk.key)
	return k
}

// Value returns the current entry's value; valid until the iterator moves.
// REQUIRES: Valid().
func (it *Iter) Value() []byte { return it.blk.val }

// Error returns the error that stopped the iterator, if any.
func (it *Iter) Error() error { return it.err }

// Close releases the iterator's block and returns its error. Key and
// Value are invalid from then on. It also drops the Reader, which an
// iterator kept for reuse would otherwise keep from the collector.
func (it *Iter) Close() error {
	it.closed, it.valid, it.r = true, false, nil
	it.blk.reset()
	it.block.Release()
	it.block = cache.Handle{}
	it.ic.release()
	it.ra.release()
	return it.err
}
