package main

import (
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestCompareRepairedCatches fabricates repaired copies that differ from
// what Open read (survived, in verify_test.go) and checks each difference
// lands in its column and is named.
func TestCompareRepairedCatches(t *testing.T) {
	for _, tc := range []struct {
		name                         string
		mutate                       func(state)
		resurrected, lost, differing int
		says                         string
	}{
		{"the same", func(state) {}, 0, 0, 0, ""},
		{"deleted key back", func(s state) { s[1] = value(1, 0, 7, 20) }, 1, 0, 0, "key 1: resurrected, value of w0.s7"},
		{"key gone", func(s state) { delete(s, 0) }, 0, 1, 0, "key 0: lost, absent (Open: value of w8.s1"},
		{"overwritten value back", func(s state) { s[2] = value(2, 9, 1, 40) }, 0, 0, 1, "key 2: value of w9.s1"},
	} {
		got := survived()
		tc.mutate(got)
		v := compareRepaired(survived(), got, 6)
		if v.compared != 6 || v.resurrected != tc.resurrected || v.lost != tc.lost || v.differing != tc.differing {
			t.Errorf("%s: %+v, want 6 compared, %d resurrected, %d lost, %d differing",
				tc.name, v, tc.resurrected, tc.lost, tc.differing)
		}
		if v.ok() != (tc.says == "") || !strings.Contains(strings.Join(v.problems, "\n"), tc.says) {
			t.Errorf("%s: ok %v, problems %q; want them to say %q", tc.name, v.ok(), v.problems, tc.says)
		}
	}
}

// TestSummaryOfCycleKilledBeforeOpen: a first cycle killed before its
// child's Open made the DB's directory has nothing to repair, and the
// repair summary counts it apart from the cycles it checked, so that keys
// compared stay exactly the checked cycles' keys. A CI run of TestShortRun
// counted such a cycle as checked: "repair: cycles 12, keys compared
// 6193" after "keys verified 6756", one cycle's 563 keys short.
func TestSummaryOfCycleKilledBeforeOpen(t *testing.T) {
	c, err := parseConfig([]string{"-dir", t.TempDir(), "-keys", "50", "-repair"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	// What a kill before the child's Open leaves: an empty ack log and no
	// db/, where check starts.
	if err := os.WriteFile(ackPath(c), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	cy := &cycle{cfg: c, n: 0, opts: tiny}
	v, _, err := cy.check(state{})
	if err != nil || !v.ok() {
		t.Fatalf("a kill before Open: verdict %+v, %v", v, err)
	}
	var rt repairTotals
	rt.add(cy.repair)
	line := rt.String()
	if checked, compared := summaryField(line, "cycles"), summaryField(line, "keys compared"); compared != checked*checkedKeys(50) {
		t.Errorf("%q: %d keys compared over %d cycles checked, want %d a cycle", line, compared, checked, checkedKeys(50))
	}
	if n := summaryField(line, "nothing to repair"); n != 1 {
		t.Errorf("%q: nothing to repair %d, want 1", line, n)
	}
}

// summaryField returns the number after name in a summary line, -1 if
// name is not there.
func summaryField(line, name string) int {
	m := regexp.MustCompile(`\b` + name + ` (\d+)`).FindStringSubmatch(line)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}
