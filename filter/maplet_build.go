package filter

import (
	"fmt"
	"math/bits"
	"slices"
	"unsafe"

	"github.com/monbandb/monban/internal/offheap"
)

// BuildMaplet returns a maplet holding the entries (hashes[i], runs[i]),
// built in one pass instead of an Insert each: the entries' slot values are
// sorted and appended in order (as Quotient.Merge does), so nothing shifts.
// It is how a maplet is rebuilt from the key hashes of a tree's tables, at
// Open or to get a grown maplet's false-positive rate back. The table has
// the given slots and does not grow: more entries than slots return an error
// wrapping ErrFull. The sort's scratch, 8 bytes per entry, lies outside the
// Go heap and is freed before it returns: 16 bytes per entry, for the
// sort scatters the values by their top bits into a second array before
// sorting each bucket, about twice as fast as sorting them in one piece
// (BenchmarkMapletRebuild).
func BuildMaplet(slots uint64, payloadBits uint, lens []uint8, hashes []uint64, runs []uint8) (*Maplet, error) {
	if len(hashes) != len(runs) {
		return nil, fmt.Errorf("%w: BuildMaplet: %d hashes, %d runs", ErrIncompatible, len(hashes), len(runs))
	}
	m, err := NewMaplet(slots, payloadBits, lens)
	if err != nil {
		return nil, err
	}
	if uint64(len(hashes)) > m.qf.slots {
		m.Release()
		return nil, fmt.Errorf("%w: BuildMaplet: %d entries > %d slots", ErrFull, len(hashes), m.qf.slots)
	}
	if len(hashes) == 0 {
		return m, nil
	}
	scratch := offheap.New(16 * len(hashes))
	defer scratch.Release()
	both := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(scratch.Bytes()))), 2*len(hashes))
	fps, sorted := both[:len(hashes)], both[len(hashes):]
	for i, h := range hashes {
		r := int(runs[i])
		if m.CodeLen(r) == 0 {
			m.Release()
			return nil, fmt.Errorf("%w: BuildMaplet: entry %d, run %d", ErrNoRunCode, i, r)
		}
		fq, fp := m.split(h)
		fps[i] = fq<<m.p | m.payload(fp, r)
	}
	bucketSort(sorted, fps, uint(bits.Len64(m.qf.slots-1))+m.p)
	b := &qfBuilder{f: &m.qf}
	for _, fp := range sorted {
		b.add(fp)
	}
	return m, nil
}

// bucketSort writes the width-bit values of src to dst in ascending
// order: a counting pass over their top bits, a scatter into 2^16 buckets
// (of random values, about n/2^16 each), then a sort of each bucket in
// place, each small enough to stay in the cache.
func bucketSort(dst, src []uint64, width uint) {
	const bucketBits = 16
	shift := uint(0)
	if width > bucketBits {
		shift = width - bucketBits
	}
	var start [1<<bucketBits + 1]int
	for _, v := range src {
		start[v>>shift+1]++
	}
	for i := 1; i < len(start); i++ {
		start[i] += start[i-1]
	}
	next := start
	for _, v := range src {
		b := v >> shift
		dst[next[b]] = v
		next[b]++
	}
	for i := range 1 << bucketBits {
		slices.Sort(dst[start[i]:start[i+1]])
	}
}
