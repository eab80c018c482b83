package lsm

import (
	"fmt"
	"strings"

	"github.com/monbandb/monban/memtable"
	"github.com/monbandb/monban/sstable"
)

// Trace is the read path of one key, step by step, as Explain recorded it.
type Trace struct {
	Key []byte
	// Steps are the sources consulted, in order, one line each.
	Steps []string
	// Result is how the lookup ended: "found", "not found", "not found
	// (deleted)".
	Result string
}

// String prints the trace one step per numbered line.
func (t Trace) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Get(%q)\n", t.Key)
	for i, s := range t.Steps {
		fmt.Fprintf(&b, "%3d. %s\n", i+1, s)
	}
	fmt.Fprintf(&b, "  => %s\n", t.Result)
	return b.String()
}

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
	t := &Trace{Key: append([]byte(nil), key...)}
	_, err := d.get(rs, key, seq, t)
	if err == ErrNotFound {
		err = nil
	}
	return *t, err
}

// The recording methods accept a nil *Trace, so the read path calls them
// unconditionally and pays nothing when no one is explaining.

func (t *Trace) step(format string, args ...any) {
	if t != nil {
		t.Steps = append(t.Steps, fmt.Sprintf(format, args...))
	}
}

func (t *Trace) result(s string) {
	if t != nil {
		t.Result = s
	}
}

func (t *Trace) memtable(name string, res memtable.Result) {
	if t == nil {
		return
	}
	switch res {
	case memtable.FilteredOut:
		t.step("%s: quotient filter: absent (no tree search)", name)
	case memtable.Absent:
		t.step("%s: quotient filter: maybe; tree: no visible version (false positive)", name)
	case memtable.Found:
		t.step("%s: quotient filter: maybe; tree: found", name)
		t.result("found")
	case memtable.Deleted:
		t.step("%s: quotient filter: maybe; tree: tombstone", name)
		t.result("not found (deleted)")
	}
}

func (t *Trace) table(level int, g *sstable.GetTrace) {
	if t != nil {
		t.step("L%d %s", level, g.String())
	}
}

func immutableName(i int) string {
	return fmt.Sprintf("immutable memtable %d (newest is 1)", i+1)
}
