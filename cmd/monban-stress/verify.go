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
	e := newExpectation(base)
	for _, o := range ops {
		for _, en := range o.entries {
			if p := e.pending[en.key]; len(p) > 0 && p[len(p)-1] != o {
				// The child holds a key's lock from "S" to "D", so this is
				// a bug in the tool, not the DB; it voids the key's check.
				v.fail(false, "key %d: op %s started while op %s was in flight (ack log out of order)", en.key, opName(o), opName(p[len(p)-1]))
			}
		}
		e.add(o, o.acked == 0)
	}
	v.judge(e, got, keys, writerBase, "in flight at the kill")
	next := state{}
	for k := range keys {
		if got[k] != nil {
			next[k] = got[k]
		}
	}
	return v, next
}

// verifyCheckpoint checks got, checkpoint ck read back, against base and
// ops as verify checks a DB after a kill, but over the checkpoint's window
// (doc.go, "Verification"): an op acknowledged before ck's "C" record is in
// it, one started after its "K" record is not, and one in between, in
// flight at some time while Checkpoint ran, may be in it, on all of its
// keys or on none. A checkpoint the kill cut short has no "K": every op
// started before the kill is in its window.
func verifyCheckpoint(base state, ops []*op, ck *checkpoint, got state, keys int, writerBase uint64) verdict {
	e := newExpectation(base)
	for _, o := range ops {
		if ck.done > 0 && o.started > ck.done {
			break // ops are in the order they started
		}
		e.add(o, o.acked == 0 || o.acked > ck.started)
	}
	var v verdict
	v.judge(e, got, keys, writerBase, fmt.Sprintf("in flight during checkpoint %d", ck.id))
	return v
}

// expectation is what a DB read back may hold, key by key: the state the
// ops it must hold leave (settled), or that after a prefix of the ops on
// the key it may or may not hold (pending), which are in the order they
// committed (the ack log's per key, invariant 2).
type expectation struct {
	settled state
	pending map[int][]*op
	puts    map[putID]bool // every put of the cycle so far: earlier values
}

func newExpectation(base state) expectation {
	return expectation{settled: maps.Clone(base), pending: map[int][]*op{}, puts: map[putID]bool{}}
}

// add counts o, the next op in the log, as settled or as pending.
func (e expectation) add(o *op, pending bool) {
	for _, en := range o.entries {
		k := en.key
		if !en.del {
			e.puts[putID{k, o.writer, o.seq}] = true
		}
		switch p := e.pending[k]; {
		case !pending:
			e.settled[k] = effect(o, k)
		case len(p) == 0 || p[len(p)-1] != o:
			e.pending[k] = append(p, o)
		}
	}
}

// judge checks got against e for every key index below keys, into v: a
// key shows its settled state or that after some of its pending ops, and
// a pending op shows on all of its keys or on none. during says when the
// pending ops were in flight, for the report.
func (v *verdict) judge(e expectation, got state, keys int, writerBase uint64, during string) {
	// applied counts, per pending op, the keys that show its effect and
	// those that show it did not run; a key whose state does not tell
	// counts in neither.
	applied := map[*op]*[2]int{}
	for k := range keys {
		v.checked++
		w, g, p := e.settled[k], got[k], e.pending[k]
		// g is the state after the first n ops of p for each n from lo to
		// hi that matches (more than one only where ops leave the same
		// state: deletes); -1 when none does.
		lo, hi := -1, -1
		for n := 0; n <= len(p); n++ {
			s := w
			if n > 0 {
				s = effect(p[n-1], k)
			}
			if sameState(s, g) {
				if lo < 0 {
					lo = n
				}
				hi = n
			}
		}
		switch {
		case lo >= 0:
			for i, o := range p {
				if applied[o] == nil {
					applied[o] = new([2]int)
				}
				switch {
				case i < lo:
					applied[o][0]++
				case i >= hi:
					applied[o][1]++
				}
			}
		case g == nil:
			v.fail(true, "key %d: absent, but %s was acknowledged", k, describe(k, w))
		case isEarlierValue(k, g, writerBase, e.puts):
			v.fail(true, "key %d: shows earlier %s, but %s was acknowledged", k, describe(k, g), describe(k, w))
		default:
			v.fail(false, "key %d: shows %s, which no write put there (acknowledged: %s)", k, describe(k, g), describe(k, w))
		}
	}
	for o, n := range applied {
		if n[0] > 0 && n[1] > 0 {
			v.fail(false, "batch %s %s applied to %d of its keys and not to %d", opName(o), during, n[0], n[1])
		}
	}
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
