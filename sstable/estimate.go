package sstable

import "bytes"

// EstimateBytes returns the bytes of the data blocks that may hold user
// keys in [lo, hi): from the first block whose last key is at or above lo
// up to, not including, the first whose last key is at or above hi (or
// through the last block, when hi is past them all). The two ends are
// blocks the range may cover a little or a lot of; counting one and not
// the other errs by at most a block either way, where counting both would
// err by up to two blocks one way and weigh a tombstone between two keys
// a whole block. It reads the index only — a paged table's at most
// two partitions, through the block cache — and no data block. The
// engine weighs a range tombstone by the bytes below it that it covers
// (compaction.RangeDelBytes), and asks this of the tables the tombstone
// covers in part.
func (r *Reader) EstimateBytes(lo, hi []byte) (uint64, error) {
	n := r.ix.numBlocks()
	if n == 0 || bytes.Compare(lo, hi) >= 0 {
		return 0, nil
	}
	var c indexCursor
	defer c.release()
	first, err := r.seekIndex(&c, 0, lo, maxTrailer)
	if err != nil || first == n {
		return 0, err
	}
	start := r.blockHandle(&c, first).offset
	last, err := r.seekIndex(&c, first, hi, maxTrailer)
	if err != nil {
		return 0, err
	}
	if last == n {
		if err := r.holdPart(&c, r.ix.partOf(n-1)); err != nil {
			return 0, err
		}
		h := r.blockHandle(&c, n-1)
		return h.offset + h.length + blockTrailerLen - start, nil
	}
	return r.blockHandle(&c, last).offset - start, nil
}
