package compaction

import "github.com/monbandb/monban/internal/manifest"

// PickRest returns a rest compaction: all of L0 into its output level
// (pickL0), when L0 holds more than one table of point entries and no
// compaction runs; nil otherwise. It is the compaction of a DB at rest, which its caller
// decides (lsm/compact.go, restDue): Pick found nothing due, no write is
// waiting to be flushed, and a write load made L0 due since the DB
// opened.
//
// L0's score (Score) lets L0 grow past L0Threshold tables while it holds
// few bytes beside the level it compacts into, since the next flushes
// would make the same compaction write fewer bytes per L0 byte. When the
// writes stop, no next flush comes: the tables stay, up to
// L0MaxTables-1 of them, and every read of an absent key probes each
// one's filter, every scan merges each, for as long as the DB is read.
// LevelDB (allowed_seeks) and Pebble (read-triggered compactions) compact
// such tables once reads have paid for them; at rest it is cheaper still
// to compact them before the reads come.
//
// A table of range tombstones only does not count: a read asks it for no
// filter probe, only for its tombstones (lsm/get.go), and what they cover
// is the compensated size's to reclaim (Score), as for any table. Counted,
// the one table a DeleteRange's flush makes beside a fill's last L0 table
// set off a rest compaction of the whole base level's overlap (43 MB
// written after 100 DeleteRange calls, bench/peers delrange at 1M keys).
//
// Invariant: a rest compaction takes every L0 table, so once it is done
// L0 is empty until a flush adds a table. A DB that nothing writes to
// runs at most one rest compaction, and then none: it becomes idle.
func PickRest(v *manifest.Version, o Options, inProgress []*Compaction) *Compaction {
	points := 0
	for _, f := range v.Levels[0] {
		if f.NumEntries > 0 {
			points++
		}
	}
	if len(inProgress) > 0 || points < 2 {
		return nil
	}
	c := pickL0(v, o, nil)
	c.Rest = true
	return c
}
