package lsm

import (
	"math/rand/v2"

	"github.com/monbandb/monban/internal/keyspan"
	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/sstable"
)

// tableWriter is one table being written by a flush or a compaction.
type tableWriter struct {
	d   *DB
	num uint64
	w   *sstable.Writer
}

// newTableWriter starts a table whose filter gets bitsPerKey
// (filterBitsPerKey). It is written under its temporary name
// (manifest.KindTableTemp) and takes its table name once whole and
// synced, so that a table-named file no manifest names is a whole table,
// and Open deletes none it cannot read (checkStrayTables).
func (d *DB) newTableWriter(bitsPerKey float64) (*tableWriter, error) {
	num := d.vs.NextFileNum()
	f, err := d.fs.Create(d.path(manifest.KindTableTemp, num))
	if err != nil {
		return nil, err
	}
	w := sstable.NewWriter(f, sstable.WriterOptions{
		BlockSize: d.opts.BlockSize, BloomBitsPerKey: bitsPerKey, TableID: newID(), DBID: d.dbID,
		Compression: d.opts.Compression == SnappyCompression, Split: d.opts.Split, RangeFilter: d.opts.RangeFilter,
		KeyHashes: d.opts.FilterScope == TreeWide,
	})
	return &tableWriter{d: d, num: num, w: w}, nil
}

// newID draws an identity, random and nonzero: a table's, so that a table
// file put in another's place — swapped, restored from an old backup, or
// left by a DB that reused its file numbers — never passes the check
// against the manifest, which a file number alone could not tell apart;
// and a DB's, which its WALs begin with, for the same check of another
// DB's WAL (walIdentity).
func newID() uint64 {
	for {
		if id := rand.Uint64(); id != 0 {
			return id
		}
	}
}

// finish completes the table with its range tombstones spans, syncs it,
// gives it its table name and syncs that, and returns its metadata — nil,
// with the file removed, if it is empty.
func (t *tableWriter) finish(spans keyspan.Spans) (*manifest.FileMetadata, error) {
	t.w.SetRangeDels(spans)
	props, err := t.w.Finish()
	if err != nil {
		t.d.removeFile(manifest.KindTableTemp, t.num)
		return nil, err
	}
	if props.NumEntries == 0 && spans.Len() == 0 {
		t.d.removeFile(manifest.KindTableTemp, t.num)
		return nil, nil
	}
	if err := t.d.fs.Rename(t.d.path(manifest.KindTableTemp, t.num), t.d.path(manifest.KindTable, t.num)); err != nil {
		t.d.removeFile(manifest.KindTableTemp, t.num)
		return nil, err
	}
	if err := t.d.fs.SyncDir(t.d.dir); err != nil {
		return nil, err
	}
	if t.d.recentHashes != nil {
		t.d.recentHashes.add(t.num, t.w.KeyHashes())
	}
	return tableMeta(t.num, props, spans), nil
}

// abort abandons the table and removes its file.
func (t *tableWriter) abort() {
	t.w.Abort()
	t.d.removeFile(manifest.KindTableTemp, t.num)
}
