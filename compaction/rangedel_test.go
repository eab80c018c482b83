package compaction

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/monbandb/monban/internal/base"
	"github.com/monbandb/monban/internal/keyspan"
)

// readWithSpans is what a reader at seq sees of ukey in entries with the
// range tombstones spans kept beside them: the newest visible version,
// unless a visible tombstone over ukey is newer; "below" for an old value
// under the inputs that nothing hides.
func readWithSpans(entries []base.InternalKey, spans keyspan.Spans, ukey string, seq base.SeqNum) string {
	t, _ := spans.Covering([]byte(ukey), seq)
	for _, k := range entries {
		if string(k.UserKey) == ukey && k.Seq() <= seq {
			if k.Kind() == base.KindDelete || k.Seq() < t {
				return ""
			}
			return fmt.Sprint(k.Seq())
		}
	}
	if t > 0 {
		return ""
	}
	return "below"
}

// TestIterRangeDelsMatchModel: with range tombstones, which the output
// keeps, every snapshot and current reads see the same before and after,
// and no kept version lies under a tombstone of its own stripe.
func TestIterRangeDelsMatchModel(t *testing.T) {
	for range 500 {
		seed := rand.Uint64()
		rng := rand.New(rand.NewPCG(seed, 1))
		var in []base.InternalKey
		var ts []keyspan.Tombstone
		seq := base.SeqNum(0)
		for range rng.IntN(40) {
			seq++
			switch r := rng.IntN(6); {
			case r == 0:
				lo := byte('a' + rng.IntN(5))
				ts = append(ts, keyspan.Tombstone{Start: []byte{lo}, End: []byte{lo + 1 + byte(rng.IntN(3))}, Seq: seq})
			default:
				kind := base.KindSet
				if r == 1 {
					kind = base.KindDelete
				}
				in = append(in, base.MakeInternalKey([]byte{byte('a' + rng.IntN(5))}, seq, kind))
			}
		}
		slices.SortFunc(in, base.Compare)
		spans := keyspan.Fragment(ts)
		var snaps []base.SeqNum
		for s := base.SeqNum(1); s <= seq; s++ {
			if rng.IntN(6) == 0 {
				snaps = append(snaps, s)
			}
		}
		it := NewIter(&sliceIter{keys: in}, snaps, nil)
		it.SetRangeDels(spans)
		var out []base.InternalKey
		for ok := it.First(); ok; ok = it.Next() {
			out = append(out, base.InternalKey{UserKey: append([]byte(nil), it.Key().UserKey...), Trailer: it.Key().Trailer})
		}
		for _, s := range append(slices.Clone(snaps), base.MaxSeqNum) {
			for c := byte('a'); c < 'f'; c++ {
				if want, got := readWithSpans(in, spans, string(c), s), readWithSpans(out, spans, string(c), s); want != got {
					t.Fatalf("seed %d: key %c at %d: input says %q, output %q\nin  %v\nout %v\nspans %v snaps %v", seed, c, s, want, got, in, out, ts, snaps)
				}
			}
		}
		for _, k := range out {
			if it.rangeDeleted(k) {
				t.Fatalf("seed %d: kept %v under a tombstone of its stripe", seed, k)
			}
		}
	}
}
