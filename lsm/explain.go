package lsm

import (
	"bytes"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/memtable"
	"github.com/monbandb/monban/sstable"
)

// Trace is the read path of one key, as Explain recorded it: every source
// the lookup consulted, in order, and how it ended.
type Trace struct {
	Key    []byte
	Steps  []Step
	Result Result
}

// Step is one source the read path consulted. Num is the step of the read
// path, numbered as in lsm/get.go, the package doc and docs/read-path.md:
//
//  1. the active memtable;
//  2. the immutable memtables: their combined filter, then each one;
//  3. an L0 table;
//  4. the one table of a deeper level that may hold the key (or the level,
//     when none of its tables covers the key).
//
// A table's step runs the sub-steps of sstable/get.go in order — a. key
// range, b. Bloom filter, c. index, d. data block — and stops at the first
// that rules the key out: Outcome says which.
type Step struct {
	Num    int
	Source Source
	// Filter is the filter asked and Verdict its answer; FilterNone and
	// VerdictNotConsulted when no filter was asked (the key was out of the
	// table's range, the table has none, or Options.IgnoreFilters).
	Filter  FilterKind
	Verdict Verdict
	// Block is the data block read, nil if none (tables only).
	Block   *BlockRead
	Outcome Outcome
	// Seq is the sequence number of the version found (OutcomeFound,
	// OutcomeTombstone) or of the range tombstone (OutcomeRangeDeleted),
	// 0 otherwise.
	Seq uint64
	// Range is the fragment [start, end) of the range tombstone
	// (OutcomeRangeDeleted).
	Range [2][]byte
}

// Source names what a step consulted.
type Source struct {
	Kind SourceKind
	// Count is the number of immutable memtables (SourceImmutables,
	// SourceImmutable); Index the memtable's place among them, 1 the
	// newest (SourceImmutable).
	Count, Index int
	// Level and FileNum name a table (SourceTable), Level a level
	// (SourceLevel).
	Level   int
	FileNum uint64
}

// SourceKind says which kind of source a step consulted.
type SourceKind uint8

const (
	// SourceActive is the active memtable (step 1).
	SourceActive SourceKind = iota
	// SourceImmutables is all the immutable memtables at once, through
	// their combined filter (step 2).
	SourceImmutables
	// SourceImmutable is one immutable memtable (step 2).
	SourceImmutable
	// SourceTable is one table (step 3 for L0, 4 below).
	SourceTable
	// SourceLevel is a level of L1…L6 none of whose tables covers the
	// key (step 4).
	SourceLevel
)

// FilterKind names the filter a step asked.
type FilterKind uint8

const (
	FilterNone     FilterKind = iota
	FilterQuotient            // a memtable's own quotient filter
	FilterCombined            // the immutable memtables' combined quotient filter
	FilterBloom               // a table's cache-line Bloom filter
	FilterTree                // the tree-wide filter (Options.FilterScope)
)

// Verdict is a filter's answer. Absent is certain; Maybe is not.
type Verdict uint8

const (
	VerdictNotConsulted Verdict = iota
	VerdictAbsent
	VerdictMaybe
)

// BlockRead is a data block a table step read: its place in the table
// (the index's handle: offset and stored length) and where it came from.
type BlockRead struct {
	Index          int
	Offset, Length uint64
	CacheHit       bool // from the block cache; false: read from the file
}

// Outcome is how a step ended. It is sstable's Outcome, not a type of
// lsm's own: a table step's outcome is the table lookup's (sstable.Lookup),
// unconverted, and a memtable's ends the same ways. OutcomeSearchEach and
// OutcomeRangeDeleted, which no single table lookup ends in, are the read
// path's above the sources, declared with the others so that a step's
// outcome is one enum with one String whatever its source.
type Outcome = sstable.Outcome

