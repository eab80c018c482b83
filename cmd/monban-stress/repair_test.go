package main

import (
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
