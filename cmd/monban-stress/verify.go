package main

import (
	"bytes"
	"fmt"
	"maps"
)

// state is a DB's contents by key index: nil (a missing entry) is absent.
// Values are never nil, since value always writes its prefix.
type state map[int][]byte

// verdict is what one verification found.
type verdict struct {
	checked, lost, unexpected int
	problems                  []string // the first maxProblems, for the report
}

const maxProblems = 40

func (v *verdict) fail(lost bool, format string, args ...any) {
	if lost {
		v.lost++
	} else {
		v.unexpected++
	}
	if len(v.problems) < maxProblems {
		kind := "unexpected"
		if lost {
			kind = "lost"
		}
		v.problems = append(v.problems, kind+": "+fmt.Sprintf(format, args...))
	}
}

// ok reports whether nothing was lost and nothing unexpected was found.
func (v verdict) ok() bool { return v.lost == 0 && v.unexpected == 0 }

// putID names one put: the key and the op (writer, seq).
type putID struct {
	key         int
	writer, seq uint64
}

// verify checks got, the DB read back after a kill, against base (the
// state verified at the end of the previous cycle) and ops, the cycle's
// ack log, for every key index below keys (doc.go, "Verification"):
//
//   - a key shows the effect of its last acknowledged op, or, when an op on
//     it was in flight at the kill, that op's effect;
//   - an in-flight batch shows its effect on all of its keys or on none;
//   - anything else is lost when it is an earlier state of the key (absent,
//     or a value some earlier write put there) and unexpected otherwise.
//
// writerBase is the cycle's first writer id: a lower one is an earlier
// cycle's. verify returns got, restricted to the checked keys, as the next
// cycle's base.
func verify(base state, ops []*op, got state, keys int, writerBase uint64) (verdict, state) {
	var v verdict
	want := maps.Clone(base)
	inFlight := map[int]*op{}
	puts := map[putID]bool{}
	for _, o := range ops {
		for _, e := range o.entries {
			if p := inFlight[e.key]; p != nil && p != o {
				// The child holds a key's lock from "S" to "D", so this is
				// a bug in the tool, not the DB; it voids the key's check.
				v.fail(false, "key %d: op %s started while op %s was in flight (ack log out of order)", e.key, opName(o), opName(p))
			}
			if !e.del {
				puts[putID{e.key, o.writer, o.seq}] = true
			}
			if o.done {
				want[e.key] = effect(o, e.key)
			} else {
				inFlight[e.key] = o
			}
		}
	}
	// applied counts, per in-flight op, the keys that show its effect and
	// those that show it did not run; a key its effect leaves unchanged
	// counts in neither.
	applied := map[*op]*[2]int{}
	next := state{}
	for k := range keys {
		v.checked++
		w, g, o := want[k], got[k], inFlight[k]
		if g != nil {
			next[k] = g
		}
		var eff []byte
		if o != nil {
			eff = effect(o, k)
			if applied[o] == nil {
				applied[o] = new([2]int)
			}
		}
		switch {
		case sameState(w, g):
			if o != nil && !sameState(eff, w) {
				applied[o][1]++
			}
		case o != nil && sameState(eff, g):
			applied[o][0]++
		case g == nil:
			v.fail(true, "key %d: absent, but %s was acknowledged", k, describe(k, w))
		case isEarlierValue(k, g, writerBase, puts):
			v.fail(true, "key %d: shows earlier %s, but %s was acknowledged", k, describe(k, g), describe(k, w))
		default:
			v.fail(false, "key %d: shows %s, which no write put there (acknowledged: %s)", k, describe(k, g), describe(k, w))
		}
	}
	for o, n := range applied {
		if n[0] > 0 && n[1] > 0 {
			v.fail(false, "batch %s in flight at the kill applied to %d of its keys and not to %d", opName(o), n[0], n[1])
		}
	}
	return v, next
}

// effect is the state op o leaves key k in; the last entry for k wins, as
// in a Batch.
func effect(o *op, k int) []byte {
	var v []byte
	for _, e := range o.entries {
		if e.key == k {
			v = nil
			if !e.del {
				v = value(k, o.writer, o.seq, e.size)
			}
		}
	}
	return v
}

func sameState(a, b []byte) bool { return bytes.Equal(a, b) && (a == nil) == (b == nil) }

// isEarlierValue reports whether g is a value some write put under k: one of
// an earlier cycle, or one of this cycle's puts.
func isEarlierValue(k int, g []byte, writerBase uint64, puts map[putID]bool) bool {
	w, s, ok := parseValue(k, g)
	return ok && (w < writerBase || puts[putID{k, w, s}])
}

func opName(o *op) string { return fmt.Sprintf("w%d.s%d", o.writer, o.seq) }

// describe names a key's state for a report: absent, the write a value
// came from, or (for a value no write made) its first bytes.
func describe(k int, v []byte) string {
	if v == nil {
		return "absent"
	}
	if w, s, ok := parseValue(k, v); ok {
		return fmt.Sprintf("value of w%d.s%d (%d bytes)", w, s, len(v))
	}
	return fmt.Sprintf("%q (%d bytes)", v[:min(len(v), 32)], len(v))
}
