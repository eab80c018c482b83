package keyspan

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/monbandb/monban/internal/base"
)

// TestSeekMatchesScan: Seek and SeekLE find what a linear scan finds.
func TestSeekMatchesScan(t *testing.T) {
	seeded(t, func(t *testing.T, rng *rand.Rand) {
		for range 2000 {
			s := Fragment(randTombstones(rng))
			for _, k := range probes {
				seek := slices.IndexFunc(s.spans, func(sp Span) bool { return bytes.Compare(sp.End, k) > 0 })
				if seek < 0 {
					seek = s.Len()
				}
				seekLE := -1
				for i, sp := range s.spans {
					if bytes.Compare(sp.Start, k) <= 0 {
						seekLE = i
					}
				}
				if got := s.Seek(k); got != seek {
					t.Fatalf("%v: Seek(%q) = %d, want %d", s.spans, k, got, seek)
				}
				if got := s.SeekLE(k); got != seekLE {
					t.Fatalf("%v: SeekLE(%q) = %d, want %d", s.spans, k, got, seekLE)
				}
			}
		}
	})
}

// TestOverlapsMatchesModel: Overlaps(lo, hi) says whether some tombstone
// covers a key of [lo, hi]. The model asks the probes, which include every
// endpoint: a tombstone reaching into [lo, hi] covers max(lo, Start),
// itself an endpoint or lo.
func TestOverlapsMatchesModel(t *testing.T) {
	seeded(t, func(t *testing.T, rng *rand.Rand) {
		for range 1000 {
			m := randTombstones(rng)
			s := Fragment(m)
			for _, lo := range probes {
				for _, hi := range probes {
					want := false
					for _, k := range probes {
						if bytes.Compare(lo, k) <= 0 && bytes.Compare(k, hi) <= 0 && len(m.seqs(k)) > 0 {
							want = true
						}
					}
					if got := s.Overlaps(lo, hi); got != want {
						t.Fatalf("tombstones %v: Overlaps(%q, %q) = %v, want %v", m, lo, hi, got, want)
					}
				}
			}
			start, end, ok := s.Bounds()
			if ok != (s.Len() > 0) || ok && (!bytes.Equal(start, s.At(0).Start) || !bytes.Equal(end, s.At(s.Len()-1).End)) {
				t.Fatalf("%v: Bounds() = %q, %q, %v", s.spans, start, end, ok)
			}
		}
	})
}

// point is one version of a user key.
type point struct {
	key []byte
	seq base.SeqNum
}

// TestIteratorSkipsCovered is the use Seek and SeekLE are for: an
// iterator over point versions, in key order, that keeps a span index and
// moves it only as keys cross span boundaries, hides exactly the versions
// the model says a visible tombstone deletes, in both directions.
func TestIteratorSkipsCovered(t *testing.T) {
	seeded(t, func(t *testing.T, rng *rand.Rand) {
		for range 1000 {
			m := randTombstones(rng)
			s := Fragment(m)
			var points []point
			for _, k := range probes {
				points = append(points, point{k, base.SeqNum(rng.IntN(maxTestSeq + 2))})
			}
			slices.SortFunc(points, func(a, b point) int { return bytes.Compare(a.key, b.key) })
			snap := snapshots()[rng.IntN(len(snapshots()))]

			var want [][]byte
			for _, p := range points {
				if tseq, ok := m.covering(p.key, snap); p.seq <= snap && (!ok || tseq < p.seq) {
					want = append(want, p.key)
				}
			}
			// visible decides p against the span the iterator is on, or
			// against none when it has run off the spans.
			visible := func(p point, s Spans, i int) bool {
				if p.seq > snap {
					return false
				}
				if i < 0 || i == s.Len() || !s.At(i).Contains(p.key) {
					return true
				}
				tseq, ok := s.At(i).Visible(snap)
				return !ok || tseq < p.seq
			}

			var fwd [][]byte
			i := s.Seek(points[0].key)
			for _, p := range points {
				for i < s.Len() && bytes.Compare(s.At(i).End, p.key) <= 0 {
					i++
				}
				if visible(p, s, i) {
					fwd = append(fwd, p.key)
				}
			}
			var bwd [][]byte
			j := s.SeekLE(points[len(points)-1].key)
			for _, p := range slices.Backward(points) {
				for j >= 0 && bytes.Compare(s.At(j).Start, p.key) > 0 {
					j--
				}
				if visible(p, s, j) {
					bwd = append(bwd, p.key)
				}
			}
			slices.Reverse(bwd)
			if !slices.EqualFunc(fwd, want, bytes.Equal) || !slices.EqualFunc(bwd, want, bytes.Equal) {
				t.Fatalf("tombstones %v, points %v at %d: forward %q, backward %q, want %q", m, points, snap, fwd, bwd, want)
			}
		}
	})
}

