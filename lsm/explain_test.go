package lsm

import (
	"errors"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/monbandb/monban/vfs"
)

// TestExplainAgreesWithGetAndStats: for keys present, deleted and absent,
// in memtables and in several levels, Explain's result matches Get's, and
// its steps match what Stats counted for it.
func TestExplainAgreesWithGetAndStats(t *testing.T) {
	d := openMem(t, vfs.NewMem(), &Options{MemtableSize: 8 << 10, TargetFileSize: 8 << 10, BlockCacheSize: 16 << 10})
	defer d.Close()
	for i := range 600 {
		d.Put(fmt.Appendf(nil, "k%04d", 2*i), []byte("value"))
		if i%5 == 0 {
			d.Delete(fmt.Appendf(nil, "k%04d", 2*(i/2)))
		}
	}
	d.Flush()
	for i := range 50 {
		d.Put(fmt.Appendf(nil, "k%04d", 4*i), []byte("newer"))
	}
	count := func(tr Trace, match func(Step) bool) uint64 {
		n := uint64(0)
		for _, s := range tr.Steps {
			if match(s) {
				n++
			}
		}
		return n
	}
	for i := range 1300 {
		key := fmt.Appendf(nil, "k%04d", i)
		v, getErr := d.Get(key)
		before := d.Stats()
		tr, err := d.Explain(key)
		after := d.Stats()
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case getErr == nil && tr.Result != ResultFound,
			errors.Is(getErr, ErrNotFound) && tr.Result == ResultFound:
			t.Fatalf("%s: Get says %q, %v; Explain says %v", key, v, getErr, tr.Result)
		}
		for j, s := range tr.Steps {
			if want := stepNum(s.Source); s.Num != want {
				t.Fatalf("%s: step %d is numbered %d, its source %v is step %d", key, j, s.Num, s.Source, want)
			}
		}
		checks := []struct {
			what      string
			got, want uint64
		}{
			{"table filter negatives", count(tr, func(s Step) bool { return s.Filter == FilterBloom && s.Verdict == VerdictAbsent }),
				after.Total.FilterNegatives - before.Total.FilterNegatives},
			{"table false positives", count(tr, func(s Step) bool {
				return s.Filter == FilterBloom && s.Verdict == VerdictMaybe && s.Outcome == OutcomeNoVersion
			}), after.Total.FilterFalsePositives - before.Total.FilterFalsePositives},
			{"blocks read from file", count(tr, func(s Step) bool { return s.Block != nil && !s.Block.CacheHit }),
				after.Total.BlocksRead - before.Total.BlocksRead},
			{"block cache hits", count(tr, func(s Step) bool { return s.Block != nil && s.Block.CacheHit }),
				after.Total.CacheHits - before.Total.CacheHits},
			{"memtable filter negatives", count(tr, func(s Step) bool { return s.Filter == FilterQuotient && s.Verdict == VerdictAbsent }),
				after.MemtableFilterNegatives - before.MemtableFilterNegatives},
			{"combined filter negatives", count(tr, func(s Step) bool { return s.Filter == FilterCombined && s.Verdict == VerdictAbsent }),
				after.ImmutableFilterNegatives - before.ImmutableFilterNegatives},
		}
		for _, c := range checks {
			if c.got != c.want {
				t.Fatalf("%s: the trace shows %d %s, Stats counted %d\n%s", key, c.got, c.what, c.want, tr)
			}
		}
	}
}

// stepNum is the read-path step a source belongs to (lsm/get.go).
func stepNum(s Source) int {
	switch s.Kind {
	case SourceActive:
		return 1
	case SourceImmutables, SourceImmutable:
		return 2
	case SourceTable:
		if s.Level == 0 {
			return 3
		}
	}
	return 4
}

