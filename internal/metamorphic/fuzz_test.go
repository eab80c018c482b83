package metamorphic

import (
	"bytes"
	"fmt"
	"testing"
)

// FuzzDB decodes bytes into operations (decodeOps) and runs them on one
// DB, chosen among fixedConfigs by the first byte (modulo their number: a
// new configuration remaps old inputs, so fix the first byte of a kept
// crasher), on an in-memory file system; every outcome must be the
// model's. Reopen is one of the
// operations, so recovery from the WAL and manifest is checked too.
func FuzzDB(f *testing.F) {
	f.Add([]byte{0})
	// put k1; get k1; flush; reopen; get k1
	f.Add([]byte{1, 0, 1, 5, 7, 1, 17, 19, 7, 1})
	// puts and deletes around the empty key, flushes, a reopen, a compaction
	f.Add([]byte{10, 0, 32, 3, 4, 2, 0, 1, 2, 17, 0, 3, 9, 19, 0, 5, 1, 17, 18, 0, 7, 2, 14, 0, 0, 1})
	// an iterator walked both ways across a flush
	f.Add([]byte{2, 0, 1, 1, 0, 2, 1, 0, 3, 1, 9, 0, 0, 17, 10, 0, 1, 11, 0, 4, 12, 0, 5, 11, 0, 3})
	// a snapshot read after an overwrite, a delete and a compaction
	f.Add([]byte{11, 0, 4, 9, 15, 0, 4, 2, 4, 4, 18, 1, 16, 0, 4, 14, 1})
	// a batch that writes and deletes the same key, then a scan
	f.Add([]byte{5, 6, 4, 0, 6, 3, 1, 6, 0, 2, 7, 1, 0, 8, 4, 14, 0, 17, 14, 1})
	// under firstByte: scans over the prefixes "k", "" (reverse) and "k0"
	// (reverse) of a table and a memtable, after a delete
	f.Add([]byte{20, 0, 5, 3, 0, 32, 3, 17, 0, 35, 2, 4, 5, 14, 0, 0, 0, 6, 14, 0, 0, 0, 3, 14, 0, 0, 0, 27})
	// split-reopened: a table built with no Split, then scanned over "k"
	// under firstByte; one built under firstByte, scanned under twoBytes
	f.Add([]byte{22, 0, 5, 3, 17, 19, 14, 0, 0, 0, 6, 0, 7, 3, 17, 19, 14, 0, 0, 0, 7})
	// put k01; a checkpoint scanned; put k02 and a snapshot; reopen into
	// a checkpoint; get k01; scan
	f.Add([]byte{3, 0, 1, 5, 19, 5, 0, 2, 3, 15, 19, 1, 7, 1, 14, 0, 0, 0, 0})
	for cfg := range fixedConfigs {
		f.Add([]byte{byte(cfg), 0, 1, 200, 0, 2, 250, 4, 1, 17, 0, 3, 9, 6, 5, 0, 4, 4, 1, 4, 2, 2, 0, 7, 1, 17, 18, 1, 19, 14, 0, 7, 2})
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzInput {
			return
		}
		cfg, ops := decodeOps(data)
		r, err := newRunner(cfg)
		if err != nil {
			t.Fatalf("%s: Open: %v", cfg.name, err)
		}
		defer r.close()
		m := newModel()
		for i, o := range ops {
			got, want := r.apply(o), m.apply(o)
			if got != want {
				t.Fatalf("%s: op %d %s:\n  db:    %s\n  model: %s\n%s", cfg.name, i, o, showDiff(got, want), showDiff(want, got), context(ops, i))
			}
		}
		if err := r.close(); err != nil {
			t.Fatalf("%s: Close: %v", cfg.name, err)
		}
	})
}

// maxFuzzInput bounds an input's length (about 40 operations). The fuzzer
// minimizes every input that finds new coverage, trying a number of
// candidates quadratic in its length, each an Open and the operations: at
// 200 bytes that stalled a run for 50 s of 60.
const maxFuzzInput = 128

// maxFuzzOps bounds the operations of one input.
const maxFuzzOps = 64

// decodeOps turns bytes into a configuration and operations: a byte picks
// the configuration, then each operation is an opcode byte followed by
// the bytes its arguments need (a key, a value size, bounds). Missing bytes
// read as 0, so every input decodes.
func decodeOps(data []byte) (config, []op) {
	d := &opDecoder{data: data}
	cfg := fixedConfigs[int(d.byte())%len(fixedConfigs)]
	var ops []op
	for len(d.data) > 0 && len(ops) < maxFuzzOps {
		if o, ok := d.op(len(ops)); ok {
			ops = append(ops, o)
		}
	}
	return cfg, ops
}

type opDecoder struct {
	data  []byte
	iters []int
	snaps []int
	next  int // the next iterator or snapshot id
}

func (d *opDecoder) byte() byte {
	if len(d.data) == 0 {
		return 0
	}
	b := d.data[0]
	d.data = d.data[1:]
	return b
}

// fuzzKeys are the keys a byte names: 32 short ones and some that test
// edges (the empty key, bytes 0x00 and 0xff, a long key, keys between two
// others).
var fuzzKeys = func() [][]byte {
	var ks [][]byte
	for i := range 32 {
		ks = append(ks, fmt.Appendf(nil, "k%02d", i))
	}
	return append(ks, []byte{}, []byte{0}, []byte{0xff, 0xff}, bytes.Repeat([]byte("L"), 300),
		[]byte("k05\x00"), []byte("k1"), []byte("k"), []byte("k31~"))
}()

