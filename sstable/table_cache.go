package sstable

import (
	"container/list"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/monbandb/monban/vfs"
)

// TableCache keeps up to maxOpen Readers open, so that a DB with thousands
// of tables holds a bounded number of file descriptors and never re-reads a
// hot table's index and filter.
//
// Every point read asks it for a table, several times per Get, so a hit
// takes only the read lock and two atomic operations; the list order is
// changed only when a table is opened. Eviction is CLOCK-like: a hit sets
// the entry's referenced bit, and the eviction scan from the least recently
// opened end gives a referenced entry a second chance instead of closing it.
//
// A reader the cache closes to make room leaves its verified meta blocks
// in the block cache (Reader.stashMeta), so that reopening the table
// reads its footer and nothing else while the block cache keeps them; a
// table closed because it was deleted (Evict), or by Close, leaves
// nothing.
//
// Reference counting: the cache holds one reference to each reader it
// lists, and each Get hands out another, released by calling the returned
// func exactly once. A reader closes when its last reference goes, so one
// in use is never closed under its user — even if it is evicted meanwhile
// (the open-file count may then exceed maxOpen until users release).
// Safe for concurrent use.
type TableCache struct {
	fs         vfs.FS
	dir        string
	maxOpen    int
	readerOpts ReaderOptions

	mu     sync.RWMutex
	tables map[uint64]*tableEntry
	lru    list.List // of *tableEntry, most recently opened or spared at the front
	closed bool
	// stashed are the tables that left their meta in the block cache,
	// which Close deletes: the block cache may outlive the table cache,
	// and the memory of a meta it still held would wait for the
	// collector then.
	stashed map[uint64]struct{}
}

type tableEntry struct {
	c       *TableCache
	fileNum uint64
	elem    *list.Element // guarded by c.mu (write); nil once out of the cache
	// refs counts the cache's reference (while listed) and every Get's.
	// Invariant: an entry in c.tables has refs >= 1, so a Get holding the
	// read lock may add to it without the count ever rising from zero.
	refs       atomic.Int32
	referenced atomic.Bool
	forget     atomic.Bool // set before dropping the cache's reference when the table is deleted, or the cache closed

	opened  atomic.Bool   // r and err are set; the fast path's check
	ready   chan struct{} // closed when opened is set, for waiters
	r       *Reader
	err     error
	release func() // allocated once per entry, so Get allocates nothing
}

// TableRef names a table and what the manifest records of it: the cache
// opens file FileNum expecting Size bytes and table id TableID
// (ReaderOptions.ExpectSize, ExpectTableID; 0 checks nothing).
type TableRef struct {
	FileNum, Size, TableID uint64
}

// NewTableCache returns a cache of readers of dir's tables; maxOpen < 1 is
// taken as 1. Every reader is opened with opts, FileNum, Name, ExpectSize
// and ExpectTableID set per table.
func NewTableCache(fs vfs.FS, dir string, maxOpen int, opts ReaderOptions) *TableCache {
	return &TableCache{fs: fs, dir: dir, maxOpen: max(maxOpen, 1), readerOpts: opts, tables: map[uint64]*tableEntry{}, stashed: map[uint64]struct{}{}}
}

// Get returns the reader of table t.FileNum, opening
// dir/TableFileName(t.FileNum) if needed, and a func that releases it.
// Concurrent Gets of one table open it once. The reader is checked against
// t's size and id even when it is open already (a table is cached by file
// number alone), so Get never returns a table other than the one t names;
// a mismatch wraps base.ErrCorruption. A failed open is not cached: a later
// Get tries again.
func (c *TableCache) Get(t TableRef) (*Reader, func(), error) {
	fileNum := t.FileNum
	c.mu.RLock()
	closed, e := c.closed, c.tables[fileNum]
	if e != nil {
		e.refs.Add(1)
		e.referenced.Store(true)
	}
	c.mu.RUnlock()
	switch {
	case closed:
		return nil, nil, ErrClosed
	case e != nil:
		return e.wait(t)
	}

	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, nil, ErrClosed
	}
	if e = c.tables[fileNum]; e != nil { // opened meanwhile
		e.refs.Add(1)
		c.mu.Unlock()
		return e.wait(t)
	}
	e = &tableEntry{c: c, fileNum: fileNum, ready: make(chan struct{})}
	e.refs.Store(2)
	e.release = e.unref
	e.elem = c.lru.PushFront(e)
	c.tables[fileNum] = e
	victims := c.evictLocked()
	c.mu.Unlock()
	for _, v := range victims {
		v.unref()
	}

	e.r, e.err = c.open(t)
	e.opened.Store(true)
	close(e.ready)
	if e.err != nil {
		// Forget the failure so a later Get retries (the file may appear).
		c.mu.Lock()
		mine := c.tables[fileNum] == e
		if mine {
			c.removeLocked(e)
		}
		c.mu.Unlock()
		if mine {
			e.unref()
		}
		e.unref()
		return nil, nil, e.err
	}
	return e.r, e.release, nil
}

