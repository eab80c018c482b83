package filter

import (
	"math/rand/v2"
	"testing"
)

// wordsRead replays the walk of a Maplet lookup of hash h word by word
// and returns the words it reads, counted from the first block of the
// quotient's cluster as linesRead counts them (a cluster that wraps goes
// on past the table's end): what LookupLines' line count must span.
func wordsRead(m *Maplet, h uint64) []uint64 {
	f := &m.qf
	if f.n == 0 {
		return nil
	}
	fq, _ := m.split(h)
	if !f.bit(qfOcc, fq) {
		return []uint64{(fq>>6)*f.stride + qfOcc}
	}
	cs, k := f.clusterStart(fq)
	unwrap := func(i uint64) uint64 {
		if i < cs {
			return i + f.slots
		}
		return i
	}
	var words []uint64
	readBlock := func(b, off uint64) { words = append(words, b*f.stride+off) } // b unwrapped
	read := func(i, off uint64) { readBlock(unwrap(i)>>6, off) }
	// clusterStart: occupied and shifted words from fq's block back to cs's.
	for b := unwrap(fq) >> 6; ; b-- {
		readBlock(b, qfOcc)
		readBlock(b, qfShift)
		if b == cs>>6 {
			break
		}
	}
	// selectFree: continuation words from cs's block to the run's.
	rs := f.selectFree(qfCont, cs, k)
	for b := cs >> 6; b <= unwrap(rs)>>6; b++ {
		readBlock(b, qfCont)
	}
	// The run: each slot's remainder, then the next slot's continuation bit.
	for i := rs; ; {
		off := (i & 63) * uint64(f.rbits)
		read(i, qfRem+off>>6)
		read(i, qfRem+(off+uint64(f.rbits)-1)>>6)
		i = f.next(i)
		read(i, qfCont)
		if !f.bit(qfCont, i) {
			return words
		}
	}
}

// TestMapletLookupLines checks LookupLines against a word-by-word replay
// of the lookup's walk, over maplets filled to loads where clusters span
// blocks: the same runs as Lookup, and a line count spanning exactly the
// first to the last word read, which is the number of lines those words
// lie in (LookupLines: none is stepped over at these loads).
func TestMapletLookupLines(t *testing.T) {
	rng := rand.New(rand.NewPCG(29, 64))
	for _, tc := range []struct {
		slots uint64
		p     uint
		load  float64
	}{{1024, 7, 0.5}, {4032, 7, 0.9}, {4096, 9, 0.95}, {16320, 6, 0.8}} {
		m, err := NewMaplet(tc.slots, tc.p, []uint8{1, 2, 3, 3})
		if err != nil {
			t.Fatal(err)
		}
		for float64(m.Len()) < tc.load*float64(m.Slots()) {
			if err := m.Insert(rng.Uint64(), rng.IntN(4)); err != nil {
				t.Fatal(err)
			}
		}
		var maxLines int
		for range 20000 {
			h := rng.Uint64()
			set, lines := m.LookupLines(h)
			if want := m.Lookup(h); set != want {
				t.Fatalf("slots=%d p=%d: LookupLines' runs %v, Lookup's %v", tc.slots, tc.p, set, want)
			}
			words := wordsRead(m, h)
			lo, hi := words[0], words[0]
			distinct := map[uint64]bool{}
			for _, w := range words {
				lo, hi = min(lo, w), max(hi, w)
				distinct[w>>3] = true
			}
			if want := int(hi>>3 - lo>>3 + 1); lines != want {
				t.Fatalf("slots=%d p=%d load %.2f: %d lines, the words read (%d..%d) span %d", tc.slots, tc.p, tc.load, lines, lo, hi, want)
			}
			if lines != len(distinct) {
				t.Fatalf("slots=%d p=%d: %d lines, but the words read lie in %d", tc.slots, tc.p, lines, len(distinct))
			}
			maxLines = max(maxLines, lines)
		}
		if tc.load >= 0.9 && maxLines < 3 {
			t.Errorf("slots=%d p=%d load %.2f: no lookup read more than %d lines: the test never crossed blocks", tc.slots, tc.p, tc.load, maxLines)
		}
		m.Release()
	}
	var empty Maplet
	if _, lines := (&empty).LookupLines(1); lines != 0 {
		t.Errorf("an empty maplet's lookup read %d lines, want 0", lines)
	}
}