// The outcomes of a step; sstable's constants document each.
const (
	OutcomeOutOfRange   = sstable.OutcomeOutOfRange   // sub-step a: nothing read
	OutcomeFilteredOut  = sstable.OutcomeFilteredOut  // sub-step b: the filter said absent
	OutcomeSearchEach   = sstable.OutcomeSearchEach   // step 2: each immutable memtable is asked
	OutcomeNoVersion    = sstable.OutcomeNoVersion    // no version; after a maybe, a false positive
	OutcomeNotVisible   = sstable.OutcomeNotVisible   // only versions newer than the read
	OutcomeFound        = sstable.OutcomeFound        // a value: the search ends
	OutcomeTombstone    = sstable.OutcomeTombstone    // a tombstone: the search ends, not found
	OutcomeRangeDeleted = sstable.OutcomeRangeDeleted // a range tombstone (Step.Range, Step.Seq) deletes it
)

// Result is how a lookup ended.
type Result uint8

const (
	// ResultNotFound: no source holds a visible version.
	ResultNotFound Result = iota
	// ResultFound: the newest visible version is a value.
	ResultFound
	// ResultDeleted: the newest visible version is a tombstone.
	ResultDeleted
	// ResultRangeDeleted: a range tombstone deletes the newest visible
	// version (or every one).
	ResultRangeDeleted
)

// Explain runs Get for key at the current sequence number and returns the
// steps it took: which memtables and tables it consulted, what each filter
// said, which blocks it read from the cache or the file. It is the same
// code path as Get and counts in Stats like one.
func (d *DB) Explain(key []byte) (Trace, error) {
	if d.closed.Load() {
		return Trace{}, ErrClosed
	}
	rs, seq := d.currentView()
	if rs == nil {
		return Trace{}, ErrClosed
	}
	defer rs.unref()
	return d.explain(rs, seq, key)
}

// explain is Explain over the read state rs at seq.
func (d *DB) explain(rs *readState, seq base.SeqNum, key []byte) (Trace, error) {
	t := &Trace{Key: append([]byte(nil), key...)}
	_, err := d.closedOr(d.get(rs, key, seq, t)) // ErrClosed, as Get's
	if err == ErrNotFound {
		err = nil
	}
	return *t, err
}

// The recording methods accept a nil *Trace, so the read path calls them
// unconditionally and pays nothing when no one is explaining.

func (t *Trace) add(s Step) {
	switch s.Outcome {
	case OutcomeFound:
		t.Result = ResultFound
	case OutcomeTombstone:
		t.Result = ResultDeleted
	case OutcomeRangeDeleted:
		t.Result = ResultRangeDeleted
	}
	t.Steps = append(t.Steps, s)
}

// rangeDeleted records that c decided the source's answer: a step of its
// own after the source's, numbered as it (num 0: a memtable's).
func (t *Trace) rangeDeleted(src Source, num int, c *cover) {
	if t == nil {
		return
	}
	if num == 0 {
		num = 1
		if src.Kind != SourceActive {
			num = 2
		}
	}
	t.add(Step{Num: num, Source: src, Outcome: OutcomeRangeDeleted, Seq: uint64(c.seq),
		Range: [2][]byte{bytes.Clone(c.start), bytes.Clone(c.end)}})
}

// memtable records step 1 (src SourceActive) or one memtable of step 2.
// filtered reports whether the memtable's filter was asked (it is not
// under Options.IgnoreFilters). The memtable's answer does not carry the
// version's sequence number, nor whether an Absent had newer versions, so
// the trace looks them up in a snapshot of m — only when explaining.
func (t *Trace) memtable(src Source, m *memtable.Memtable, key []byte, seq base.SeqNum, res memtable.Result, filtered bool) {
	if t == nil {
		return
	}
	s := Step{Num: 1, Source: src}
	if src.Kind != SourceActive {
		s.Num = 2
	}
	if filtered {
		s.Filter, s.Verdict = FilterQuotient, VerdictMaybe
	}
	switch res {
	case memtable.FilteredOut:
		s.Verdict, s.Outcome = VerdictAbsent, OutcomeFilteredOut
	case memtable.Absent:
		s.Outcome = OutcomeNoVersion
		if _, ok := seekMemtable(m, key, base.MaxSeqNum); ok {
			s.Outcome = OutcomeNotVisible
		}
	case memtable.Found, memtable.Deleted:
		s.Outcome = OutcomeFound
		if res == memtable.Deleted {
			s.Outcome = OutcomeTombstone
		}
		if ik, ok := seekMemtable(m, key, seq); ok {
			s.Seq = uint64(ik.Seq())
		}
	}
	t.add(s)
}

