package metamorphic

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// generator draws operations from a seed. It keeps just enough state to
// make operations meaningful: the keys live now (for overwrites and deletes
// of present keys), the open iterators and snapshots (so that moves and
// closes name one that exists).
type generator struct {
	rng    *rand.Rand
	keys   [][]byte // the keys written
	absent [][]byte // keys never written, some sorting between written ones
	live   map[string]bool
	iters  []int
	// iterPrefix holds the prefix of each open iterator that has one.
	iterPrefix map[int][]byte
	snaps      []int
	nextID     int
	n          int // operations generated so far
}

func newGenerator(seed uint64) *generator {
	rng := rand.New(rand.NewPCG(seed, 0x6d657461))
	g := &generator{rng: rng, live: map[string]bool{}, iterPrefix: map[int][]byte{}}
	// Key space size varies by seed: a few hot keys (many versions, much
	// shadowing) up to thousands (many tables, many levels).
	n := []int{16, 100, 400, 2000}[rng.IntN(4)]
	seen := map[string]bool{}
	add := func(k []byte) {
		if !seen[string(k)] {
			seen[string(k)] = true
			g.keys = append(g.keys, k)
		}
	}
	prefixes := []string{"a", "user/", "user/x", "z"}
	for i := 0; i < n; i++ {
		switch r := rng.IntN(10); {
		case r < 7:
			add([]byte(fmt.Sprintf("%s%05d", prefixes[rng.IntN(len(prefixes))], rng.IntN(10*n))))
		case r < 9: // binary keys, 0x00 and 0xff included
			k := make([]byte, rng.IntN(12))
			for j := range k {
				k[j] = byte(rng.IntN(256))
			}
			add(k)
		default: // long keys sharing a long prefix
			add(fmt.Appendf(nil, "%0200d", rng.IntN(10*n)))
		}
	}
	add([]byte{}) // the empty key sorts first
	for _, k := range g.keys {
		// k+"\x00" sorts right after k; "~" after most printable keys.
		for _, a := range [][]byte{append(slices.Clip(k), 0), append(slices.Clip(k), '~')} {
			if !seen[string(a)] {
				seen[string(a)] = true
				g.absent = append(g.absent, a)
			}
		}
	}
	return g
}

// generate returns the first n operations of seed's sequence.
func generate(seed uint64, n int) []op {
	g := newGenerator(seed)
	ops := make([]op, n)
	for i := range ops {
		ops[i] = g.next()
	}
	return ops
}

func (g *generator) anyKey() []byte { return g.keys[g.rng.IntN(len(g.keys))] }

func (g *generator) absentKey() []byte { return g.absent[g.rng.IntN(len(g.absent))] }

// liveKey returns a key live now, or any written key when few are live.
func (g *generator) liveKey() []byte {
	for range 8 {
		if k := g.anyKey(); g.live[string(k)] {
			return k
		}
	}
	return g.anyKey()
}

// readKey picks a key to read or seek to: live, absent, or any.
func (g *generator) readKey() []byte {
	switch g.rng.IntN(4) {
	case 0, 1:
		return g.liveKey()
	case 2:
		return g.absentKey()
	}
	k := g.anyKey()
	return k[:g.rng.IntN(len(k)+1)] // a prefix: lands between keys
}

// value is unique per operation, so an overwrite is told from the value
// it replaced; sizes are mostly small, now and then a few blocks; a third
// of them repeat an 8-byte pattern.
func (g *generator) value() []byte {
	v := fmt.Appendf(nil, "%d.", g.n)
	size := g.rng.IntN(32)
	switch r := g.rng.IntN(100); {
	case r == 0:
		size = 1024 + g.rng.IntN(5<<10)
	case r < 10:
		size = 32 + g.rng.IntN(300)
	}
	for range size {
		v = append(v, byte('a'+g.rng.IntN(26)))
	}
	if g.n%3 == 0 {
		// Compressible (snappy saves the 1/8 it needs to keep a block
		// compressed), with the same draws, so sequences stay as they were.
		for i := len(v) - size + 8; i < len(v); i++ {
			v[i] = v[i-8]
		}
	}
	return v
}

