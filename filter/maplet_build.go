package filter

import (
	"fmt"
	"slices"
	"unsafe"

	"github.com/monbandb/monban/internal/offheap"
)

// BuildMaplet returns a maplet holding the entries (hashes[i], runs[i]),
// built in one pass instead of an Insert each: the entries' slot values are
// sorted and appended in order (as Quotient.Merge does), so nothing shifts.
// It is how a maplet is rebuilt from the key hashes of a tree's tables, at
// Open or to get a grown maplet's false-positive rate back. The table has
// 2^qbits slots and does not grow: more entries than slots return an error
// wrapping ErrFull. The sort's scratch, 8 bytes per entry, lies outside the
// Go heap and is freed before it returns.
func BuildMaplet(qbits, payloadBits uint, lens []uint8, hashes []uint64, runs []uint8) (*Maplet, error) {
	if len(hashes) != len(runs) {
		return nil, fmt.Errorf("%w: BuildMaplet: %d hashes, %d runs", ErrIncompatible, len(hashes), len(runs))
	}
	m, err := NewMaplet(qbits, payloadBits, lens)
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
	scratch := offheap.New(8 * len(hashes))
	defer scratch.Release()
	fps := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(scratch.Bytes()))), len(hashes))
	for i, h := range hashes {
		r := int(runs[i])
		if m.CodeLen(r) == 0 {
			m.Release()
			return nil, fmt.Errorf("%w: BuildMaplet: entry %d, run %d", ErrNoRunCode, i, r)
		}
		fq, bits := m.split(h)
		fps[i] = fq<<m.p | m.payload(bits, r)
	}
	slices.Sort(fps)
	b := &qfBuilder{f: &m.qf}
	for _, fp := range fps {
		b.add(fp)
	}
	return m, nil
}
