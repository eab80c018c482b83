package lsm

import (
	"container/list"
	"sync"
)

// recentKeyHashes keeps the key-hash sets of the tables the DB wrote
// last, as their writers handed them over (sstable.Writer.KeyHashes), so
// that the tree-wide filter files a new table (enter), pairs it as a
// giver, and takes an L0 table out (leave) without reading back and
// decoding a block it wrote moments before (docs/design.md, "The fill",
// has what that saved). The sets are
// what the blocks hold, so a set from here and one read from the table
// are the same; a set is dropped when its table is deleted, or when
// newer ones need its room.
//
// It holds at most recentKeyHashesBytes of sets, least recently used
// first out; a set larger than that is not kept at all. Safe for
// concurrent use.
type recentKeyHashes struct {
	mu    sync.Mutex
	sets  map[uint64]*list.Element // by table number
	order list.List                // of *recentSet, most recently used first
	bytes int
}

type recentSet struct {
	fileNum uint64
	hashes  []uint64
}

// recentKeyHashesBytes bounds the sets kept: 512Ki hashes, an L0 of
// twenty flushes of 4 MiB memtables of 100-byte values with room to
// spare, or a few tables of a base level. A variable for the tests.
var recentKeyHashesBytes = 4 << 20

func newRecentKeyHashes() *recentKeyHashes {
	return &recentKeyHashes{sets: make(map[uint64]*list.Element)}
}

// add keeps hashes, which the cache now owns, as table fileNum's set.
func (c *recentKeyHashes) add(fileNum uint64, hashes []uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(fileNum)
	size := 8 * cap(hashes)
	if size > recentKeyHashesBytes {
		return
	}
	c.sets[fileNum] = c.order.PushFront(&recentSet{fileNum: fileNum, hashes: hashes})
	c.bytes += size
	for c.bytes > recentKeyHashesBytes {
		c.dropLocked(c.order.Back().Value.(*recentSet).fileNum)
	}
}

// appendTo appends table fileNum's set to dst if it is kept, and reports
// whether it was.
func (c *recentKeyHashes) appendTo(dst []uint64, fileNum uint64) ([]uint64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.sets[fileNum]
	if !ok {
		return dst, false
	}
	c.order.MoveToFront(e)
	return append(dst, e.Value.(*recentSet).hashes...), true
}

// drop forgets table fileNum's set: its table is deleted.
func (c *recentKeyHashes) drop(fileNum uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropLocked(fileNum)
}

func (c *recentKeyHashes) dropLocked(fileNum uint64) {
	e, ok := c.sets[fileNum]
	if !ok {
		return
	}
	c.bytes -= 8 * cap(e.Value.(*recentSet).hashes)
	c.order.Remove(e)
	delete(c.sets, fileNum)
}