// bounds returns a random range, each end open half the time, lo <= hi.
func (g *generator) bounds() (lo, hi []byte) {
	if g.rng.IntN(2) == 0 {
		lo = g.readKey()
	}
	if g.rng.IntN(2) == 0 {
		hi = g.readKey()
	}
	if lo != nil && hi != nil && string(lo) > string(hi) {
		lo, hi = hi, lo
	}
	return lo, hi
}

// prefix draws an iterator's prefix under firstByte: of a live key, of a
// key written and perhaps deleted since, a byte few keys or none start
// with, the empty prefix (the empty key's alone), or a prefix longer than
// firstByte cuts, which no key has although keys start with its bytes.
// Never nil: nil is no prefix.
func (g *generator) prefix() []byte {
	switch g.rng.IntN(6) {
	case 0, 1:
		return firstByte.Prefix(g.liveKey())
	case 2:
		return firstByte.Prefix(g.anyKey())
	case 3:
		return []byte{byte(g.rng.IntN(256))}
	case 4:
		return []byte{}
	}
	k := g.anyKey()
	return k[:min(len(k), 2+g.rng.IntN(6))]
}

// prefixBounds returns bounds for an iterator over prefix p: mostly none,
// now and then an end inside the prefix, or anywhere.
func (g *generator) prefixBounds(p []byte) (lo, hi []byte) {
	switch g.rng.IntN(4) {
	case 0:
		lo, hi = g.bounds()
	case 1:
		lo, hi = g.bounds()
		if lo != nil {
			lo = append(slices.Clip(p), lo...)
		}
		if hi != nil {
			hi = append(slices.Clip(p), hi...)
		}
	}
	return lo, hi
}

// reader returns a snapshot id to read through, or -1 for the DB.
func (g *generator) reader() int {
	if len(g.snaps) > 0 && g.rng.IntN(3) == 0 {
		return g.snaps[g.rng.IntN(len(g.snaps))]
	}
	return -1
}

func (g *generator) put(k []byte) op {
	g.live[string(k)] = true
	return op{kind: opPut, key: k, value: g.value(), snap: -1, sync: g.rng.IntN(4) == 0}
}

func (g *generator) del(k []byte) op {
	delete(g.live, string(k))
	return op{kind: opDelete, key: k, snap: -1, sync: g.rng.IntN(4) == 0}
}

