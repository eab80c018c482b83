package filter

import (
	"fmt"
	"math"
	"testing"
)

// prefixLayout is one way to give a table's filter its keys' prefixes:
// what it costs in bytes per key and what its whole-key and prefix probes
// answer for absent keys and prefixes.
type prefixLayout struct {
	name                  string
	bytesPerKey           float64
	keyFPR, prefixFPR     float64
	keyProbe, prefixProbe func(uint64) bool
}

// TestPrefixLayouts measures, at 10 bits per key, the three ways to add
// prefixes to a table's filter against the filter of keys alone, for keys
// in groups of g per prefix: one filter of keys and prefixes sized for
// both (what sstable does), the same filter sized for the keys only, and
// a separate filter of the prefixes beside the keys' own. It bounds what
// sstable relies on: sized for both, whole-key probes answer "maybe" at
// the keys-only rate (within 15%), and so do prefix probes. Run with -v
// for the table in filter/README.md ("Prefixes").
func TestPrefixLayouts(t *testing.T) {
	const bpk = 10
	n, queries := 100_000, 200_000
	if testing.Short() || raceEnabled {
		n, queries = 20_000, 60_000
	}
	k := cacheLineProbesFor(bpk)
	open := func(hashes []uint64, entries int) CacheLine {
		lines := uint64(math.Ceil(float64(entries) * bpk / lineBits))
		f, err := OpenCacheLine(appendCacheLine(nil, lines, k, hashes))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	rate := func(probe func(uint64) bool, hash func(i int) uint64) float64 {
		maybe := 0
		for i := range queries {
			if probe(hash(i)) {
				maybe++
			}
		}
		return float64(maybe) / float64(queries)
	}
	var ak, ap testKey // absent keys, and absent prefixes (PrefixHash of their bytes)
	ak.hash('a', 1, 0)
	ap.hash('b', 1, 0)
	absentKey := func(i int) uint64 { return ak.next(uint64(i)) }
	absentPrefix := func(i int) uint64 { return prefixMix(ap.next(uint64(i))) }
	t.Logf("%d keys, %d bits/key, %d probes; %d absent keys and prefixes", n, bpk, k, queries)
	t.Logf("| keys/prefix | layout | bytes/key | whole-key FPR | prefix FPR |")
	for _, g := range []int{1, 4, 16, 64} {
		var keys, prefixes, both []uint64
		for i := range n {
			if i%g == 0 {
				p := PrefixHash(fmt.Appendf(nil, "p%08d", i/g))
				prefixes = append(prefixes, p)
				both = append(both, p)
			}
			h := Hash(fmt.Appendf(nil, "p%08d/%08d", i/g, i))
			keys = append(keys, h)
			both = append(both, h)
		}
		keysOnly := open(keys, len(keys))
		same := open(both, len(both))
		underSized := open(both, len(keys))
		separate := open(prefixes, len(prefixes))
		layouts := []prefixLayout{
			{name: "keys only", bytesPerKey: float64(keysOnly.Size()) / float64(n),
				keyProbe: keysOnly.MayContainHash},
			{name: "one filter, sized for keys and prefixes", bytesPerKey: float64(same.Size()) / float64(n),
				keyProbe: same.MayContainHash, prefixProbe: same.MayContainHash},
			{name: "one filter, sized for keys", bytesPerKey: float64(underSized.Size()) / float64(n),
				keyProbe: underSized.MayContainHash, prefixProbe: underSized.MayContainHash},
			{name: "separate prefix filter", bytesPerKey: float64(keysOnly.Size()+separate.Size()) / float64(n),
				keyProbe: keysOnly.MayContainHash, prefixProbe: separate.MayContainHash},
		}
		for i := range layouts {
			l := &layouts[i]
			l.keyFPR = rate(l.keyProbe, absentKey)
			prefixFPR := "-"
			if l.prefixProbe != nil {
				l.prefixFPR = rate(l.prefixProbe, absentPrefix)
				prefixFPR = fmt.Sprintf("%.4f", l.prefixFPR)
			}
			t.Logf("| %d | %s | %.3f | %.4f | %s |", g, l.name, l.bytesPerKey, l.keyFPR, prefixFPR)
		}
		base, sized := layouts[0].keyFPR, layouts[1]
		if math.Abs(sized.keyFPR-base) > 0.15*base || math.Abs(sized.prefixFPR-base) > 0.15*base {
			t.Errorf("%d keys per prefix: sized for both, whole-key FPR %.4f and prefix FPR %.4f, keys only %.4f",
				g, sized.keyFPR, sized.prefixFPR, base)
		}
	}
}
