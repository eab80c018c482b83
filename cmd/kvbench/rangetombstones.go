package main

import (
	"fmt"
	"strings"

	"github.com/monbandb/monban/lsm"
)

// -range_tombstones N puts N live range tombstones beside the point reads
// (readrandom, readmissing, the multireads, readwhilewriting), over no key
// any workload reads: span j lies in the gap just above present key
// spread(j), [key+"a", key+"b"), which holds no key of -key_size bytes,
// present or missing. The spans are spread evenly over the key space.
//
// The fills write span j with their op j·num/N, so the tombstones go down
// the tree with the keys written beside them, into many tables of several
// levels (a fill's figures include its N DeleteRange calls). A compaction
// into the last level drops those it carries (nothing below needs them),
// so before each read workload opens its window (settled, untimed) the
// spans are looked up with DB.Explain, and each one that no source holds
// any more is written again, into the active memtable: the workload runs
// with all N live, some in tables and the rest in the memtable, and says
// where. The next workload's settle flushes those into an L0 table.

// rangeTombstones is where a read workload's -range_tombstones were live
// when it started: Memtable those it wrote into the active memtable (no
// table held them), Levels those that a table of each level held, L0
// first.
type rangeTombstones struct {
	Live     int                `json:"live"`
	Memtable int                `json:"memtable"`
	Levels   [lsm.NumLevels]int `json:"levels"`
}

// spread is the number of the present key whose gap holds span j.
func (c *config) spread(j int) int { return (2*j + 1) * c.num / (2 * c.rangeTombstones) }

// span returns range tombstone j's bounds: the gap just above its present
// key, covering no key of keySize bytes.
func (b *bench) span(j int) (start, end []byte) {
	k := b.keys.key(make([]byte, b.keys.keySize), b.keys.present(b.cfg.spread(j)))
	return append(k[:len(k):len(k)], 'a'), append(k[:len(k):len(k)], 'b')
}

// fillTombstone writes the range tombstone the fills write with op i, if
// there is one: span j with j·num/N = i.
func (b *bench) fillTombstone(i int) error {
	n := b.cfg.rangeTombstones
	if n == 0 {
		return nil
	}
	j := (i*n + b.cfg.num - 1) / b.cfg.num
	if j >= n || j*b.cfg.num/n != i {
		return nil
	}
	return b.db.DeleteRange(b.span(j))
}

// placeRangeTombstones makes every span live before a read workload:
// it asks DB.Explain where each span's start key is covered, and writes
// the spans no source holds into the active memtable. nil without
// -range_tombstones.
func (b *bench) placeRangeTombstones() (*rangeTombstones, error) {
	if b.cfg.rangeTombstones == 0 {
		return nil, nil
	}
	rt := &rangeTombstones{Live: b.cfg.rangeTombstones}
	for j := range b.cfg.rangeTombstones {
		start, end := b.span(j)
		tr, err := b.db.Explain(start)
		if err != nil {
			return nil, err
		}
		if tr.Result != lsm.ResultRangeDeleted {
			rt.Memtable++
			if err := b.db.DeleteRange(start, end); err != nil {
				return nil, err
			}
			continue
		}
		// The step that decided the read names the source holding the
		// newest tombstone over the key.
		s := tr.Steps[len(tr.Steps)-1].Source
		if s.Kind != lsm.SourceTable {
			return nil, fmt.Errorf("range tombstone %d found in %v, not a table: the DB was not settled", j, s)
		}
		rt.Levels[s.Level]++
	}
	return rt, nil
}

// String is the report's line: "1000 live: 412 written into the memtable,
// 588 in tables (L4 200, L5 388)".
func (rt *rangeTombstones) String() string {
	var levels []string
	tables := 0
	for l, n := range rt.Levels {
		if n > 0 {
			levels = append(levels, fmt.Sprintf("L%d %d", l, n))
			tables += n
		}
	}
	s := fmt.Sprintf("%d live, over no key read: %d written into the memtable, %d in tables", rt.Live, rt.Memtable, tables)
	if len(levels) > 0 {
		s += " (" + strings.Join(levels, ", ") + ")"
	}
	return s
}
