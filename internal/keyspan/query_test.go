package keyspan

import (
	"bytes"
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