// fuzzPrefixes are the prefixes a scan's byte names: firstByte's of
// fuzzKeys, the empty one (the empty key's), a byte no key starts with,
// and some longer than firstByte cuts.
var fuzzPrefixes = [][]byte{{}, []byte("k"), {0}, {0xff}, []byte("L"), []byte("m"), []byte("k0"), []byte("k1"), []byte("k05")}

func (d *opDecoder) key() []byte { return fuzzKeys[int(d.byte())%len(fuzzKeys)] }

// bound is a key or, for byte 0, no bound.
func (d *opDecoder) bound() []byte {
	b := d.byte()
	if b == 0 {
		return nil
	}
	return fuzzKeys[int(b-1)%len(fuzzKeys)]
}

// value is unique to operation i; a size byte of 250 or more makes it span
// several blocks.
func (d *opDecoder) value(i, j int) []byte {
	n := int(d.byte())
	if n >= 250 {
		n = 3000 + 500*(n-250)
	} else {
		n %= 64
	}
	v := fmt.Appendf(nil, "v%d.%d.", i, j)
	return append(v, bytes.Repeat([]byte{'a' + byte(i%26)}, n)...)
}

func (d *opDecoder) pick(ids []int) int { return ids[int(d.byte())%len(ids)] }

func (d *opDecoder) reader() int {
	if b := d.byte(); len(d.snaps) > 0 && b%2 == 1 {
		return d.snaps[int(b/2)%len(d.snaps)]
	}
	return -1
}

// op decodes operation i; false when the opcode needs an iterator or a
// snapshot and none is open.
func (d *opDecoder) op(i int) (op, bool) {
	o := op{snap: -1}
	switch d.byte() % 20 {
	case 0, 1, 2, 3:
		o.kind, o.key, o.value = opPut, d.key(), d.value(i, 0)
	case 4:
		o.kind, o.key = opDelete, d.key()
	case 5:
		o.kind = opDeleteRange
		o.lo, o.hi = orderRange(d.key(), d.key())
	case 6:
		o.kind = opBatch
		for j := range int(d.byte() % 8) {
			if k, b := d.key(), d.byte(); b%6 == 0 {
				o.batch = append(o.batch, batchOp{del: true, key: k})
			} else if b%6 == 3 {
				lo, hi := orderRange(k, d.key())
				o.batch = append(o.batch, batchOp{del: true, key: lo, end: hi})
			} else {
				o.batch = append(o.batch, batchOp{key: k, value: d.value(i, j)})
			}
		}
	case 7:
		o.kind, o.key = opGet, d.key()
	case 8:
		o.kind, o.snap, o.keys = opMultiGet, d.reader(), make([][]byte, d.byte()%16)
		for j := range o.keys {
			o.keys[j] = d.key()
		}
	case 9:
		if len(d.iters) >= 4 {
			return o, false
		}
		o.kind, o.id, o.snap, o.lo, o.hi = opNewIter, d.next, d.reader(), d.bound(), d.bound()
		d.iters = append(d.iters, d.next)
		d.next++
	case 10, 11, 12:
		if len(d.iters) == 0 {
			return o, false
		}
		o.id = d.pick(d.iters)
		o.kind = []opKind{opIterFirst, opIterLast, opIterSeekGE, opIterSeekLT, opIterNext, opIterPrev}[d.byte()%6]
		if o.kind == opIterSeekGE || o.kind == opIterSeekLT {
			o.key = d.key()
		}
	case 13:
		if len(d.iters) == 0 {
			return o, false
		}
		o.kind, o.id = opIterClose, d.pick(d.iters)
		d.iters = removeID(d.iters, o.id)
	case 14:
		o.kind, o.id, o.snap = opScan, d.next, d.reader()
		o.lo, o.hi = d.bound(), d.bound()
		b := d.byte()
		o.reverse = b%2 == 1
		if b&2 != 0 {
			o.prefix = fuzzPrefixes[int(b>>2)%len(fuzzPrefixes)]
		}
		d.next++
	case 15:
		if len(d.snaps) >= 4 {
			o.kind, o.id = opCloseSnapshot, d.pick(d.snaps)
			d.snaps = removeID(d.snaps, o.id)
			break
		}
		o.kind, o.id = opNewSnapshot, d.next
		d.snaps = append(d.snaps, d.next)
		d.next++
	case 16:
		if len(d.snaps) == 0 {
			return o, false
		}
		o.kind, o.key, o.snap = opGet, d.key(), d.pick(d.snaps)
	case 17:
		o.kind = opFlush
	case 18:
		if o.lo, o.hi = d.bound(), d.bound(); o.lo == nil && o.hi == nil {
			o.kind = opCompact
		} else {
			o.kind = opCompactRange
			if o.lo != nil && o.hi != nil && string(o.lo) > string(o.hi) {
				o.lo, o.hi = o.hi, o.lo // as the generator's bounds: lo above hi is ErrInvalidRange
			}
		}
	case 19:
		o.kind = opReopen
		switch d.byte() % 8 {
		case 0, 4:
			o.via = viaRepair
		case 1:
			o.via = viaCheckpoint
		case 5:
			o.kind = opCheckpoint
		}
		if o.kind == opReopen {
			d.iters, d.snaps = nil, nil
		}
	}
	return o, true
}

func removeID(ids []int, id int) []int {
	for i, x := range ids {
		if x == id {
			return append(ids[:i:i], ids[i+1:]...)
		}
	}
	return ids
}
