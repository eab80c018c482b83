package lsm

import (
	"fmt"
	"strings"

	"github.com/monbandb/monban/sstable"
)

// traceWidth is the widest line Trace.String prints: traces are read in
// terminals and in docs/read-path.md, 80 columns wide.
const traceWidth = 80

// String prints the trace one step per line, numbered with the read
// path's step numbers. A line too long for 80 columns continues under its
// source, broken between two sub-steps (or, for a sub-step too long for a
// line of its own, between two words):
//
//	Get("k302")
//	  1. active memtable: quotient filter: absent
//	  4. L6 000004.sst: in range; bloom: maybe; block 2 @1054+530 read from file;
//	     found #152,SET
//	  => found
func (t Trace) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Get(%q)\n", t.Key)
	for _, s := range t.Steps {
		prefix := fmt.Sprintf("  %d. ", s.Num)
		// A continuation line starts here; the space before each word
		// completes the indent.
		cont := strings.Repeat(" ", len(prefix)-1)
		line := prefix + s.Source.String() + ":"
		for i, p := range s.parts() {
			if i > 0 {
				line += ";"
			}
			if len(line)+1+len(p) > traceWidth {
				b.WriteString(line + "\n")
				line = cont
			}
			for _, w := range strings.Fields(p) {
				if len(line)+1+len(w) > traceWidth && line != cont {
					b.WriteString(line + "\n")
					line = cont
				}
				line += " " + w
			}
		}
		b.WriteString(line + "\n")
	}
	fmt.Fprintf(&b, "  => %s\n", t.Result)
	return b.String()
}

// String prints the step without its number: its source, then what each
// sub-step found, in order, separated by "; ".
func (s Step) String() string {
	return s.Source.String() + ": " + strings.Join(s.parts(), "; ")
}

// parts says what each sub-step of s found, in order.
func (s Step) parts() []string {
	if s.Outcome == OutcomeRangeDeleted {
		return []string{fmt.Sprintf("covered by [%q, %q)#%d", s.Range[0], s.Range[1], s.Seq)}
	}
	var parts []string
	switch s.Source.Kind {
	case SourceTable:
		if s.Outcome == OutcomeOutOfRange {
			return []string{"key range: out"}
		}
		parts = append(parts, "in range")
	case SourceLevel:
		return []string{"no table covers the key"}
	}
	if s.Verdict == VerdictNotConsulted {
		parts = append(parts, "no filter asked")
	} else {
		parts = append(parts, fmt.Sprintf("%s: %s", s.Filter, s.Verdict))
	}
	if s.Outcome == OutcomeFilteredOut || s.Outcome == OutcomeSearchEach {
		return parts
	}
	if s.Source.Kind == SourceTable {
		if b := s.Block; b != nil {
			from := "read from file"
			if b.CacheHit {
				from = "block cache hit"
			}
			parts = append(parts, fmt.Sprintf("block %d @%d+%d %s", b.Index, b.Offset, b.Length, from))
		} else {
			parts = append(parts, "index: no block")
		}
	}
	outcome := s.Outcome.String()
	switch {
	case s.Outcome == OutcomeFound:
		outcome = fmt.Sprintf("found #%d,SET", s.Seq)
	case s.Outcome == OutcomeTombstone:
		outcome = fmt.Sprintf("tombstone #%d,DEL", s.Seq)
	case s.Outcome == OutcomeNoVersion && s.Verdict == VerdictMaybe:
		outcome += " (false positive)"
	}
	if s.Source.Kind != SourceTable {
		outcome = "tree: " + outcome
	}
	return append(parts, outcome)
}

func (s Source) String() string {
	switch s.Kind {
	case SourceActive:
		return "active memtable"
	case SourceImmutables:
		return fmt.Sprintf("immutable memtables (%d)", s.Count)
	case SourceImmutable:
		return fmt.Sprintf("immutable memtable %d of %d", s.Index, s.Count)
	case SourceTable:
		return fmt.Sprintf("L%d %s", s.Level, sstable.TableFileName(s.FileNum))
	case SourceLevel:
		return fmt.Sprintf("L%d", s.Level)
	}
	return fmt.Sprintf("source(%d)", uint8(s.Kind))
}

func (f FilterKind) String() string {
	switch f {
	case FilterNone:
		return "no filter"
	case FilterQuotient:
		return "quotient filter"
	case FilterCombined:
		return "combined filter"
	case FilterBloom:
		return "bloom"
	}
	return fmt.Sprintf("filter(%d)", uint8(f))
}

func (v Verdict) String() string {
	switch v {
	case VerdictNotConsulted:
		return "not consulted"
	case VerdictAbsent:
		return "absent"
	case VerdictMaybe:
		return "maybe"
	}
	return fmt.Sprintf("verdict(%d)", uint8(v))
}

func (o Outcome) String() string {
	switch o {
	case OutcomeOutOfRange:
		return "out of key range"
	case OutcomeFilteredOut:
		return "filtered out"
	case OutcomeSearchEach:
		return "each memtable asked"
	case OutcomeNoVersion:
		return "no version"
	case OutcomeNotVisible:
		return "only newer versions"
	case OutcomeFound:
		return "found"
	case OutcomeTombstone:
		return "tombstone"
	case OutcomeRangeDeleted:
		return "covered by a range tombstone"
	}
	return fmt.Sprintf("outcome(%d)", uint8(o))
}

func (r Result) String() string {
	switch r {
	case ResultNotFound:
		return "not found"
	case ResultFound:
		return "found"
	case ResultDeleted:
		return "not found (tombstone)"
	case ResultRangeDeleted:
		return "not found (range tombstone)"
	}
	return fmt.Sprintf("result(%d)", uint8(r))
}
