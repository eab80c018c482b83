package main

import (
	"path/filepath"
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
}

func (f *tableReads) Open(name string) (vfs.File, error) {
	file, err := f.FS.Open(name)
	if err != nil || filepath.Ext(name) != ".sst" {
		return file, err
	}
	return &countedFile{File: file, counts: f}, nil
}

type countedFile struct {
	vfs.File
	counts *tableReads
}

func (f *countedFile) ReadAt(p []byte, off int64) (int, error) {
	f.counts.reads.Add(1)
	f.counts.bytes.Add(uint64(len(p)))
	return f.File.ReadAt(p, off)
}

// scanReads sets rd's data-block figures, which readsFrom took from
// Stats' Get counters, to the table reads over the window w less the
// paged index and filter blocks d counts: the data blocks read from files.
// From the cache is n/a: no counter sees those.
func (b *bench) scanReads(rd *reads, d lsm.Stats, w window, ops int64) {
	blocks := b.files.reads.Load() - w.tableReads - d.MetaBlocksRead
	rd.BlocksFromFilePerOp, rd.BlocksFromCachePerOp = perOp(blocks, ops), nil
	rd.BytesReadPerOp = perOp(b.files.bytes.Load()-w.tableBytes-d.MetaBytesRead, ops)
	rd.blocks = blocks
	rd.Prefixes = &prefixReads{Probes: d.PrefixProbes, Skips: d.PrefixSkips}
}
