package main

import (
	"encoding/binary"
	"math/rand/v2"
)

// keySpace maps key numbers to keys. Key n is n in decimal, zero-padded to
// keySize bytes, or with bigEndian n as an 8-byte big-endian integer
// followed by keySize-8 zero bytes; either way keys sort as their numbers
// do. The written keys and
// the missing keys interleave in runs of group numbers: runs 0, 2, 4, …
// hold the written keys, the odd runs between them the missing ones, so
// missing keys fall inside every table's key range and nothing but a
// filter can rule them out without reading a data block. Without
// prefixes group is 1: the fills write the even numbers 0, 2, …
// 2·(num-1) and the odd numbers are missing. With -prefix_size p, group
// is 10^(keySize-p), the numbers that share a p-byte prefix: a run is
// one prefix, every written key's prefix holds group written keys (the
// last fewer) and every missing key's prefix holds none. For the range
// workloads group is -range_size and keys are big-endian: a missing run
// is an empty range of that many adjacent integers, and a range filter,
// which sees a key's first 8 bytes as an integer, can tell it from the
// written runs beside it (decimal keys of 16 bytes barely differ in
// their first 8).
type keySpace struct {
	num       int
	keySize   int
	group     uint64
	bigEndian bool
}

// present returns the number of the i-th written key.
func (k keySpace) present(i int) uint64 {
	n := uint64(i)
	return 2*(n/k.group)*k.group + n%k.group
}

// missing returns the number of the i-th absent key: present(i) moved
// into the run of missing keys just above its own.
func (k keySpace) missing(i int) uint64 { return k.present(i) + k.group }

// numbers returns present, or missing if missing.
func (k keySpace) numbers(missing bool) func(int) uint64 {
	if missing {
		return k.missing
	}
	return k.present
}

// runs returns the number of runs (prefixes, ranges) holding written
// keys; run j holds written keys j·group … and the missing run above it.
func (k keySpace) runs() int { return int((uint64(k.num) + k.group - 1) / k.group) }

// inRun returns the written keys run j holds.
func (k keySpace) inRun(j int) int { return int(min(k.group, uint64(k.num)-uint64(j)*k.group)) }

// key writes key n into dst (len keySize) without allocating.
func (k keySpace) key(dst []byte, n uint64) []byte {
	dst = dst[:k.keySize]
	if k.bigEndian {
		binary.BigEndian.PutUint64(dst, n)
		clear(dst[8:])
		return dst
	}
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = byte('0' + n%10)
		n /= 10
	}
	return dst
}

// batch returns n key buffers cut from one allocation, for key to fill.
func (k keySpace) batch(n int) [][]byte {
	buf := make([]byte, n*k.keySize)
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = buf[i*k.keySize : (i+1)*k.keySize : (i+1)*k.keySize]
	}
	return keys
}

// valueSource hands out value bytes: windows of one buffer, so making one
// costs nothing. As in db_bench, the buffer is made of 100-byte pieces, each
// a random prefix of ratio × 100 bytes repeated: at ratio 1 values are
// incompressible, at 0.5 a compressor halves them.
type valueSource struct {
	buf  []byte
	size int
}

func newValueSource(size int, ratio float64, seed uint64) *valueSource {
	r := rand.New(rand.NewPCG(seed, 0x76616c7565))
	buf := make([]byte, max(1<<20, 2*size))
	random := max(1, int(ratio*valuePiece))
	for i := range buf {
		if i%valuePiece < random {
			buf[i] = byte(r.Uint32())
		} else {
			buf[i] = buf[i-random]
		}
	}
	return &valueSource{buf: buf, size: size}
}

// valuePiece is the length of the buffer's pieces; values start at one,
// so each holds its own repeats.
const valuePiece = 100

// value returns the value for operation i. It aliases the buffer; the DB
// copies what it stores.
func (v *valueSource) value(i uint64) []byte {
	off := int(i*7919) % ((len(v.buf)-v.size)/valuePiece + 1) * valuePiece
	return v.buf[off : off+v.size]
}

// permutation returns 0..n-1 in the seeded random order fillrandom writes.
func permutation(n int, seed uint64) []uint32 {
	p := make([]uint32, n)
	for i := range p {
		p[i] = uint32(i)
	}
	r := rand.New(rand.NewPCG(seed, 0x7065726d))
	r.Shuffle(n, func(i, j int) { p[i], p[j] = p[j], p[i] })
	return p
}

// opRand is the random source of one thread of one workload: the same seed,
// workload and thread give the same operations, so a comparison run with
// filters off repeats exactly the lookups of the run with filters on.
func opRand(seed uint64, workload string, thread int) *rand.Rand {
	h := uint64(14695981039346656037)
	for i := 0; i < len(workload); i++ {
		h = (h ^ uint64(workload[i])) * 1099511628211
	}
	return rand.New(rand.NewPCG(seed^h, uint64(thread)))
}
