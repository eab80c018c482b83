package main

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
)

// The rangemiss workload's ranges and monban's range filter for them:
// rangeLen adjacent integers of a key's first 8 bytes, the keyed
// bijection of the index (keyGen), so present keys are n random points
// of 2^64 and a range drawn at random falls between them all over the
// key space, with nothing but a range filter to say it is empty.
// rangeFilterBits is the 16 bits per key, where an empty range of
// 32 passes a table's filter with probability at most 32/2^14.
const (
	rangeLen        = 32
	rangeFilterBits = 16
)

// RangeScanner is optional. Engines that implement it take part in the
// "rangemiss" workload; for the others that workload is skipped with a
// note.
type RangeScanner interface {
	// ScanRange visits every key in [lower, upper), touching each value,
	// and returns how many it visited.
	ScanRange(lower, upper []byte) (int, error)
	// RangeHow says how ScanRange bounds its iterator and which filter it
	// asks, for the phase's note, so that an engine without range filters
	// is never read as having them.
	RangeHow() string
}

// rangeBounds writes into lower and upper (each len keySize+1) the bounds
// of the keys whose first 8 bytes are x … x+rangeLen-1: x, and the least
// key above every 16-byte key of x+rangeLen-1 (8 bytes of 0xff and a
// zero after it). An upper bound of x+rangeLen as 8 bytes would hold the
// same keys, but where it ends in a zero byte a range filter, which sees
// a key as its first 8 bytes zero-padded, cannot tell a shorter key of
// x+rangeLen from it and must ask for that integer too.
func rangeBounds(lower, upper []byte, x uint64) ([]byte, []byte) {
	lower = binary.BigEndian.AppendUint64(lower[:0], x)
	upper = binary.BigEndian.AppendUint64(upper[:0], x+rangeLen-1)
	for range keySize - 8 {
		upper = append(upper, 0xff)
	}
	return lower, append(upper, 0)
}

// doRangeMiss runs m iterators, each over rangeLen adjacent integers at
// a random point; a random range of 32 holds one of a million present
// keys with probability about 2^-39, so none may visit a key.
func doRangeMiss(s RangeScanner, p *params) (phaseOutcome, error) {
	return doEmptyScans(p, wRangeMiss, s.RangeHow(), func() func(r *rand.Rand) (int, error) {
		lower, upper := make([]byte, 0, keySize+1), make([]byte, 0, keySize+1)
		return func(r *rand.Rand) (int, error) {
			lower, upper = rangeBounds(lower, upper, r.Uint64N(math.MaxUint64-rangeLen))
			return s.ScanRange(lower, upper)
		}
	})
}
