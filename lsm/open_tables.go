package lsm

import (
	"fmt"
	"slices"

	"github.com/monbandb/monban/internal/manifest"
	"github.com/monbandb/monban/sstable"
)

// Open's tables. Open refuses a live table that is not the one the
// manifest names (truncated, another table's file, a damaged footer or
// properties block), and it checks every table, not just those the table
// cache can hold: a table found wrong only by the first read that needs
// it makes a DB that opened fine fail later. But opening every table —
// its footer, meta blocks, the index decoded, every checksum verified —
// was most of Open's time at scale (issue 30: 0.35 s for 1,500 tables,
// half of it pread). So Open does the two apart:
//
//  1. It checks every table's identity (sstable.CheckIdentity: one read
//     of the file's tail), which also tells which tables hold range
//     tombstones.
//  2. It loads those tables before serving: Get skips range tombstones
//     altogether while DB.rangeDelsPossible is false, and the compaction
//     picker weighs only tombstones it knows (estimateRangeDels).
//  3. The rest load in the background (loadInBackground), the first
//     MaxOpenFiles of them in level order, as Open itself loaded them
//     before, so that the filters are in memory and the meta budget pins
//     the tables it pinned then.
//
// Nothing waits for step 3. A read of a table not loaded yet opens it
// through the table cache, as after an eviction; an absent-key proof
// counts it as "maybe" (proof.go): the load changes what costs what,
// never an answer.

// checkTables is steps 1 and 2 for the tables of v, in level order, and
// returns what is left for step 3.
func (d *DB) checkTables(v *manifest.Version) ([]manifest.NewFile, error) {
	var later []manifest.NewFile
	n := 0
	for level, files := range v.Levels {
		for _, f := range files {
			p, err := d.checkIdentity(f)
			if err != nil {
				return nil, err
			}
			n++
			switch {
			case p.RangeDelSpans > 0:
				_, release, err := d.table(f)
				if err != nil {
					return nil, fmt.Errorf("monban: %w", err)
				}
				release()
			case n <= d.opts.MaxOpenFiles:
				later = append(later, manifest.NewFile{Level: level, Meta: f})
			}
		}
	}
	return later, nil
}

// checkIdentity checks that f's file is the table f names, and returns its
// properties.
func (d *DB) checkIdentity(f *manifest.FileMetadata) (*sstable.Properties, error) {
	name := manifest.MakeFilename(manifest.KindTable, f.FileNum)
	file, err := openListed(d.fs, d.path(manifest.KindTable, f.FileNum))
	if err != nil {
		return nil, fmt.Errorf("monban: opening table %s: %w", name, err)
	}
	defer file.Close()
	p, err := sstable.CheckIdentity(file, tableRef(f))
	if err != nil {
		return nil, fmt.Errorf("monban: %w", err)
	}
	return p, nil
}

// loadInBackground is step 3: it loads tables (loadTables) in a goroutine
// that Close waits for (d.bg) and stops, and closes d.loaded when done.
//
// It holds no read state while it opens a table: held across the open,
// one kept the tables a compaction replaced meanwhile from the deleter for
// as long as the load was held up (behind a Get opening the same table,
// or waiting for a CPU), and TestCrashRecovery found them left on disk
// after its wait for a quiet DB. It peeks at the current version instead,
// as inLastLevel does, so as not to open a table already replaced at the
// level Open saw. One replaced after the peek opens as a compaction's
// output replaced at once does (reloadTables): its reader stays in the
// table cache until evicted, and the filter its metadata takes until the
// collector finds the metadata.
func (d *DB) loadInBackground(tables []manifest.NewFile) {
	d.bg.Add(1)
	go func() {
		defer d.bg.Done()
		defer close(d.loaded)
		for _, nf := range tables {
			rs := d.rs.Load()
			if rs == nil || d.closed.Load() {
				return
			}
			if holds(rs.version, nf) {
				d.loadTables([]manifest.NewFile{nf})
			}
		}
	}()
}

// holds reports whether v holds table nf.Meta at level nf.Level.
func holds(v *manifest.Version, nf manifest.NewFile) bool {
	if nf.Level == 0 {
		return slices.Contains(v.Levels[0], nf.Meta)
	}
	return v.FindFile(nf.Level, nf.Meta.Smallest.UserKey) == nf.Meta
}
