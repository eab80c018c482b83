package compaction

import "testing"

// TestKindStrings: every kind has a name of its own, and a value past the
// last kind prints as a number rather than as one of them.
func TestKindStrings(t *testing.T) {
	seen := map[string]Kind{}
	for k := range NumKinds {
		s := k.String()
		if prev, ok := seen[s]; ok {
			t.Errorf("kinds %d and %d are both %q", prev, k, s)
		}
		seen[s] = k
	}
	if got := NumKinds.String(); got != "Kind(7)" {
		t.Errorf("NumKinds.String() = %q, want Kind(7)", got)
	}
}