// TestExplainSteps pins the structure of whole traces, one per way a step
// can end, on a tree built step by step: a compacted L6 table, an L0 table
// holding a tombstone, two immutable memtables held by a blocked flush,
// and the active memtable. Block offsets and lengths are left out of the
// comparison (the format pins those); where a block was read and from
// where is not.
func TestExplainSteps(t *testing.T) {
	release, begun := make(chan struct{}), make(chan struct{}, 4)
	var hold atomic.Bool
	d := openMem(t, vfs.NewMem(), &Options{EventListener: &EventListener{FlushBegin: func(FlushInfo) {
		if hold.Swap(false) {
			begun <- struct{}{}
			<-release
		}
	}}})
	for i := range 100 {
		d.Put(fmt.Appendf(nil, "k%03d", 2*i), []byte("v1")) // seqs 1..100
	}
	if err := d.Compact(); err != nil {
		t.Fatal(err)
	}
	d.Put([]byte("k010"), []byte("v2")) // 101
	d.Delete([]byte("k020"))            // 102
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	hold.Store(true)
	d.Put([]byte("k030"), []byte("v3")) // 103
	flushed := make(chan error, 2)
	go func() { flushed <- d.Flush() }()
	<-begun
	d.Put([]byte("k040"), []byte("v4")) // 104
	go func() { flushed <- d.Flush() }()
	// The second Flush rotates at once, then waits behind the first.
	for deadline := time.Now().Add(time.Minute); d.Stats().MemtablesQueued != 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the second memtable never turned immutable")
		}
	}
	d.Put([]byte("k050"), []byte("v5")) // 105

	tables := map[int]uint64{}
	ts, err := d.Tables()
	if err != nil {
		t.Fatal(err)
	}
	for _, tab := range ts {
		tables[tab.Level] = tab.FileNum
	}
	active := Step{Num: 1, Source: Source{Kind: SourceActive}, Filter: FilterQuotient, Verdict: VerdictAbsent, Outcome: OutcomeFilteredOut}
	combinedAbsent := Step{Num: 2, Source: Source{Kind: SourceImmutables, Count: 2}, Filter: FilterCombined, Verdict: VerdictAbsent, Outcome: OutcomeFilteredOut}
	l0 := Source{Kind: SourceTable, Level: 0, FileNum: tables[0]}
	l6 := Source{Kind: SourceTable, Level: 6, FileNum: tables[6]}
	fromFile := &BlockRead{}
	for _, tc := range []struct {
		key    string
		result Result
		steps  []Step
	}{
		{"k050", ResultFound, []Step{{Num: 1, Source: Source{Kind: SourceActive}, Filter: FilterQuotient, Verdict: VerdictMaybe, Outcome: OutcomeFound, Seq: 105}}},
		{"k030", ResultFound, []Step{active,
			{Num: 2, Source: Source{Kind: SourceImmutables, Count: 2}, Filter: FilterCombined, Verdict: VerdictMaybe, Outcome: OutcomeSearchEach},
			{Num: 2, Source: Source{Kind: SourceImmutable, Index: 1, Count: 2}, Filter: FilterQuotient, Verdict: VerdictAbsent, Outcome: OutcomeFilteredOut},
			{Num: 2, Source: Source{Kind: SourceImmutable, Index: 2, Count: 2}, Filter: FilterQuotient, Verdict: VerdictMaybe, Outcome: OutcomeFound, Seq: 103}}},
		{"k020", ResultDeleted, []Step{active, combinedAbsent,
			{Num: 3, Source: l0, Filter: FilterBloom, Verdict: VerdictMaybe, Block: fromFile, Outcome: OutcomeTombstone, Seq: 102}}},
		{"k012", ResultFound, []Step{active, combinedAbsent,
			{Num: 3, Source: l0, Filter: FilterBloom, Verdict: VerdictAbsent, Outcome: OutcomeFilteredOut},
			{Num: 4, Source: l6, Filter: FilterBloom, Verdict: VerdictMaybe, Block: fromFile, Outcome: OutcomeFound, Seq: 7}}},
		{"k012", ResultFound, []Step{active, combinedAbsent,
			{Num: 3, Source: l0, Filter: FilterBloom, Verdict: VerdictAbsent, Outcome: OutcomeFilteredOut},
			{Num: 4, Source: l6, Filter: FilterBloom, Verdict: VerdictMaybe, Block: &BlockRead{CacheHit: true}, Outcome: OutcomeFound, Seq: 7}}},
		{"k300", ResultNotFound, []Step{active, combinedAbsent,
			{Num: 3, Source: l0, Outcome: OutcomeOutOfRange},
			{Num: 4, Source: Source{Kind: SourceLevel, Level: 6}, Outcome: OutcomeOutOfRange}}},
	} {
		tr, err := d.Explain([]byte(tc.key))
		if err != nil {
			t.Fatal(err)
		}
		for i := range tr.Steps {
			if b := tr.Steps[i].Block; b != nil {
				b.Index, b.Offset, b.Length = 0, 0, 0
			}
		}
		if tr.Result != tc.result || !reflect.DeepEqual(tr.Steps, tc.steps) {
			t.Errorf("Explain(%s) = %v\n%#v\nwant %v\n%#v", tc.key, tr.Result, tr.Steps, tc.result, tc.steps)
		}
	}
	close(release)
	for range 2 {
		if err := <-flushed; err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestTraceString: one line per step, numbered with the read path's step
// numbers; long lines wrap under the source, within 80 columns.
func TestTraceString(t *testing.T) {
	tr := Trace{Key: []byte("k302"), Result: ResultFound, Steps: []Step{
		{Num: 1, Source: Source{Kind: SourceActive}, Filter: FilterQuotient, Verdict: VerdictAbsent, Outcome: OutcomeFilteredOut},
		{Num: 2, Source: Source{Kind: SourceImmutables, Count: 2}, Filter: FilterCombined, Verdict: VerdictMaybe, Outcome: OutcomeSearchEach},
		{Num: 2, Source: Source{Kind: SourceImmutable, Index: 1, Count: 2}, Filter: FilterQuotient, Verdict: VerdictMaybe, Outcome: OutcomeNoVersion},
		{Num: 2, Source: Source{Kind: SourceImmutable, Index: 2, Count: 2}, Outcome: OutcomeNotVisible},
		{Num: 3, Source: Source{Kind: SourceTable, Level: 0, FileNum: 12}, Outcome: OutcomeOutOfRange},
		{Num: 3, Source: Source{Kind: SourceTable, Level: 0, FileNum: 9}, Filter: FilterBloom, Verdict: VerdictMaybe,
			Block: &BlockRead{Index: 1, Offset: 702, Length: 690}, Outcome: OutcomeNoVersion},
		{Num: 4, Source: Source{Kind: SourceLevel, Level: 5}, Outcome: OutcomeOutOfRange},
		{Num: 4, Source: Source{Kind: SourceTable, Level: 6, FileNum: 5}, Filter: FilterBloom, Verdict: VerdictMaybe,
			Block: &BlockRead{Index: 3, Offset: 2730, Length: 702, CacheHit: true}, Outcome: OutcomeFound, Seq: 152},
	}}
	want := `Get("k302")
  1. active memtable: quotient filter: absent
  2. immutable memtables (2): combined filter: maybe
  2. immutable memtable 1 of 2: quotient filter: maybe;
     tree: no version (false positive)
  2. immutable memtable 2 of 2: no filter asked; tree: only newer versions
  3. L0 000012.sst: key range: out
  3. L0 000009.sst: in range; bloom: maybe; block 1 @702+690 read from file;
     no version (false positive)
  4. L5: no table covers the key
  4. L6 000005.sst: in range; bloom: maybe; block 3 @2730+702 block cache hit;
     found #152,SET
  => found
`
	if got := tr.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	for _, l := range strings.Split(want, "\n") {
		if len(l) > traceWidth || strings.TrimRight(l, " ") != l {
			t.Errorf("line of %d columns or with a trailing space: %q", len(l), l)
		}
	}
}

// TestOneNumbering: the read path's steps are numbered alike in
// lsm/get.go's comments, the package doc, docs/read-path.md and the step
// numbers Explain records (TestExplainAgreesWithGetAndStats checks the
// last); the per-table sub-steps are lettered alike in sstable/get.go and
// the chapter.
func TestOneNumbering(t *testing.T) {
	read := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	steps := map[int]string{1: "active memtable", 2: "immutable memtables", 3: "L0", 4: "L1…L6"}
	// section returns the part of path's text from the line holding from
	// to the next line holding to.
	section := func(path, from, to string) string {
		text := read(path)
		i := strings.Index(text, from)
		if i < 0 {
			t.Fatalf("%s: no %q", path, from)
		}
		text = text[i+len(from):]
		if j := strings.Index(text, to); j >= 0 {
			text = text[:j]
		}
		return text
	}
	for _, c := range []struct{ text, path, format string }{
		// get and getMemtables, which holds steps 1 and 2 for Get and
		// MultiGet.
		{section("get.go", "func (d *DB) get(", "\nfunc memtableValue("), "get.go", `(?m)^\t*// %d\. (.*)$`},
		{section("doc.go", "// # The read path", "// # "), "doc.go", `(?m)^//  %d\. (.*)$`},
		{section("../docs/read-path.md", "## The steps", "\n#"), "docs/read-path.md", `(?m)^%d\. \*\*(.*)$`},
	} {
		path, format, text := c.path, c.format, c.text
		for n, want := range steps {
			m := regexp.MustCompile(fmt.Sprintf(format, n)).FindAllStringSubmatch(text, -1)
			if len(m) != 1 || !strings.Contains(m[0][1], want) && !(n == 4 && strings.Contains(m[0][1], "deeper level")) {
				t.Errorf("%s: step %d is %q, want one line naming %q", path, n, m, want)
			}
		}
	}
	subs := map[string]string{"a": "key range", "b": "filter", "c": "index", "d": "data block"}
	get, chapter := read("../sstable/get.go"), read("../docs/read-path.md")
	for l, want := range subs {
		if !regexp.MustCompile(`(?i)// ` + l + `\. ` + want).MatchString(get) {
			t.Errorf("sstable/get.go: no comment %q", l+". "+want)
		}
		if !regexp.MustCompile(`\*\*3` + l + ` [^*]*` + want).MatchString(chapter) {
			t.Errorf("docs/read-path.md: no sub-step **3%s naming %q", l, want)
		}
	}
}
