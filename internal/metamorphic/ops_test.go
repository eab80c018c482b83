package metamorphic

import (
	"fmt"
	"slices"
	"strings"
)

// opKind names an operation. Reads (Get, the iterator moves, Scan) have
// outcomes the model referees; the rest report "ok" or an error.
type opKind uint8

const (
	opPut opKind = iota
	opDelete
	opBatch
	opGet      // through the DB, or snapshot snap when snap >= 0
	opMultiGet // keys in one MultiGet, through the DB or snapshot snap
	opNewIter  // iterator id over the DB or snapshot snap, bounds lo, hi, and prefix if not nil
	opIterFirst
	opIterLast
	opIterSeekGE
	opIterSeekLT
	opIterNext
	opIterPrev
	opIterClose
	opScan // a fresh iterator over [lo, hi) (and prefix) read to the end forward (or backward with reverse), then closed
	opNewSnapshot
	opCloseSnapshot
	opFlush
	opCompact
	opCompactRange // [lo, hi], nil bounds open
	opReopen       // close every iterator and snapshot, Close, (Repair,) Open
	opDeleteRange  // every key in [lo, hi), lo < hi
	opCheckpoint   // a Checkpoint, opened read-only and scanned whole, then removed
	numOpKinds
)

var opNames = [...]string{
	opPut: "Put", opDelete: "Delete", opBatch: "Batch", opGet: "Get", opMultiGet: "MultiGet",
	opNewIter: "NewIter", opIterFirst: "First", opIterLast: "Last",
	opIterSeekGE: "SeekGE", opIterSeekLT: "SeekLT", opIterNext: "Next",
	opIterPrev: "Prev", opIterClose: "CloseIter", opScan: "Scan",
	opNewSnapshot: "NewSnapshot", opCloseSnapshot: "CloseSnapshot",
	opFlush: "Flush", opCompact: "Compact", opCompactRange: "CompactRange",
	opReopen: "Reopen", opDeleteRange: "DeleteRange", opCheckpoint: "Checkpoint",
}

// op is one operation. Which fields matter depends on kind.
type op struct {
	kind       opKind
	key, value []byte
	lo, hi     []byte // iterator bounds, scan bounds, compaction range
	// prefix bounds an iterator or scan to the keys whose prefix under
	// firstByte it is (lsm.IterOptions.Prefix); nil for none, and empty
	// for the keys whose prefix is empty.
	prefix  []byte
	batch   []batchOp
	keys    [][]byte // MultiGet's
	id      int      // iterator id (iterator ops) or snapshot id (snapshot ops)
	snap    int      // for Get, NewIter and Scan: the snapshot read through, -1 for the DB
	reverse bool
	sync    bool      // Put, Delete, Batch: with lsm.Sync rather than the DB's default
	via     reopenVia // how a Reopen comes back
}

// reopenVia is the way a Reopen takes back to an open DB.
type reopenVia uint8

const (
	viaOpen reopenVia = iota // Close, Open
	// viaRepair runs Repair between Close and Open: on a healthy, cleanly
	// closed DB it must keep every key and find nothing wrong.
	viaRepair
	// viaCheckpoint writes a Checkpoint into a new directory while the
	// iterators and snapshots are still open, closes the DB, removes its
	// directory and opens the checkpoint, where the DB goes on: a
	// checkpoint must hold every write and depend on nothing of its
	// source's.
	viaCheckpoint
)

// batchOp is one write of a batch; a nil value with del set is a delete,
// and with end set too a deletion of [key, end).
type batchOp struct {
	del        bool
	key, value []byte
	end        []byte
}