// wait returns e's reader once it is open and checked against t, holding
// the reference the caller took.
func (e *tableEntry) wait(t TableRef) (*Reader, func(), error) {
	if !e.opened.Load() {
		<-e.ready
	}
	err := e.err
	if err == nil {
		p := e.r.Properties()
		if err = checkSize(e.r.name, p.FileSize, t.Size); err == nil {
			err = checkTableID(e.r.name, p.TableID, t.TableID)
		}
	}
	if err != nil {
		e.unref()
		return nil, nil, err
	}
	return e.r, e.release, nil
}

// evictLocked takes entries out of the cache until it holds maxOpen,
// sparing (once) those hit since they were last passed over. The caller
// drops the cache's reference to each victim, outside c.mu.
func (c *TableCache) evictLocked() []*tableEntry {
	var victims []*tableEntry
	// Each spared entry loses its bit, so two passes always find victims.
	for scans := 2 * c.lru.Len(); c.lru.Len() > c.maxOpen && scans > 0; scans-- {
		e := c.lru.Back().Value.(*tableEntry)
		if e.referenced.Swap(false) {
			c.lru.MoveToFront(e.elem)
			continue
		}
		victims = append(victims, c.removeLocked(e))
	}
	return victims
}

func (c *TableCache) open(t TableRef) (*Reader, error) {
	name := filepath.Join(c.dir, TableFileName(t.FileNum))
	f, err := c.fs.Open(name)
	if err != nil {
		return nil, fmt.Errorf("sstable: open %s: %w", name, err)
	}
	opts := c.readerOpts
	opts.FileNum, opts.Name = t.FileNum, TableFileName(t.FileNum)
	opts.ExpectSize, opts.ExpectTableID = t.Size, t.TableID
	return Open(f, opts)
}

// removeLocked takes e out of the cache; the caller then drops the cache's
// reference with unref, outside c.mu.
func (c *TableCache) removeLocked(e *tableEntry) *tableEntry {
	c.lru.Remove(e.elem)
	e.elem = nil
	delete(c.tables, e.fileNum)
	return e
}

// unref drops one reference; the last one closes the reader, leaving its
// meta in the block cache unless the table was deleted or the cache
// closed.
func (e *tableEntry) unref() {
	switch n := e.refs.Add(-1); {
	case n == 0 && e.r != nil:
		if !e.forget.Load() {
			e.c.stash(e)
		}
		e.r.Close()
	case n < 0:
		panic(fmt.Sprintf("sstable: table %d released more often than acquired", e.fileNum))
	}
}

// stash leaves e's meta in the block cache, unless the cache has closed
// meanwhile (Close would not see it to delete it).
func (c *TableCache) stash(e *tableEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.readerOpts.Cache.Capacity() == 0 {
		return
	}
	e.r.stashMeta()
	c.stashed[e.fileNum] = struct{}{}
}

// Peek returns the reader of table fileNum and a func that releases it, if
// the table is open already; it never opens a file, so it never reads disk.
// The absent-key proofs use it: a table that is not open cannot vouch for a
// key, and the caller treats it as "maybe".
func (c *TableCache) Peek(fileNum uint64) (*Reader, func(), bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	e := c.tables[fileNum]
	if c.closed || e == nil || !e.opened.Load() || e.err != nil {
		return nil, nil, false
	}
	e.refs.Add(1)
	e.referenced.Store(true)
	return e.r, e.release, true
}

// Evict is called when table fileNum is deleted: it leaves the cache, closes
// once no longer in use, and its blocks leave the block cache.
func (c *TableCache) Evict(fileNum uint64) {
	c.mu.Lock()
	e := c.tables[fileNum]
	if e != nil {
		c.removeLocked(e)
		e.forget.Store(true)
	}
	delete(c.stashed, fileNum)
	c.mu.Unlock()
	if e != nil {
		e.unref()
	}
	c.readerOpts.Cache.EvictFile(fileNum)
}

// Close drops every cached reader; readers still in use close when
// released. Later Gets fail with ErrClosed.
func (c *TableCache) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return ErrClosed
	}
	c.closed = true
	var all []*tableEntry
	for c.lru.Len() > 0 {
		e := c.removeLocked(c.lru.Front().Value.(*tableEntry))
		e.forget.Store(true)
		all = append(all, e)
	}
	stashed := c.stashed
	c.stashed = nil
	c.mu.Unlock()
	for _, e := range all {
		<-e.ready
		e.unref()
	}
	for fileNum := range stashed {
		c.readerOpts.Cache.Delete(fileNum, metaOffset)
	}
	return nil
}
