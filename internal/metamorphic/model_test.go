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
	iters map[int]*modelIter
}

// modelIter is a position in a sorted view; pos -1 is invalid. Like
// lsm.Iter, Next and Prev on an invalid iterator leave it invalid.
type modelIter struct {
	keys, vals []string
	pos        int
}

func newModel() *model {
	return &model{m: map[string]string{}, snaps: map[int]map[string]string{}, iters: map[int]*modelIter{}}
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

func newModelIter(view map[string]string, lo, hi []byte) *modelIter {
	it := &modelIter{pos: -1}
	for _, k := range slices.Sorted(maps.Keys(view)) {
		if (lo == nil || k >= string(lo)) && (hi == nil || k < string(hi)) {
			it.keys = append(it.keys, k)
			it.vals = append(it.vals, view[k])
		}
	}
	return it
}

func (it *modelIter) outcome() string {
	if it.pos < 0 || it.pos >= len(it.keys) {
		it.pos = -1
		return "invalid"
	}
	return entryOutcome([]byte(it.keys[it.pos]), []byte(it.vals[it.pos]))
}

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
		m.iters[o.id] = newModelIter(m.view(o.snap), o.lo, o.hi)
	case opIterFirst, opIterLast, opIterSeekGE, opIterSeekLT, opIterNext, opIterPrev:
		it := m.iters[o.id]
		switch o.kind {
		case opIterFirst:
			it.pos = 0
		case opIterLast:
			it.pos = len(it.keys) - 1
		case opIterSeekGE:
			it.pos, _ = slices.BinarySearch(it.keys, string(o.key))
		case opIterSeekLT:
			i, _ := slices.BinarySearch(it.keys, string(o.key))
			it.pos = i - 1
		case opIterNext:
			if it.pos >= 0 {
				it.pos++
			}
		case opIterPrev:
			if it.pos >= 0 {
				it.pos--
			}
		}
		return it.outcome()
	case opIterClose:
		delete(m.iters, o.id)
	case opScan:
		it := newModelIter(m.view(o.snap), o.lo, o.hi)
		var b strings.Builder
		for i := range it.keys {
			if o.reverse {
				i = len(it.keys) - 1 - i
			}
			b.WriteString(entryOutcome([]byte(it.keys[i]), []byte(it.vals[i])))
			b.WriteByte(' ')
		}
		return b.String()
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
