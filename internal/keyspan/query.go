package keyspan

import (
	"bytes"
	"slices"

	"github.com/monbandb/monban/internal/base"
)

// Every query is a binary search over the spans, whose Starts and Ends both
// strictly increase (invariant 1): a read costs O(log n) however many
// tombstones there are, and nothing at all when there are none.

// Seek returns the index of the first span with End > key: the span
// containing key if there is one, else the first span after key; Len()
// if none. A forward iterator over point keys seeks once, then steps the
// index forward as its keys pass each End.
func (s Spans) Seek(key []byte) int {
	if len(s.spans) == 0 {
		return 0
	}
	// Every End lies between the first Start and the last End, so all
	// carry the shared prefix: a key without it lies wholly before or
	// after every End.
	if !bytes.HasPrefix(key, s.shared) {
		if bytes.Compare(key, s.shared) < 0 {
			return 0
		}
		return len(s.spans)
	}
	return s.seek(key, abbreviate(key[len(s.shared):]))
}

// seek is Seek for a key with the shared prefix, a its abbreviation.
func (s Spans) seek(key []byte, a uint64) int {
	// Ends below a are below key, ends above it above key; only those
	// equal to it need the whole key compared, usually none.
	lo, _ := slices.BinarySearch(s.ends, a)
	for lo < len(s.spans) && s.ends[lo] == a && bytes.Compare(s.spans[lo].End, key) <= 0 {
		lo++
	}
	return lo
}

// Find returns the span containing key, and false if there is none.
func (s Spans) Find(key []byte) (Span, bool) {
	// Every key of every span carries the shared prefix (Seek).
	if len(s.spans) == 0 || !bytes.HasPrefix(key, s.shared) {
		return Span{}, false
	}
	a := abbreviate(key[len(s.shared):])
	i := s.seek(key, a)
	// spans[i] ends after key; it holds key if it starts at or before it,
	// which the abbreviations decide unless they tie.
	switch {
	case i == len(s.spans) || a < s.starts[i]:
		return Span{}, false
	case a == s.starts[i] && bytes.Compare(s.spans[i].Start, key) > 0:
		return Span{}, false
	}
	return s.spans[i], true
}

// SeekLE returns the index of the last span with Start <= key: the span
// containing key if there is one, else the last span before key; -1 if
// none. It is Seek's mirror for a backward iterator, which steps the index
// back as its keys pass each Start.
func (s Spans) SeekLE(key []byte) int {
	i, found := slices.BinarySearchFunc(s.spans, key, func(sp Span, k []byte) int { return bytes.Compare(sp.Start, k) })
	if found {
		return i
	}
	return i - 1
}

// Covering returns the newest sequence number at or below snapshot of any
// tombstone covering key, and false if none is visible there. A version of
// key at seq p, read at snapshot, is deleted exactly when Covering returns
// a seq above p.
func (s Spans) Covering(key []byte, snapshot base.SeqNum) (base.SeqNum, bool) {
	sp, ok := s.Find(key)
	if !ok {
		return 0, false
	}
	return sp.Visible(snapshot)
}

// Overlaps reports whether some span covers a key of the range [lo, hi],
// both bounds included, as in a table's Smallest and Largest
// (manifest.FileMetadata). It is false when lo > hi.
func (s Spans) Overlaps(lo, hi []byte) bool {
	if bytes.Compare(lo, hi) > 0 {
		return false
	}
	// The first span ending after lo is the first that can reach into the
	// range; it does if it starts no later than hi.
	i := s.Seek(lo)
	return i < len(s.spans) && bytes.Compare(s.spans[i].Start, hi) <= 0
}

// Bounds returns the smallest Start and the largest End (exclusive) of the
// spans, and false if there are none.
func (s Spans) Bounds() (start, end []byte, ok bool) {
	if len(s.spans) == 0 {
		return nil, nil, false
	}
	return s.spans[0].Start, s.spans[len(s.spans)-1].End, true
}