// next returns the next operation. Weights are per mille.
func (g *generator) next() op {
	defer func() { g.n++ }()
	for {
		switch r := g.rng.IntN(1000); {
		case r < 190:
			return g.put(g.anyKey())
		case r < 220:
			o := op{kind: opScan, id: g.nextID, snap: g.reader(), reverse: g.rng.IntN(2) == 0, prefix: g.prefix()}
			g.nextID++
			o.lo, o.hi = g.prefixBounds(o.prefix)
			return o
		case r < 300:
			return g.put(g.liveKey()) // an overwrite
		case r < 360:
			return g.del(g.liveKey())
		case r < 400:
			if g.rng.IntN(2) == 0 {
				return g.del(g.absentKey())
			}
			return g.del(g.anyKey())
		case r < 460:
			o := op{kind: opBatch, snap: -1, sync: g.rng.IntN(4) == 0}
			for range g.rng.IntN(20) {
				k := g.anyKey()
				if g.rng.IntN(8) == 0 && len(o.batch) > 0 {
					k = o.batch[g.rng.IntN(len(o.batch))].key // twice in one batch: the later write wins
				}
				if r := g.rng.IntN(30); r < 10 {
					delete(g.live, string(k))
					o.batch = append(o.batch, batchOp{del: true, key: k})
				} else if r < 12 {
					lo, hi := g.deleteRange()
					o.batch = append(o.batch, batchOp{del: true, key: lo, end: hi})
				} else {
					g.live[string(k)] = true
					o.batch = append(o.batch, batchOp{key: k, value: g.value()})
				}
			}
			return o
		case r < 600:
			return op{kind: opGet, key: g.readKey(), snap: g.reader()}
		case r < 625:
			if len(g.iters) >= 6 {
				continue
			}
			o := op{kind: opNewIter, id: g.nextID, snap: g.reader()}
			if g.rng.IntN(3) == 0 {
				o.prefix = g.prefix()
				o.lo, o.hi = g.prefixBounds(o.prefix)
				g.iterPrefix[o.id] = o.prefix
			} else {
				o.lo, o.hi = g.bounds()
			}
			g.nextID++
			g.iters = append(g.iters, o.id)
			return o
		case r < 790:
			if len(g.iters) == 0 {
				continue
			}
			o := op{id: g.iters[g.rng.IntN(len(g.iters))], snap: -1}
			o.kind = []opKind{opIterFirst, opIterLast, opIterSeekGE, opIterSeekLT, opIterNext, opIterNext, opIterNext, opIterPrev, opIterPrev, opIterPrev}[g.rng.IntN(10)]
			if o.kind == opIterSeekGE || o.kind == opIterSeekLT {
				o.key = g.readKey()
				if p, ok := g.iterPrefix[o.id]; ok && g.rng.IntN(2) == 0 {
					o.key = append(slices.Clip(p), o.key...) // inside the prefix
				}
			}
			return o
		case r < 810:
			if len(g.iters) == 0 {
				continue
			}
			i := g.rng.IntN(len(g.iters))
			id := g.iters[i]
			g.iters = slices.Delete(g.iters, i, i+1)
			delete(g.iterPrefix, id)
			return op{kind: opIterClose, id: id, snap: -1}
		case r < 840:
			o := op{kind: opScan, id: g.nextID, snap: g.reader(), reverse: g.rng.IntN(2) == 0}
			g.nextID++
			o.lo, o.hi = g.bounds()
			return o
		case r < 855:
			if len(g.snaps) >= 5 {
				continue
			}
			g.snaps = append(g.snaps, g.nextID)
			g.nextID++
			return op{kind: opNewSnapshot, id: g.snaps[len(g.snaps)-1], snap: -1}
		case r < 900:
			if len(g.snaps) == 0 {
				continue
			}
			return op{kind: opGet, key: g.readKey(), snap: g.snaps[g.rng.IntN(len(g.snaps))]}
		case r < 910:
			if len(g.snaps) == 0 {
				continue
			}
			i := g.rng.IntN(len(g.snaps))
			id := g.snaps[i]
			g.snaps = slices.Delete(g.snaps, i, i+1)
			return op{kind: opCloseSnapshot, id: id, snap: -1}
		case r < 930:
			return op{kind: opFlush, snap: -1}
		case r < 937:
			return op{kind: opCompact, snap: -1}
		case r < 950:
			o := op{kind: opCompactRange, snap: -1}
			o.lo, o.hi = g.bounds()
			return o
		case r < 955:
			g.iters, g.snaps = nil, nil // Reopen closes them
			clear(g.iterPrefix)
			return op{kind: opReopen, snap: -1, via: []reopenVia{viaOpen, viaOpen, viaRepair, viaCheckpoint}[g.rng.IntN(4)]}
		case r < 958:
			return op{kind: opCheckpoint, snap: -1}
		case r < 975:
			o := op{kind: opMultiGet, keys: make([][]byte, 1+g.rng.IntN(40)), snap: g.reader()}
			for i := range o.keys {
				o.keys[i] = g.readKey()
			}
			return o
		case r < 990:
			o := op{kind: opDeleteRange, snap: -1, sync: g.rng.IntN(4) == 0}
			o.lo, o.hi = g.deleteRange()
			return o
		default:
			return g.put(g.anyKey())
		}
	}
}

// deleteRange draws the range of a DeleteRange, lo < hi: between two keys
// read or sought, most often a few keys wide, now and then from the empty
// key or to past every key; the keys in it are live no more.
func (g *generator) deleteRange() (lo, hi []byte) {
	lo, hi = orderRange(g.readKey(), g.readKey())
	switch g.rng.IntN(10) {
	case 0:
		lo = []byte{}
	case 1:
		hi = []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	}
	lo, hi = orderRange(lo, hi)
	for k := range g.live {
		if k >= string(lo) && k < string(hi) {
			delete(g.live, k)
		}
	}
	return lo, hi
}
