package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/monbandb/monban/lsm"
)

// checkedKeys is the number of key indexes a run checks for -keys n: the n
// keys the workload writes, then n/8+1 that it only ever deletes, so that
// some deletes are of keys no filter has seen and any value that shows up
// there is unexpected.
func checkedKeys(n int) int { return n + n/8 + 1 }

// readState reads every key of db three times, with one forward scan, with
// a Get per key index below keys, and with iterators bounded to windows of
// rangeWindow keys (both bounds set: the range filters are asked), and
// returns the scan's contents. Where they disagree, or the scan yields a
// key out of order or no key index names, problems says so: both are
// wrong answers from the DB. err is a read that failed, which no kill
// excuses either.
func readState(db *lsm.DB, keys int) (s state, problems []string, err error) {
	s = state{}
	it := db.NewIter(nil)
	var prev []byte
	for k, v := range it.All() {
		i, ok := parseKey(k)
		switch {
		case prev != nil && bytes.Compare(prev, k) >= 0:
			problems = append(problems, fmt.Sprintf("scan: key %q after %q", k, prev))
		case !ok || i >= keys:
			problems = append(problems, fmt.Sprintf("scan: key %q was never written", k))
		default:
			s[i] = append([]byte{}, v...)
		}
		prev = append(prev[:0], k...)
	}
	if err := it.Close(); err != nil {
		return nil, nil, fmt.Errorf("scan: %w", err)
	}
	for i := range keys {
		v, err := db.Get(keyName(i))
		switch {
		case errors.Is(err, lsm.ErrNotFound):
			v = nil
		case err != nil:
			return nil, nil, fmt.Errorf("Get %s: %w", keyName(i), err)
		}
		if !sameState(v, s[i]) {
			problems = append(problems, fmt.Sprintf("key %d: Get says %s, the scan %s", i, describe(i, v), describe(i, s[i])))
		}
	}
	for lo := 0; lo < keys; lo += rangeWindow {
		hi := min(keys, lo+rangeWindow)
		it := db.NewIter(&lsm.IterOptions{LowerBound: keyName(lo), UpperBound: keyName(hi)})
		n := 0
		for k, v := range it.All() {
			i, ok := parseKey(k)
			if !ok || i < lo || i >= hi || !sameState(v, s[i]) {
				problems = append(problems, fmt.Sprintf("iterator [%d,%d): key %q holds %s, the scan %s", lo, hi, k, describe(i, v), describe(i, s[i])))
			}
			n++
		}
		if err := it.Close(); err != nil {
			return nil, nil, fmt.Errorf("iterator [%d,%d): %w", lo, hi, err)
		}
		if want := countIn(s, lo, hi); n != want {
			problems = append(problems, fmt.Sprintf("iterator [%d,%d): %d keys, the scan %d", lo, hi, n, want))
		}
	}
	return s, problems, nil
}

// rangeWindow is the width of readState's bounded iterators: three keys,
// so that many windows hold none and a range filter may rule most tables
// out of each.
const rangeWindow = 3

// countIn counts the keys of s in [lo, hi).
func countIn(s state, lo, hi int) int {
	n := 0
	for i := lo; i < hi; i++ {
		if s[i] != nil {
			n++
		}
	}
	return n
}

// digest is a hash of s, by which the child checks that it opens the state
// the parent verified: a difference between two clean opens of the same
// files is a bug the cycle's verification would miss on every key the
// child then overwrites.
func digest(s state, keys int) string {
	h := sha256.New()
	for i := range keys {
		if v := s[i]; v != nil {
			h.Write(binary.AppendUvarint(binary.AppendUvarint(nil, uint64(i)), uint64(len(v))))
			h.Write(v)
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