// TestSeekLongKeys: Seek searches ends abbreviated to eight bytes past
// the prefix every bound shares, and compares whole keys where those tie.
// Here the bounds share a 9-byte prefix, differ only past 8 more bytes or
// are prefixes of one another, and the probes fall between, on and beyond
// them, so the ties and the keys outside the shared prefix are all met.
// Find, which rejects on the abbreviated starts, must agree with a scan.
func TestSeekLongKeys(t *testing.T) {
	const stem = "user0042:" + "12345678"
	bounds := [][]byte{[]byte(stem), []byte(stem + "a"), []byte(stem + "a\x00"), []byte(stem + "ab"),
		[]byte(stem + "b"), []byte("user0042:12345679"), []byte("user0042:2")}
	probes := append(slices.Clone(bounds), []byte("user0042:"), []byte("user0041"), []byte("user0043"),
		[]byte(stem[:len(stem)-1]), []byte(stem+"\x00"), []byte(stem+"aa"), []byte(stem+"zz"), []byte{}, []byte("\xff"))
	seeded(t, func(t *testing.T, rng *rand.Rand) {
		for range 2000 {
			ts := make([]Tombstone, 1+rng.IntN(6))
			for i := range ts {
				a, b := rng.IntN(len(bounds)), rng.IntN(len(bounds))
				ts[i] = Tombstone{Start: bounds[min(a, b)], End: bounds[max(a, b)], Seq: base.SeqNum(1 + rng.IntN(9))}
			}
			s := Fragment(ts)
			for _, k := range probes {
				want := slices.IndexFunc(s.spans, func(sp Span) bool { return bytes.Compare(sp.End, k) > 0 })
				if want < 0 {
					want = s.Len()
				}
				if got := s.Seek(k); got != want {
					t.Fatalf("%v: Seek(%q) = %d, want %d", s.spans, k, got, want)
				}
				in := slices.IndexFunc(s.spans, func(sp Span) bool { return sp.Contains(k) })
				if sp, ok := s.Find(k); ok != (in >= 0) || ok && !bytes.Equal(sp.Start, s.spans[in].Start) {
					t.Fatalf("%v: Find(%q) = %v, %v; want span %d", s.spans, k, sp, ok, in)
				}
			}
		}
	})
}

// BenchmarkSeek is a Get's search of a memtable's tombstones: 1,000 short
// spans spread over 16-byte decimal keys, as kvbench -range_tombstones
// writes them, probed at random keys: Seek, and Find, the search a Get
// makes (Seek, then whether the span found holds the key).
func BenchmarkSeek(b *testing.B) {
	ts := make([]Tombstone, 1000)
	for i := range ts {
		k := fmt.Sprintf("%016d", i*2000)
		ts[i] = Tombstone{Start: []byte(k + "a"), End: []byte(k + "b"), Seq: base.SeqNum(i + 1)}
	}
	s := Fragment(ts)
	keys := make([][]byte, 4096)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "%016d", rand.IntN(2_000_000))
	}
	b.Run("Seek", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			s.Seek(keys[i%len(keys)])
		}
	})
	b.Run("Find", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			s.Find(keys[i%len(keys)])
		}
	})
}
