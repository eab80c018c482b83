package metamorphic

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// model is the referee: a map for the DB, a copy of it per snapshot, and
// per iterator the sorted entries of its view within its bounds.
type model struct {
	m     map[string]string
	snaps map[int]map[string]string
	iters map[int]*sliceIter
}

func newModel() *model {
	return &model{m: map[string]string{}, snaps: map[int]map[string]string{}, iters: map[int]*sliceIter{}}
}

// view returns the map a read through snapshot id (or the DB, -1) sees.
func (m *model) view(snap int) map[string]string {
	if snap >= 0 {
		return m.snaps[snap]
	}
	return m.m
}

// get is a Get's outcome through snapshot snap, or the DB for -1.
func (m *model) get(snap int, key []byte) string {
	v, ok := m.view(snap)[string(key)]
	if !ok {
		return outcomeNotFound
	}
	return valueOutcome([]byte(v))
}

// iter returns the entries an iterator or scan o sees: its view's keys
// within its bounds, and of its prefix under firstByte if it has one.
func (m *model) iter(o op) *sliceIter {
	view := m.view(o.snap)
	it := &sliceIter{pos: -1}
	for _, k := range slices.Sorted(maps.Keys(view)) {
		if o.within([]byte(k)) {
			it.keys = append(it.keys, k)
			it.vals = append(it.vals, view[k])
		}
	}
	return it
}

// sliceIter is a cursor over sorted entries with lsm.Iter's moves; pos -1
// is invalid, and, like lsm.Iter, Next and Prev on an invalid iterator
// leave it invalid. The model's iterators are sliceIters, and so are the
// runner's prefix iterators on a DB that cannot cut firstByte's prefixes.
type sliceIter struct {
	keys, vals []string
	pos        int
}

var _ cursor = (*sliceIter)(nil)

func (it *sliceIter) First() bool { return it.at(0) }
func (it *sliceIter) Last() bool  { return it.at(len(it.keys) - 1) }

func (it *sliceIter) SeekGE(key []byte) bool {
	i, _ := slices.BinarySearch(it.keys, string(key))
	return it.at(i)
}

func (it *sliceIter) SeekLT(key []byte) bool {
	i, _ := slices.BinarySearch(it.keys, string(key))
	return it.at(i - 1)
}

func (it *sliceIter) Next() bool { return it.pos >= 0 && it.at(it.pos+1) }
func (it *sliceIter) Prev() bool { return it.pos >= 0 && it.at(it.pos-1) }

func (it *sliceIter) at(i int) bool {
	if i < 0 || i >= len(it.keys) {
		it.pos = -1
		return false
	}
	it.pos = i
	return true
}

func (it *sliceIter) Valid() bool   { return it.pos >= 0 }
func (it *sliceIter) Key() []byte   { return []byte(it.keys[it.pos]) }
func (it *sliceIter) Value() []byte { return []byte(it.vals[it.pos]) }
func (it *sliceIter) Err() error    { return nil }
func (it *sliceIter) Close() error  { return nil }

// apply runs o on the model and returns the outcome the DB must give.
func (m *model) apply(o op) string {
	switch o.kind {
	case opPut:
		m.m[string(o.key)] = string(o.value)
	case opDelete:
		delete(m.m, string(o.key))
	case opDeleteRange:
		deleteRange(m.m, o.lo, o.hi)
	case opBatch:
		for _, w := range o.batch {
			switch {
			case w.end != nil:
				deleteRange(m.m, w.key, w.end)
			case w.del:
				delete(m.m, string(w.key))
			default:
				m.m[string(w.key)] = string(w.value)
			}
		}
	case opGet:
		return m.get(o.snap, o.key)
	case opMultiGet:
		outcomes := make([]string, len(o.keys))
		for i, k := range o.keys {
			outcomes[i] = m.get(o.snap, k)
		}
		return multiOutcome(outcomes)
	case opNewIter:
		m.iters[o.id] = m.iter(o)
	case opIterFirst, opIterLast, opIterSeekGE, opIterSeekLT, opIterNext, opIterPrev:
		return moveOutcome(m.iters[o.id], o)
	case opIterClose:
		delete(m.iters, o.id)
	case opScan:
		return scanOutcome(m.iter(o), o.reverse)
	case opCheckpoint:
		return scanOutcome(m.iter(o), false) // o has no bounds: the whole DB
	case opNewSnapshot:
		m.snaps[o.id] = maps.Clone(m.m)
	case opCloseSnapshot:
		delete(m.snaps, o.id)
	case opReopen:
		clear(m.iters)
		clear(m.snaps)
	}
	return outcomeOK
}

// Outcomes. Both sides format with these, so only equality matters.
const (
	outcomeOK       = "ok"
	outcomeNotFound = "not found"
)

func valueOutcome(v []byte) string { return "value " + string(v) }

// multiOutcome joins a MultiGet's outcomes, one per key.
func multiOutcome(outcomes []string) string { return strings.Join(outcomes, " | ") }

func entryOutcome(k, v []byte) string { return fmt.Sprintf("%q=%q", k, v) }

func errOutcome(err error) string { return "error: " + err.Error() }
