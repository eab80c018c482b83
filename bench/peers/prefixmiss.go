package main

import (
	"fmt"
	"math/rand/v2"
)

// prefixLen is the bytes of a key that form its prefix when prefixmiss
// runs: the keyed bijection of the index (keyGen), so every present key
// has a prefix of its own, and the prefix of an index never written
// (n and above) is held by no key, with nothing but a filter to say so,
// as it falls between present keys all over the key space.
const prefixLen = 8

// PrefixScanner is optional. Engines that implement it take part in the
// "prefixmiss" workload; for the others that workload is skipped with a
// note.
type PrefixScanner interface {
	// ScanPrefix visits every key that starts with prefix (len prefixLen),
	// touching each value, and returns how many it visited.
	ScanPrefix(prefix []byte) (int, error)
	// PrefixHow says how ScanPrefix bounds its iterator and which filter
	// it asks, for the phase's note, so that an engine without prefix
	// filters is never read as having them.
	PrefixHow() string
}

// doPrefixMiss runs m iterators, each over the prefix of a random index
// never written; none may visit a key.
func doPrefixMiss(s PrefixScanner, p *params) (phaseOutcome, error) {
	return doEmptyScans(p, wPrefixMiss, s.PrefixHow(), func() func(r *rand.Rand) (int, error) {
		k := make([]byte, keySize)
		return func(r *rand.Rand) (int, error) {
			return s.ScanPrefix(p.keys.key(k, uint64(p.n)+r.Uint64N(1<<62), false)[:prefixLen])
		}
	})
}

// doEmptyScans runs m iterators of workload on p's workers, none of which
// may visit a key: each worker makes its scan with newScan (buffers of
// its own) and calls it with the worker's RNG, which draws what to scan.
// how is the phase's note, which says how the engine bounds its
// iterators.
func doEmptyScans(p *params, workload, how string, newScan func() func(r *rand.Rand) (int, error)) (phaseOutcome, error) {
	out, err := parallel(p, p.m, func(w, lo, hi int) (phaseOutcome, error) {
		var o phaseOutcome
		r := phaseRNG(p.seed, workload, w)
		scan := newScan()
		for i := lo; i < hi; i++ {
			n, err := scan(r)
			if err != nil {
				return o, fmt.Errorf("%s #%d: %w", workload, i, err)
			}
			if n > 0 {
				o.bad++
			}
		}
		o.ops = int64(hi - lo)
		return o, nil
	})
	out.note = how
	if out.bad > 0 {
		out.note += fmt.Sprintf(" FOUND=%d", out.bad)
	}
	return out, err
}
