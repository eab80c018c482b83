package lsm

import (
	"fmt"
	"strings"

	"github.com/monbandb/monban/internal/base"
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
	switch {
	case s.Outcome == OutcomeRangeDeleted:
		return []string{fmt.Sprintf("covered by [%q, %q)#%d", s.Range[0], s.Range[1], s.Seq)}
	case s.Source.Kind == SourceTable && s.Filter == FilterTree:
		return []string{"in range", fmt.Sprintf("%s: %s", s.Filter, s.Verdict)}
	case s.Source.Kind == SourceTable:
		l := s.lookup()
		return strings.Split(l.String(), "; ")
	case s.Source.Kind == SourceLevel:
		return []string{"no table covers the key"}
	}
	// A memtable, or the immutable memtables' combined filter.
	parts := []string{"no filter asked"}
	if s.Verdict != VerdictNotConsulted {
		parts[0] = fmt.Sprintf("%s: %s", s.Filter, s.Verdict)
	}
	if s.Outcome == OutcomeFilteredOut || s.Outcome == OutcomeSearchEach {
		return parts
	}
	return append(parts, "tree: "+s.Outcome.Text(base.SeqNum(s.Seq), s.Verdict == VerdictMaybe))
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
	case FilterTree:
		return "tree-wide filter"
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
