package memtable

import (
	"errors"
	"testing"
)

// TestAddRangeDelete: range tombstones live beside the tree, not in it:
// they count toward the size and emptiness, not toward Len or the filter,
// and Get ignores them (the engine applies them).
func TestAddRangeDelete(t *testing.T) {
	m := New(Options{})
	if m.HasRangeDels() || m.RangeDels().Len() != 0 {
		t.Fatal("a new memtable has range tombstones")
	}
	if err := m.Add(1, 1, []byte("b"), []byte("v")); err != nil {
		t.Fatal(err)
	}
	size := m.ApproximateSize()
	if err := m.AddRangeDelete(2, []byte("a"), []byte("c")); err != nil {
		t.Fatal(err)
	}
	if m.Len() != 1 || !m.HasRangeDels() || m.ApproximateSize() <= size {
		t.Fatalf("Len %d, has range dels %v, size %d after %d", m.Len(), m.HasRangeDels(), m.ApproximateSize(), size)
	}
	if seq, ok := m.RangeDels().Covering([]byte("b"), 2); !ok || seq != 2 {
		t.Fatalf("Covering(b) = %d, %v", seq, ok)
	}
	if _, res := m.Get([]byte("b"), 2); res != Found {
		t.Fatalf("Get sees the range tombstone: %v", res)
	}
	if err := m.AddRangeDelete(3, []byte("c"), []byte("c")); !errors.Is(err, ErrInvalidEntry) {
		t.Fatalf("empty range: %v", err)
	}
	e := New(Options{})
	if err := e.AddRangeDelete(1, nil, []byte("z")); err != nil || e.Empty() {
		t.Fatalf("a memtable of one range tombstone: err %v, empty %v", err, e.Empty())
	}
	e.Freeze()
	if err := e.AddRangeDelete(2, nil, []byte("z")); !errors.Is(err, ErrFrozen) {
		t.Fatalf("after Freeze: %v", err)
	}
	if got := e.RangeTombstones(); len(got) != 1 || string(got[0].End) != "z" {
		t.Fatalf("RangeTombstones %v", got)
	}
}
