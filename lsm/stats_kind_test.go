package lsm

import (
	"reflect"
	"testing"

	"github.com/monbandb/monban/compaction"
)

// TestCompactionKindsCounted: each compaction.Kind is counted in a
// Stats.Compactions field of its own, and every field counts some kind.
func TestCompactionKindsCounted(t *testing.T) {
	owner := map[string]compaction.Kind{}
	for k := range compaction.NumKinds {
		var c CompactionCounts
		*c.of(k) = 1
		v := reflect.ValueOf(c)
		var set []string
		for i := range v.NumField() {
			if v.Field(i).Uint() != 0 {
				set = append(set, v.Type().Field(i).Name)
			}
		}
		if len(set) != 1 {
			t.Fatalf("kind %v set fields %v, want one", k, set)
		}
		if prev, ok := owner[set[0]]; ok {
			t.Errorf("kinds %v and %v are both counted in Compactions.%s", prev, k, set[0])
		}
		owner[set[0]] = k
	}
	if n := reflect.TypeFor[CompactionCounts]().NumField(); len(owner) != n {
		t.Errorf("%d kinds fill %d of CompactionCounts' %d fields", compaction.NumKinds, len(owner), n)
	}
	defer func() {
		if recover() == nil {
			t.Error("a kind past NumKinds was counted; want a panic")
		}
	}()
	var c CompactionCounts
	c.of(compaction.NumKinds)
}
