package main

import (
	"path/filepath"
	"sync"
	"sync/atomic"

	"github.com/monbandb/monban/lsm"
	"github.com/monbandb/monban/vfs"
)

// tableReads is the DB's file system, counting the reads of table files.
// lsm.Stats counts the data blocks Gets read but not those iterators read,
// so the iterator workloads take theirs from here: sstable.Reader reads
// each block, data or a paged table's index partition or filter page, in
// one ReadAt, and Stats counts the latter (MetaBlocksRead). Blocks an
// iterator finds in the block cache reach neither.
type tableReads struct {
	vfs.FS
	reads, bytes atomic.Uint64
	files        sync.Map // a table's file name ("000009.sst") -> *atomic.Uint64, its reads
}

func (f *tableReads) Open(name string) (vfs.File, error) {
	file, err := f.FS.Open(name)
	if err != nil || filepath.Ext(name) != ".sst" {
		return file, err
	}
	n, _ := f.files.LoadOrStore(filepath.Base(name), new(atomic.Uint64))
	return &countedFile{File: file, all: f, file: n.(*atomic.Uint64)}, nil
}

// fileReads returns the reads of table file name ("000009.sst") so far.
func (f *tableReads) fileReads(name string) uint64 {
	if n, ok := f.files.Load(name); ok {
		return n.(*atomic.Uint64).Load()
	}
	return 0
}

type countedFile struct {
	vfs.File
	all  *tableReads
	file *atomic.Uint64
}

func (f *countedFile) ReadAt(p []byte, off int64) (int, error) {
	f.all.reads.Add(1)
	f.all.bytes.Add(uint64(len(p)))
	f.file.Add(1)
	return f.File.ReadAt(p, off)
}

// scanReads sets rd's data-block figures, which readsFrom took from
// Stats' Get counters, to the table reads over the window w less the
// paged index and filter blocks d counts: the data blocks read from files.
// From the cache is n/a: no counter sees those. The level rows go: their
// probes and blocks are Gets', none here, and Stats does not split
// iterators' reads or prefix and range probes by level. The caller adds
// what its filter did (reads.Prefixes, reads.Ranges).
func (b *bench) scanReads(rd *reads, d lsm.Stats, w window, ops int64) {
	blocks := b.files.reads.Load() - w.tableReads - d.MetaBlocksRead
	rd.BlocksFromFilePerOp, rd.BlocksFromCachePerOp = perOp(blocks, ops), nil
	rd.BytesReadPerOp = perOp(b.files.bytes.Load()-w.tableBytes-d.MetaBytesRead, ops)
	rd.blocks = blocks
	rd.Levels = []levelRead{}
}