func (o op) String() string {
	var b strings.Builder
	b.WriteString(opNames[o.kind])
	if o.sync {
		b.WriteString(" sync")
	}
	switch o.via {
	case viaRepair:
		b.WriteString(" repair")
	case viaCheckpoint:
		b.WriteString(" checkpoint")
	}
	on := func() {
		if o.snap >= 0 {
			fmt.Fprintf(&b, " snap%d", o.snap)
		} else {
			b.WriteString(" db")
		}
	}
	switch o.kind {
	case opPut:
		fmt.Fprintf(&b, " %s=%s", showKey(o.key), showValue(o.value))
	case opDelete:
		fmt.Fprintf(&b, " %s", showKey(o.key))
	case opBatch:
		for i, w := range o.batch {
			if i > 0 {
				b.WriteByte(',')
			}
			switch {
			case w.end != nil:
				fmt.Fprintf(&b, " delrange [%s, %s)", showKey(w.key), showKey(w.end))
			case w.del:
				fmt.Fprintf(&b, " del %s", showKey(w.key))
			default:
				fmt.Fprintf(&b, " %s=%s", showKey(w.key), showValue(w.value))
			}
		}
	case opGet:
		on()
		fmt.Fprintf(&b, " %s", showKey(o.key))
	case opMultiGet:
		on()
		for _, k := range o.keys {
			fmt.Fprintf(&b, " %s", showKey(k))
		}
	case opNewIter, opScan:
		fmt.Fprintf(&b, " iter%d", o.id)
		on()
		fmt.Fprintf(&b, " [%s, %s)", showBound(o.lo), showBound(o.hi))
		if o.prefix != nil {
			fmt.Fprintf(&b, " prefix %s", showKey(o.prefix))
		}
		if o.kind == opScan && o.reverse {
			b.WriteString(" reverse")
		}
	case opIterSeekGE, opIterSeekLT:
		fmt.Fprintf(&b, " iter%d %s", o.id, showKey(o.key))
	case opIterFirst, opIterLast, opIterNext, opIterPrev, opIterClose:
		fmt.Fprintf(&b, " iter%d", o.id)
	case opNewSnapshot, opCloseSnapshot:
		fmt.Fprintf(&b, " snap%d", o.id)
	case opCompactRange:
		fmt.Fprintf(&b, " [%s, %s]", showBound(o.lo), showBound(o.hi))
	case opDeleteRange:
		fmt.Fprintf(&b, " [%s, %s)", showKey(o.lo), showKey(o.hi))
	}
	return b.String()
}

// deleteRange deletes the keys of view in [lo, hi): the model of
// DeleteRange, in a batch or alone.
func deleteRange(view map[string]string, lo, hi []byte) {
	for k := range view {
		if k >= string(lo) && k < string(hi) {
			delete(view, k)
		}
	}
}

// orderRange returns lo and hi as a DeleteRange needs them, lo < hi: in
// order, and a range of one key when they are equal.
func orderRange(lo, hi []byte) ([]byte, []byte) {
	if string(lo) > string(hi) {
		lo, hi = hi, lo
	}
	if string(lo) == string(hi) {
		hi = append(slices.Clip(lo), 0)
	}
	return lo, hi
}

func showKey(k []byte) string { return fmt.Sprintf("%q", k) }

func showBound(k []byte) string {
	if k == nil {
		return "nil"
	}
	return showKey(k)
}

// showValue prints short values whole and long ones as a prefix and a
// length.
func showValue(v []byte) string {
	if len(v) <= 24 {
		return fmt.Sprintf("%q", v)
	}
	return fmt.Sprintf("%q…(%d bytes)", v[:16], len(v))
}

// showDiff shortens outcome s for a failure message, keeping where it
// first differs from other: a scan's outcome can be kilobytes.
func showDiff(s, other string) string {
	i := 0
	for i < len(s) && i < len(other) && s[i] == other[i] {
		i++
	}
	from := max(0, i-120)
	if j := strings.LastIndexByte(s[from:i], ' '); j >= 0 && from > 0 {
		from += j + 1 // start at an entry
	}
	to := min(len(s), i+200)
	out := s[from:to]
	if from > 0 {
		out = fmt.Sprintf("…(%d bytes) %s", from, out)
	}
	if to < len(s) {
		out += fmt.Sprintf("…(%d bytes more)", len(s)-to)
	}
	return out
}

// within reports whether an iterator or scan o sees key k: k is in
// [lo, hi), and when o has a prefix, k's prefix under firstByte is it.
func (o op) within(k []byte) bool {
	return (o.lo == nil || string(k) >= string(o.lo)) && (o.hi == nil || string(k) < string(o.hi)) &&
		(o.prefix == nil || string(firstByte.Prefix(k)) == string(o.prefix))
}