// seekMemtable returns the newest version of key in m at or below seq.
func seekMemtable(m *memtable.Memtable, key []byte, seq base.SeqNum) (base.InternalKey, bool) {
	it := m.NewIter()
	defer it.Close()
	if !it.SeekGE(base.SeekKey(key, seq)) || !bytes.Equal(it.Key().UserKey, key) {
		return base.InternalKey{}, false
	}
	return it.Key(), true
}

// combined records step 2's probe of the immutable memtables' combined
// filter; nothing when it was not asked (Options.IgnoreFilters).
func (t *Trace) combined(n int, v Verdict) {
	if t == nil || v == VerdictNotConsulted {
		return
	}
	s := Step{Num: 2, Source: Source{Kind: SourceImmutables, Count: n}, Filter: FilterCombined, Verdict: v, Outcome: OutcomeSearchEach}
	if v == VerdictAbsent {
		s.Outcome = OutcomeFilteredOut
	}
	t.add(s)
}

// maybeUnless is the combined filter's verdict when it was not asked for
// "absent": maybe, or not consulted at all under Options.IgnoreFilters.
func maybeUnless(ignored bool) Verdict {
	if ignored {
		return VerdictNotConsulted
	}
	return VerdictMaybe
}

// outOfRange records a table whose key range does not cover the key
// (sub-step a, decided from the manifest without opening the table).
func (t *Trace) outOfRange(level int, fileNum uint64) {
	if t != nil {
		t.add(Step{Num: tableStep(level), Source: Source{Kind: SourceTable, Level: level, FileNum: fileNum}, Outcome: OutcomeOutOfRange})
	}
}

// noTable records a level of L1…L6 none of whose tables covers the key.
func (t *Trace) noTable(level int) {
	if t != nil {
		t.add(Step{Num: 4, Source: Source{Kind: SourceLevel, Level: level}, Outcome: OutcomeOutOfRange})
	}
}

// treeRuledOut records a table the tree-wide filter ruled out: its level
// holds no entry for the key.
func (t *Trace) treeRuledOut(level int, fileNum uint64) {
	if t != nil {
		t.add(Step{Num: tableStep(level), Source: Source{Kind: SourceTable, Level: level, FileNum: fileNum},
			Filter: FilterTree, Verdict: VerdictAbsent, Outcome: OutcomeFilteredOut})
	}
}

// table records one table's lookup, as the lookup recorded itself.
func (t *Trace) table(level int, fileNum uint64, l *sstable.Lookup) {
	if t == nil {
		return
	}
	s := Step{Num: tableStep(level), Source: Source{Kind: SourceTable, Level: level, FileNum: fileNum}, Outcome: l.Outcome, Seq: uint64(l.Seq)}
	if l.FilterAsked {
		s.Filter, s.Verdict = FilterBloom, VerdictMaybe
		if l.Outcome == OutcomeFilteredOut {
			s.Verdict = VerdictAbsent
		}
	}
	if l.From != sstable.BlockNone {
		s.Block = &BlockRead{Index: l.Block, Offset: l.Offset, Length: l.Length, CacheHit: l.From == sstable.BlockFromCache}
	}
	t.add(s)
}

// lookup is the table lookup a table step was recorded from (table), back
// again, for its text: one rendering of a table lookup, sstable's.
func (s Step) lookup() sstable.Lookup {
	l := sstable.Lookup{Outcome: s.Outcome, FilterAsked: s.Verdict != VerdictNotConsulted, Seq: base.SeqNum(s.Seq)}
	if b := s.Block; b != nil {
		l.Block, l.Offset, l.Length, l.From = b.Index, b.Offset, b.Length, sstable.BlockFromFile
		if b.CacheHit {
			l.From = sstable.BlockFromCache
		}
	}
	return l
}

func tableStep(level int) int {
	if level == 0 {
		return 3
	}
	return 4
}
