package sstable

import (
	"container/list"
	"fmt"
	"path/filepath"
	"sync"

	"github.com/monbandb/monban/internal/vfs"
)

// TableCache keeps up to maxOpen Readers open, least recently used first out,
// so that a DB with thousands of tables holds a bounded number of file
// descriptors and never re-reads a hot table's index and filter.
//
// Reference counting: the cache holds one reference to each reader it lists,
// and each Get hands out another, released by calling the returned func
// exactly once. A reader closes when its last reference goes, so one in use
// is never closed under its user — even if it is evicted meanwhile (the
// open-file count may then exceed maxOpen until users release).
// Safe for concurrent use.
type TableCache struct {
	fs         vfs.FS
	dir        string
	maxOpen    int
	readerOpts ReaderOptions

	mu     sync.Mutex
	tables map[uint64]*tableEntry
	lru    list.List // of *tableEntry, most recent at the front
	closed bool
}

type tableEntry struct {
	c       *TableCache
	fileNum uint64
	elem    *list.Element // nil once out of the cache
	refs    int           // guarded by c.mu
	ready   chan struct{} // closed when r/err are set
	r       *Reader
	err     error
	release func() // allocated once per entry, so Get allocates nothing
}

// NewTableCache returns a cache of readers of dir's tables; maxOpen < 1 is
// taken as 1. Every reader is opened with opts, FileNum and Name set per
// table.
func NewTableCache(fs vfs.FS, dir string, maxOpen int, opts ReaderOptions) *TableCache {
	return &TableCache{fs: fs, dir: dir, maxOpen: max(maxOpen, 1), readerOpts: opts, tables: map[uint64]*tableEntry{}}
}

// Get returns the reader of table fileNum, opening dir/TableFileName(fileNum)
// if needed, and a func that releases it. Concurrent Gets of one table open
// it once.
func (c *TableCache) Get(fileNum uint64) (*Reader, func(), error) {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil, nil, ErrClosed
	}
	e := c.tables[fileNum]
	if e != nil {
		e.refs++
		c.lru.MoveToFront(e.elem)
		c.mu.Unlock()
		<-e.ready
		if e.err != nil {
			e.release()
			return nil, nil, e.err
		}
		return e.r, e.release, nil
	}
	e = &tableEntry{c: c, fileNum: fileNum, refs: 2, ready: make(chan struct{})}
	e.release = e.unref
	e.elem = c.lru.PushFront(e)
	c.tables[fileNum] = e
	var victims []*tableEntry
	for c.lru.Len() > c.maxOpen {
		victims = append(victims, c.removeLocked(c.lru.Back().Value.(*tableEntry)))
	}
	c.mu.Unlock()
	for _, v := range victims {
		v.unref()
	}

	e.r, e.err = c.open(fileNum)
	close(e.ready)
	if e.err != nil {
		// Forget the failure so a later Get retries (the file may appear).
		c.mu.Lock()
		if c.tables[fileNum] == e {
			c.removeLocked(e)
			c.mu.Unlock()
			e.unref()
		} else {
			c.mu.Unlock()
		}
		e.unref()
		return nil, nil, e.err
	}
	return e.r, e.release, nil
}

func (c *TableCache) open(fileNum uint64) (*Reader, error) {
	name := filepath.Join(c.dir, TableFileName(fileNum))
	f, err := c.fs.Open(name)
	if err != nil {
		return nil, fmt.Errorf("sstable: open %s: %w", name, err)
	}
	opts := c.readerOpts
	opts.FileNum, opts.Name = fileNum, TableFileName(fileNum)
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

// unref drops one reference; the last one closes the reader.
func (e *tableEntry) unref() {
	c := e.c
	c.mu.Lock()
	e.refs--
	last := e.refs == 0
	if e.refs < 0 {
		c.mu.Unlock()
		panic(fmt.Sprintf("sstable: table %d released more often than acquired", e.fileNum))
	}
	c.mu.Unlock()
	if last && e.r != nil {
		e.r.Close()
	}
}

// Evict is called when table fileNum is deleted: it leaves the cache, closes
// once no longer in use, and its blocks leave the block cache.
func (c *TableCache) Evict(fileNum uint64) {
	c.mu.Lock()
	e := c.tables[fileNum]
	if e != nil {
		c.removeLocked(e)
	}
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
		all = append(all, c.removeLocked(c.lru.Front().Value.(*tableEntry)))
	}
	c.mu.Unlock()
	for _, e := range all {
		<-e.ready
		e.unref()
	}
	return nil
}
