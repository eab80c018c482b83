package compaction

import "fmt"

// Kind is why a compaction runs, and so how the DB counts it
// (lsm.Stats.Compactions) and names it to an event listener. Every
// Compaction has exactly one Kind (Compaction.Kind), and the kinds are
// 0..NumKinds-1.
type Kind uint8

const (
	// KindMove is a trivial move: tables change level without being
	// rewritten (Compaction.Trivial).
	KindMove Kind = iota
	// KindL0 merges L0 into the level below it, because L0 was due or a
	// manual compaction asked.
	KindL0
	// KindIntraL0 merges L0 tables into one L0 table, while a KindL0
	// compaction holds the level below (Compaction.IntraL0).
	KindIntraL0
	// KindSize merges tables of a level below L0 into the next: the level
	// was over its size target, or a manual compaction (PickRange)
	// asked.
	KindSize
	// KindRewrite rewrites one table in place (Rewrite), dropping what no
	// snapshot needs any more.
	KindRewrite
	// KindRest merges L0 into the level below though it is not due,
	// because the DB is at rest (PickRest).
	KindRest
	// KindDeleteOnly drops tables that range tombstones above them delete
	// wholly, by a manifest edit alone, reading and writing no table
	// (PickDeleteOnly).
	KindDeleteOnly

	// NumKinds is the number of kinds: a Kind indexes an array of
	// NumKinds counters.
	NumKinds Kind = iota
)

var kindNames = [NumKinds]string{
	KindMove:       "move",
	KindL0:         "L0",
	KindIntraL0:    "intra-L0",
	KindSize:       "size",
	KindRewrite:    "rewrite",
	KindRest:       "rest",
	KindDeleteOnly: "delete-only",
}

// String returns the kind's name as Compaction.String and the DB's event
// listener payloads print it: "move", "L0", "intra-L0", "size", "rewrite",
// "rest" or "delete-only".
func (k Kind) String() string {
	if k < NumKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", k)
}

// Kind returns why c runs. The tests are ordered: a delete-only
// compaction (Level = OutputLevel) is no rewrite nor intra-L0 merge, a move
// out of L0 is a move, an intra-L0 merge is not an L0 one, and a rest
// compaction (of L0) is not counted as a due one.
func (c *Compaction) Kind() Kind {
	switch {
	case c.DeleteOnly:
		return KindDeleteOnly
	case c.Trivial():
		return KindMove
	case c.IntraL0():
		return KindIntraL0
	case c.Rest:
		return KindRest
	case c.Level == 0:
		return KindL0
	case c.Level == c.OutputLevel:
		return KindRewrite
	}
	return KindSize
}
