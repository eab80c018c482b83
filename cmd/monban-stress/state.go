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

// readState reads every key of db twice, with one forward scan and with a
// Get per key index below keys, and returns the scan's contents. Where the
// two disagree, or the scan yields a key out of order or no key index
// names, problems says so: both are wrong answers from the DB. err is a
// read that failed, which no kill excuses either.
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
	return s, problems, nil
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
